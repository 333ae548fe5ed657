//go:build !linux

package source

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/loadout/loadout/internal/safefile"
)

// statHasCtime: the scan reads change times (see skill.Skill.Stamp).
const statHasCtime = false

type dirHandle struct {
	path    string
	entries []dirent
}

func openDir(path string) (*dirHandle, error) {
	// O_NONBLOCK: a FIFO swapped in for the folder fails ReadDir instead
	// of blocking the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	d := &dirHandle{path: path}
	for _, e := range list {
		t := typOther
		switch {
		case e.Type().IsRegular():
			t = typFile
		case e.Type().IsDir():
			t = typDir
		case e.Type()&fs.ModeSymlink != 0:
			t = typLink
		}
		d.entries = append(d.entries, dirent{name: e.Name(), typ: t})
	}
	sortEntries(d.entries)
	return d, nil
}

// openSub opens the folder name of d, following a link.
func (d *dirHandle) openSub(name string) (*dirHandle, error) {
	return openDir(d.path + string(filepath.Separator) + name)
}

func (d *dirHandle) close() {}

func fromInfo(fi fs.FileInfo) fileStat {
	s := fileStat{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
	s.ino = inodeOf(fi)
	return s
}

func (d *dirHandle) lstat(name string) (fileStat, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return fileStat{}, err
	}
	return fromInfo(fi), nil
}

func (d *dirHandle) statFollow(name string) (fileStat, error) {
	fi, err := os.Stat(filepath.Join(d.path, name))
	if err != nil {
		return fileStat{}, err
	}
	return fromInfo(fi), nil
}

// id is the identity of the folder, as the scan read it.
func (d *dirHandle) id() safefile.ID { return safefile.Stat(d.path) }

// readFile reads a small file of the folder, following links. The open
// does not block: a FIFO or device is refused on the handle, never read.
// A file over max bytes is refused before it is read.
func (d *dirHandle) readFile(name string, max int64) ([]byte, fileStat, error) {
	return d.readInto(name, max, nil, nil)
}

// readInto is readFile into buf (reused when it is large enough). With
// enough set, it stops at the first full buffer for which enough says the
// bytes read so far are all the caller needs (see the Linux version).
func (d *dirHandle) readInto(name string, max int64, buf []byte, enough func([]byte) bool) ([]byte, fileStat, error) {
	p := filepath.Join(d.path, name)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileStat{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileStat{}, err
	}
	st := fromInfo(fi)
	if !fi.Mode().IsRegular() {
		return nil, st, &fs.PathError{Op: "read", Path: p, Err: errNotRegular(fi.Mode())}
	}
	if fi.Size() > max {
		return nil, st, &fs.PathError{Op: "read", Path: p, Err: errTooBig(fi.Size(), max)}
	}
	data, err := readSized(f.Read, fi.Size(), max, buf, enough, func(n int64) error {
		return &fs.PathError{Op: "read", Path: p, Err: errTooBig(n, max)}
	})
	return data, st, err
}
