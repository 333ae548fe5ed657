package skill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
)

// Content is one open file of a skill: its size and random access to its
// bytes, so a range is read without reading the rest. Close it when done.
type Content interface {
	io.ReaderAt
	io.Closer
	// Size is the file's size when it was opened.
	Size() int64
}

// Opener is a Reader that can open a file without reading it: ranged
// reads and streamed responses use it. Folder skills' readers implement it
// (through os.Root, refusing special files and a swapped skill folder);
// readers that do not are read whole and served from memory.
type Opener interface {
	Reader
	Open(path string) (Content, error)
}

// Codes of ServeError, besides CodeTooLarge and CodeSymlinkEscapes.
const (
	// CodeNotRegular: the path is a FIFO, socket, device or folder now,
	// not a regular file; it is never opened for reading.
	CodeNotRegular = "not-regular"
	// CodeFolderChanged: the skill folder is no longer the folder the scan
	// read (it was replaced, or is now a link elsewhere); nothing is served
	// from it until it is scanned again.
	CodeFolderChanged = "folder-changed"
	// CodeFileChanged: the file's size differs from the manifest made at
	// the scan; it is served again once the skill is scanned again.
	CodeFileChanged = "file-changed"
)

// ServeError says why a file of a skill is not served. Code is stable
// (CodeTooLarge, CodeNotRegular, CodeFolderChanged, CodeFileChanged,
// CodeSymlinkEscapes); Error is a sentence naming the file and what to do.
type ServeError struct {
	Code string
	Path string // the file, relative to the skill folder
	// Size and Limit are set for CodeTooLarge (Limit is the cap) and
	// CodeFileChanged (Limit is the size in the manifest).
	Size, Limit int64
	Msg         string
}

func (e *ServeError) Error() string { return e.Msg }

// TooLarge returns the refusal of a whole read of a file over limit.
func TooLarge(path string, size, limit int64) *ServeError {
	return &ServeError{Code: CodeTooLarge, Path: path, Size: size, Limit: limit,
		Msg: fmt.Sprintf("%s is %d bytes, over the %d-byte limit for serving a file whole: read it in ranges (read_skill_file with offset and length), or raise limits.maxFileSize", path, size, limit)}
}

// AsServeError returns the ServeError in err's chain, if any.
func AsServeError(err error) (*ServeError, bool) {
	var se *ServeError
	ok := errors.As(err, &se)
	return se, ok
}

type bytesContent struct{ *bytes.Reader }

func (bytesContent) Close() error { return nil }

// BytesContent serves data as a Content.
func BytesContent(data []byte) Content { return bytesContent{bytes.NewReader(data)} }

// Open opens one file of the skill (the entry file or a listed one; path
// must be clean) for reading in ranges, whatever its size. A listed file
// whose size is not the manifest's is refused with CodeFileChanged: it is
// not what the scan saw.
func (s *Skill) Open(path string) (Content, error) {
	if path != s.Entry {
		if _, ok := s.File(path); !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotListed}
		}
	}
	if s.reader == nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	var c Content
	if o, ok := s.reader.(Opener); ok {
		var err error
		if c, err = o.Open(path); err != nil {
			return nil, err
		}
	} else {
		data, err := s.reader.ReadFile(path)
		if err != nil {
			return nil, err
		}
		c = BytesContent(data)
	}
	if f, ok := s.File(path); ok && c.Size() != f.Size {
		c.Close()
		return nil, &ServeError{Code: CodeFileChanged, Path: path, Size: c.Size(), Limit: f.Size,
			Msg: fmt.Sprintf("%s changed on disk since the skill was scanned (%d bytes then, %d now); it is served again once the skill is scanned again (live reload, or a restart)", path, f.Size, c.Size())}
	}
	return c, nil
}

// OpenWhole opens one file to be read or streamed whole: as Open, and a
// file over MaxFileSize is refused (CodeTooLarge) before a byte is read.
func (s *Skill) OpenWhole(path string) (Content, error) {
	c, err := s.Open(path)
	if err != nil {
		return nil, err
	}
	if s.MaxFileSize > 0 && c.Size() > s.MaxFileSize {
		c.Close()
		return nil, TooLarge(path, c.Size(), s.MaxFileSize)
	}
	return c, nil
}

// readAll reads an open Content whole: exactly Size bytes.
func readAll(c Content) ([]byte, error) {
	data := make([]byte, c.Size())
	n, err := c.ReadAt(data, 0)
	if n == len(data) {
		return data, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF // the file shrank while it was read
	}
	return nil, err
}

// DigestOf returns "sha256:<hex>" of an open Content's bytes, read in
// pieces.
func DigestOf(c Content) (string, error) {
	h := sha256.New()
	bp := digestBufs.Get().(*[]byte)
	defer digestBufs.Put(bp)
	// io.Copy would make a 32 KiB buffer every call: neither side has a
	// method that copies without one.
	if _, err := io.CopyBuffer(h, io.NewSectionReader(c, 0, c.Size()), *bp); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// digestBufs are DigestOf's read buffers.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// BundleWithin reads the skill into a Bundle as Bundle does, but first
// checks the sizes the manifest lists against lim (zero fields take the
// defaults), so a skill over them is refused (a *CheckError with
// CodeTooLarge or CodeTooManyFiles naming the file) before anything is
// read. Exports use it.
func (s *Skill) BundleWithin(lim Limits) (*Bundle, error) {
	lim = lim.withDefaults()
	var problems []Diagnostic
	refuse := func(code, field, path, format string, args ...any) {
		problems = append(problems, Diagnostic{Severity: Error, Code: code, Field: field, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(s.Files) > lim.MaxFiles {
		refuse(CodeTooManyFiles, "files", "", "skill %q has %d files, over the limit of %d", s.Name, len(s.Files), lim.MaxFiles)
	}
	var total int64
	for i, f := range s.Files {
		total += f.Size
		if f.Size > lim.MaxFileSize {
			refuse(CodeTooLarge, fmt.Sprintf("files[%d]", i), f.Path, "%s is %d bytes, over the %d-byte limit per file", f.Path, f.Size, lim.MaxFileSize)
		}
	}
	if total > lim.MaxTotalSize {
		refuse(CodeTooLarge, "files", "", "skill %q is %d bytes in all, over the limit of %d", s.Name, total, lim.MaxTotalSize)
	}
	if len(problems) > 0 {
		return nil, &CheckError{Problems: problems}
	}
	c, err := s.Open(s.Entry)
	if err != nil {
		return nil, err
	}
	if c.Size() > lim.MaxFileSize || c.Size()+total > lim.MaxTotalSize {
		c.Close()
		return nil, &CheckError{Problems: []Diagnostic{{Severity: Error, Code: CodeTooLarge, Field: "content", Path: s.Entry,
			Message: fmt.Sprintf("%s is %d bytes, over the %d-byte limit per file (or the skill over %d bytes in all)", s.Entry, c.Size(), lim.MaxFileSize, lim.MaxTotalSize)}}}
	}
	c.Close()
	return s.Bundle()
}
