//go:build linux

package source

import (
	"io"
	"io/fs"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	getdents "github.com/loadout/loadout/internal/dirent"
	"github.com/loadout/loadout/internal/safefile"
)

// On Linux a folder is read with one open, getdents64 and one close, and
// its files are stat'ed relative to the open folder, which saves a path
// walk and the extra fstat that os.Open makes.

// statHasCtime: the scan reads change times (see skill.Skill.Stamp).
const statHasCtime = true

type dirHandle struct {
	fd      int
	path    string
	entries []dirent
}

func openDir(path string) (*dirHandle, error) {
	return openDirAt(unix.AT_FDCWD, path, path)
}

// openSub opens the folder name of d (following a link, as opening its
// path does), relative to d's open handle: the kernel looks up one name,
// not every folder of the path again.
func (d *dirHandle) openSub(name string) (*dirHandle, error) {
	return openDirAt(d.fd, name, d.path+"/"+name)
}

// openDirAt opens and lists the folder name, relative to the folder dirfd
// (or the working folder, AT_FDCWD); path is how it is named in errors and
// to the caller.
func openDirAt(dirfd int, name, path string) (*dirHandle, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	d := &dirHandle{fd: fd, path: path}
	// The names are gathered in a pooled buffer, then copied out as one
	// string that the entries share: two allocations a folder, not one a
	// name and the slice's growth (a tenth of a scan's allocations).
	l := listings.Get().(*listing)
	err = getdents.Read(fd, func(name []byte, typ uint8) {
		var t entType
		switch typ {
		case syscall.DT_REG:
			t = typFile
		case syscall.DT_DIR:
			t = typDir
		case syscall.DT_LNK:
			t = typLink
		case syscall.DT_UNKNOWN:
			t = typUnknown
		default:
			t = typOther
		}
		l.names = append(l.names, name...)
		l.ends = append(l.ends, len(l.names))
		l.types = append(l.types, t)
	})
	if err == nil && len(l.ends) > 0 {
		names := string(l.names)
		d.entries = make([]dirent, len(l.ends))
		start := 0
		for i, end := range l.ends {
			d.entries[i] = dirent{name: names[start:end], typ: l.types[i]}
			start = end
		}
	}
	l.reset()
	if err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "readdirent", Path: path, Err: err}
	}
	sortEntries(d.entries)
	return d, nil
}

func (d *dirHandle) close() { syscall.Close(d.fd) }

// listing is a folder's entries as getdents gives them, before they are
// copied out; listings pools them. One grown past a large folder's size is
// dropped, not kept.
type listing struct {
	names []byte
	ends  []int
	types []entType
}

var listings = sync.Pool{New: func() any { return new(listing) }}

func (l *listing) reset() {
	if cap(l.names) > 64<<10 || cap(l.ends) > 4096 {
		return
	}
	l.names, l.ends, l.types = l.names[:0], l.ends[:0], l.types[:0]
	listings.Put(l)
}

func toStat(st *unix.Stat_t) fileStat {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFREG:
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	default:
		mode |= fs.ModeIrregular
	}
	return fileStat{size: st.Size, mode: mode, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino)}
}

// lstat stats an entry without following a link.
func (d *dirHandle) lstat(name string) (fileStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fileStat{}, &fs.PathError{Op: "lstat", Path: d.path + "/" + name, Err: err}
		}
		return toStat(&st), nil
	}
}

// id is the identity of the open folder, as the scan read it.
func (d *dirHandle) id() safefile.ID {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return safefile.ID{}
	}
	return safefile.ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// readFile reads a small file of the folder (following links) with one
// open, fstat, read and close. The open does not block (O_NONBLOCK): a
// FIFO or device is refused on the handle, never read. A file over max
// bytes is refused before it is read.
func (d *dirHandle) readFile(name string, max int64) ([]byte, fileStat, error) {
	return d.readInto(name, max, nil, nil)
}

// readInto is readFile into buf (reused when it is large enough; nil makes
// a buffer of the file's size). With enough set, it stops at the first
// full buffer for which enough says the bytes read so far are all the
// caller needs, and returns that prefix of the file: the buffer starts at
// readChunk bytes and doubles, so enough is called O(log size) times.
func (d *dirHandle) readInto(name string, max int64, buf []byte, enough func([]byte) bool) ([]byte, fileStat, error) {
	fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: d.path + "/" + name, Err: err}
	}
	defer syscall.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "stat", Path: d.path + "/" + name, Err: err}
	}
	fst := toStat(&st)
	if !fst.isRegular() {
		return nil, fst, &fs.PathError{Op: "read", Path: d.path + "/" + name, Err: errNotRegular(fst.mode)}
	}
	if fst.size > max {
		return nil, fst, &fs.PathError{Op: "read", Path: d.path + "/" + name, Err: errTooBig(fst.size, max)}
	}
	path := d.path + "/" + name
	read := func(b []byte) (int, error) {
		for {
			n, err := syscall.Read(fd, b)
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil:
				return 0, &fs.PathError{Op: "read", Path: path, Err: err}
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}
	data, err := readSized(read, fst.size, max, buf, enough, func(n int64) error {
		return &fs.PathError{Op: "read", Path: path, Err: errTooBig(n, max)}
	})
	return data, fst, err
}

// statFollow stats an entry following links, as os.Stat does.
func (d *dirHandle) statFollow(name string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, 0); err != nil {
		return fileStat{}, &fs.PathError{Op: "stat", Path: d.path + "/" + name, Err: err}
	}
	return toStat(&st), nil
}
