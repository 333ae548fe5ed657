package skill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// DefaultBodyFileMax bounds a BodyFile: 1 GiB, the bodies of some 300,000
// skills of 3 KB. Past it, bodies are kept in memory (BodyFile.Keep
// refuses with ErrBodyFileFull).
const DefaultBodyFileMax = 1 << 30

// ErrBodyFileFull is returned by BodyFile.Keep once the file holds its
// maximum.
var ErrBodyFileFull = errors.New("the body file is full")

// BodyFile keeps skill bodies outside the Go heap, for a server that must
// serve each skill's body as it was scanned (a SKILL.md edited into
// something broken keeps serving its last good version, body included)
// without holding every body in memory. Each body is appended, once, to
// one temporary file, unlinked as soon as it is created (on systems that
// allow it) so that nothing is left behind, whatever way the process
// ends; Skill.Body reads it back with one positioned read, which the page
// cache answers. The file only grows: a rescan appends only the bodies of
// SKILL.md files that changed (unchanged ones keep their place through
// source.Cache), and it is gone when the process closes it or ends.
// Safe for concurrent use.
type BodyFile struct {
	f    *os.File
	name string // removed at Close where it could not be unlinked at once
	max  int64

	mu   sync.Mutex
	size int64
	err  error // the first write error: every later Keep refuses
}

// NewBodyFile creates a body file in dir (os.TempDir() when ""), holding
// at most max bytes (DefaultBodyFileMax when max <= 0).
func NewBodyFile(dir string, max int64) (*BodyFile, error) {
	if max <= 0 {
		max = DefaultBodyFileMax
	}
	f, err := os.CreateTemp(dir, "loadout-bodies-*")
	if err != nil {
		return nil, fmt.Errorf("creating the body file: %w", err)
	}
	b := &BodyFile{f: f, max: max}
	if runtime.GOOS == "windows" || os.Remove(f.Name()) != nil {
		b.name = f.Name()
	}
	return b, nil
}

// Close closes (and, where it could not be unlinked at once, removes)
// the file. Skills whose bodies it holds cannot read them afterwards.
func (b *BodyFile) Close() error {
	err := b.f.Close()
	if b.name != "" {
		os.Remove(b.name)
	}
	return err
}

// Size is the number of bytes written.
func (b *BodyFile) Size() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size
}

// BodyRef is a body kept in a BodyFile; the zero value is no body.
type BodyRef struct {
	file *BodyFile
	off  int64
	n    int64
}

// Kept reports whether r refers to a body.
func (r BodyRef) Kept() bool { return r.file != nil }

// Len is the body's length in bytes.
func (r BodyRef) Len() int64 { return r.n }

// Read reads the body back.
func (r BodyRef) Read() (string, error) {
	if r.file == nil {
		return "", errors.New("no body kept")
	}
	if r.n == 0 {
		return "", nil
	}
	buf := make([]byte, r.n)
	if _, err := r.file.f.ReadAt(buf, r.off); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", fmt.Errorf("reading the kept body back: %w", err)
	}
	return string(buf), nil
}

// Keep appends body to the file.
func (b *BodyFile) Keep(body []byte) (BodyRef, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return BodyRef{}, b.err
	}
	if b.size+int64(len(body)) > b.max {
		return BodyRef{}, ErrBodyFileFull
	}
	if _, err := b.f.WriteAt(body, b.size); err != nil {
		b.err = fmt.Errorf("writing the body file: %w", err)
		return BodyRef{}, b.err
	}
	r := BodyRef{file: b, off: b.size, n: int64(len(body))}
	b.size += int64(len(body))
	return r, nil
}

// KeepEntry keeps the body of an entry file's bytes: what Parse would
// put in Document.Body, byte for byte.
func (b *BodyFile) KeepEntry(data []byte) (BodyRef, error) {
	_, body, _, err := splitBytes(data)
	if err != nil {
		return BodyRef{}, err
	}
	return b.Keep(body)
}
