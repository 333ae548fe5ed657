// Package safefile opens the files of a skill folder for serving. It is
// the one place every read of a folder skill goes through:
//
//   - the folder is opened with os.Root, so no path or link leads out of it;
//   - the opened folder must be the one the scan read (same device and
//     inode): a skill folder swapped for a link, or replaced, is refused;
//   - files are opened with O_NONBLOCK and checked on the open handle, so a
//     FIFO, socket or device swapped in after the scan is refused at once
//     instead of blocking the reader;
//   - nothing is read here: callers read what they need (a range, a
//     stream) from the returned *os.File.
package safefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/loadout/loadout/skill"
)

// ID identifies a folder on disk: its device and inode. The zero ID is
// unknown, and is not checked.
type ID struct{ Dev, Ino uint64 }

// IDOf returns the ID of a stat result (the zero ID where the platform
// gives none).
func IDOf(fi fs.FileInfo) ID { return idOf(fi) }

// Stat returns the ID of the folder at path, following links.
func Stat(path string) ID {
	fi, err := os.Stat(path)
	if err != nil {
		return ID{}
	}
	return IDOf(fi)
}

// openFlags never block on a FIFO or device: an open of a FIFO without a
// writer returns at once, and the type check on the handle refuses it.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// Open opens rel, a clean slash path, inside the folder dir, which must
// still be the folder with identity want (unless want is zero). The result
// is a regular file; the caller closes it. Refusals are *skill.ServeError:
// CodeFolderChanged, CodeSymlinkEscapes, CodeNotRegular. A missing file
// or folder is an error wrapping fs.ErrNotExist.
func Open(dir string, want ID, rel string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if want != (ID{}) {
		fi, err := root.Stat(".")
		if err != nil {
			return nil, nil, err
		}
		if got := IDOf(fi); got != want {
			return nil, nil, &skill.ServeError{Code: skill.CodeFolderChanged, Path: rel,
				Msg: fmt.Sprintf("the skill folder %s is no longer the folder that was scanned (it was replaced, or is now a link elsewhere): %s is not served from it until the skill is scanned again", dir, rel)}
		}
	}
	return OpenIn(root, rel)
}

// OpenIn opens rel inside root: a regular file, never blocking on a FIFO
// or device, never leaving root. Refusals are *skill.ServeError.
func OpenIn(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, openFlags, 0)
	if err != nil {
		if IsEscape(err) {
			return nil, nil, &skill.ServeError{Code: skill.CodeSymlinkEscapes, Path: rel,
				Msg: fmt.Sprintf("%s is a symlink that leaves the skill folder; it is never served", rel)}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, NotRegular(rel, fi.Mode())
	}
	return f, fi, nil
}

// NotRegular is the refusal of a path that is not a regular file.
func NotRegular(rel string, mode fs.FileMode) *skill.ServeError {
	return &skill.ServeError{Code: skill.CodeNotRegular, Path: rel,
		Msg: fmt.Sprintf("%s is %s, not a regular file; it is never served", rel, Kind(mode))}
}

// Kind names a file mode for people: "a folder", "a named pipe (FIFO)", …
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// IsEscape reports whether err is os.Root's refusal of a path or link
// that leaves the root. The os package does not export that error, so
// this is the one place its text is matched.
func IsEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// File is an open regular file as a skill.Content.
type File struct {
	f    *os.File
	size int64
}

// Content wraps an open file (from Open) with its size at open time.
func Content(f *os.File, fi fs.FileInfo) *File { return &File{f: f, size: fi.Size()} }

// ReadAt reads from the open file; a read past the size seen at open time
// ends there, so a file that grows is not read beyond what was checked.
func (c *File) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.size {
		return 0, io.EOF
	}
	if rest := c.size - off; int64(len(p)) > rest {
		n, err := c.f.ReadAt(p[:rest], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return c.f.ReadAt(p, off)
}

// Size is the file's size when it was opened.
func (c *File) Size() int64 { return c.size }

// Close closes the file.
func (c *File) Close() error { return c.f.Close() }
