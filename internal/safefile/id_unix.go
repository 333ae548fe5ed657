//go:build unix

package safefile

import (
	"io/fs"
	"syscall"
)

func idOf(fi fs.FileInfo) ID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return ID{}
}
