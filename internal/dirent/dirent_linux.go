//go:build linux

// Package dirent lists a folder with getdents64 into the caller's
// buffer, without allocating: discovery (package source) and the folder
// watch's polling (package watch) read every folder of a large tree this
// way.
package dirent

import (
	"bytes"
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"
)

// bufs are the buffers folders are listed through, one per Read at a
// time: 16 KiB holds a typical folder in one call.
var bufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// Read lists the open folder fd through a pooled buffer. It calls fn for
// every entry but "." and "..", with the entry's name and its type
// (unix.DT_REG, DT_DIR, DT_LNK, DT_UNKNOWN, ...). The name is a slice of
// the buffer, valid only during the call, and the byte after it is the
// NUL the kernel ended it with, so &name[0] can be handed to a system
// call as a C string. Read retries on EINTR and returns the first other
// error.
func Read(fd int, fn func(name []byte, typ uint8)) error {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	return readWith(fd, *bp, fn)
}

// readWith is Read through buf (a folder larger than buf takes more
// calls).
func readWith(fd int, buf []byte, fn func(name []byte, typ uint8)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		Parse(buf[:n], fn)
	}
}

// Parse calls fn for each linux_dirent64 record in b (ino u64, off s64,
// reclen u16, type u8, then the NUL-terminated name), as Read does. It
// stops at a record whose length does not fit, and skips one whose name
// is empty or not terminated.
func Parse(b []byte, fn func(name []byte, typ uint8)) {
	for len(b) >= 20 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 20 || reclen > len(b) {
			return
		}
		rec := b[:reclen]
		b = b[reclen:]
		name := rec[19:]
		end := bytes.IndexByte(name, 0)
		if end <= 0 {
			continue
		}
		name = name[:end]
		if name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
			continue
		}
		fn(name, rec[18])
	}
}
