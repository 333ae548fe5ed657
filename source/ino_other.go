//go:build !linux && !windows

package source

import (
	"io/fs"
	"syscall"
)

// inodeOf is the file's inode number, or 0 where the system gives none.
func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
