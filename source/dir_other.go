//go:build !linux

package source

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

type dirHandle struct {
	path    string
	entries []dirent
}

func openDir(path string) (*dirHandle, error) {
	f, err := os.Open(path)
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

func (d *dirHandle) close() {}

func fromInfo(fi fs.FileInfo) fileStat {
	s := fileStat{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = uint64(st.Ino)
	}
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

func (d *dirHandle) readFile(name string) ([]byte, fileStat, error) {
	p := filepath.Join(d.path, name)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fileStat{}, err
	}
	data, err := os.ReadFile(p)
	return data, fromInfo(fi), err
}
