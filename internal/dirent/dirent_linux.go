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

// getdents is the system call; tests count and fake its answers.
var getdents = unix.Getdents

// readWith is Read through buf (a folder larger than buf takes more
// calls).
func readWith(fd int, buf []byte, fn func(name []byte, typ uint8)) error {
	for {
		n, err := getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		if next, ok := parseRecords(buf[:n], fn); ok && atEnd(next) {
			// The last entry says nothing follows: the call that would
			// return 0 is saved, one in two of a small folder's.
			return nil
		}
	}
}

// atEnd reports whether off, the d_off of a listing's last record (the
// position of the entry after it), is the position ext4, btrfs, XFS and
// tmpfs mark the end of a folder with: INT32_MAX, or INT64_MAX for
// ext4's 64-bit hashes. No entry sits there: ext4 never gives a name
// that hash, and the others number entries far below it. Any other
// position, or a file system that ends otherwise (/proc numbers its
// entries), costs only the one more call that finds the end.
func atEnd(off uint64) bool {
	return off == 1<<31-1 || off == 1<<63-1
}

// Parse calls fn for each linux_dirent64 record in b (ino u64, off s64,
// reclen u16, type u8, then the NUL-terminated name), as Read does. It
// stops at a record whose length does not fit, and skips one whose name
// is empty or not terminated.
func Parse(b []byte, fn func(name []byte, typ uint8)) { parseRecords(b, fn) }

// parseRecords is Parse, and returns the last record's d_off, with ok false
// when a record did not fit (the listing is not trusted to be whole).
func parseRecords(b []byte, fn func(name []byte, typ uint8)) (next uint64, ok bool) {
	for len(b) >= 20 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 20 || reclen > len(b) {
			return 0, false
		}
		rec := b[:reclen]
		b = b[reclen:]
		next = binary.NativeEndian.Uint64(rec[8:16])
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
	return next, len(b) == 0
}
