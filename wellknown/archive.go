package wellknown

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/skill"
)

// archiveTime is the modification time of every archive entry, so the same
// skill always gives the same bytes (the zip export uses the same instant).
var archiveTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// tarball is a gzip-compressed ustar archive being written into memory:
// SKILL.md and every file at the root, regular files only, mode 0755 for
// executable files and 0644 for the rest, no owner names, a fixed time and
// a gzip header without name or time. Only ustar headers are written (no
// PAX or GNU extensions), because installers read the name and prefix
// fields and nothing else; a path that does not fit them is an error
// naming the path. Files are copied in, never held whole.
type tarball struct {
	buf bytes.Buffer
	gz  *gzip.Writer
	tw  *tar.Writer
}

// gzipPool keeps the archives' compressors: each holds about a megabyte of
// state, and making one per skill was 1.9 GB of allocation (and most of
// the garbage collector's work) for an index of 2,000 skills. A Reset
// writer writes the same bytes as a new one.
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // a valid level: no error
	return w
}}

func newTarball() *tarball {
	t := &tarball{}
	t.gz = gzipPool.Get().(*gzip.Writer)
	t.gz.Reset(&t.buf)
	t.tw = tar.NewWriter(t.gz)
	return t
}

// header starts a file of size bytes; its bytes follow through t.tw.
func (t *tarball) header(p string, size int64, exec bool) error {
	mode := int64(0o644)
	if exec {
		mode = 0o755
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: p, Size: size, Mode: mode,
		ModTime: archiveTime, Format: tar.FormatUSTAR}
	if err := t.tw.WriteHeader(h); err != nil {
		return &archivePathError{fmt.Errorf("%s cannot be stored in a ustar archive (it must be ASCII, with a last part of at most 100 bytes and the rest at most 155): %w", p, err)}
	}
	return nil
}

func (t *tarball) finish() ([]byte, error) {
	if err := t.tw.Close(); err != nil {
		return nil, err
	}
	if err := t.gz.Close(); err != nil {
		return nil, err
	}
	t.gz.Reset(nil)
	gzipPool.Put(t.gz)
	t.gz = nil
	return t.buf.Bytes(), nil
}

// archivePathError is a path a ustar header cannot hold: the skill stays
// out of the 0.2.0 index only.
type archivePathError struct{ error }

func (e *archivePathError) Unwrap() error { return e.error }

// writeArchive returns b as the archive a tarball writes.
func writeArchive(b *skill.Bundle) ([]byte, error) { return writeArchiveTo(newTarball(), b) }

func writeArchiveTo(t *tarball, b *skill.Bundle) ([]byte, error) {
	put := func(p string, data []byte, exec bool) error {
		if err := t.header(p, int64(len(data)), exec); err != nil {
			return err
		}
		_, err := t.tw.Write(data)
		return err
	}
	if err := put("SKILL.md", b.Content, false); err != nil {
		return nil, err
	}
	for _, f := range b.Files {
		if err := put(f.Path, f.Data, f.Executable); err != nil {
			return nil, err
		}
	}
	return t.finish()
}

// packed is what one pass over a skill's files found.
type packed struct {
	entryDigest string // "sha256:<hex>" of SKILL.md
	// archive is the tar.gz of a skill with supporting files; nil when it
	// has none, or when archiveErr says why it cannot be made.
	archive    []byte
	archiveErr error
	total      int64    // bytes of every file
	notText    []string // files that are not UTF-8
	bom        []string // files starting with a byte order mark
}

// errOverBytes is a skill whose files hold more than MaxBytes.
var errOverBytes = errors.New("over the installers' byte limit")

// pack reads every file of sk once, in pieces: SKILL.md, then the manifest
// in order. It hashes SKILL.md, writes the archive (when there are
// supporting files and archive is true) and checks each file is UTF-8
// text without a BOM (for the 0.1.0 index). Files are opened through the
// skill (sk.OpenWhole), so links out of the skill, special files, a
// swapped skill folder, files changed since the scan and files over the
// size cap are refused, and nothing is read whole into memory besides the
// compressed archive. More than MaxBytes in all is errOverBytes, found
// from the sizes before the bytes are read.
func pack(sk *skill.Skill, archive bool) (*packed, error) {
	p := &packed{}
	var tb *tarball
	if archive && len(sk.Files) > 0 {
		tb = newTarball()
	}
	var chk textCheck
	put := func(name, archName string, exec bool, h hash.Hash) error {
		c, err := sk.OpenWhole(name)
		if err != nil {
			return err
		}
		defer c.Close()
		p.total += c.Size()
		if p.total > MaxBytes {
			return errOverBytes
		}
		ws := []io.Writer{&chk}
		if h != nil {
			ws = append(ws, h)
		}
		if tb != nil {
			if err := tb.header(archName, c.Size(), exec); err != nil {
				p.archiveErr, tb = err, nil
			} else {
				ws = append(ws, tb.tw)
			}
		}
		chk.reset()
		if _, err := io.Copy(io.MultiWriter(ws...), io.NewSectionReader(c, 0, c.Size())); err != nil {
			return err
		}
		if !chk.valid() {
			p.notText = append(p.notText, archName)
		} else if chk.bom() {
			p.bom = append(p.bom, archName)
		}
		return nil
	}
	h := sha256.New()
	if err := put(sk.Entry, "SKILL.md", false, h); err != nil {
		return nil, err
	}
	p.entryDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	for _, f := range sk.Files {
		if err := put(f.Path, f.Path, f.Executable, nil); err != nil {
			return nil, err
		}
	}
	if tb != nil {
		data, err := tb.finish()
		if err != nil {
			return nil, err
		}
		p.archive = data
	}
	return p, nil
}

// textCheck is utf8.Valid and a BOM check over a stream written in
// pieces: a rune cut between two writes is checked whole.
type textCheck struct {
	bad     bool
	head    [3]byte
	headN   int
	pending []byte // an incomplete rune at the end of the last write
	buf     []byte
}

func (t *textCheck) reset() {
	t.bad, t.headN, t.pending = false, 0, t.pending[:0]
}

func (t *textCheck) Write(p []byte) (int, error) {
	if t.headN < len(t.head) {
		t.headN += copy(t.head[t.headN:], p)
	}
	if t.bad {
		return len(p), nil
	}
	b := p
	if len(t.pending) > 0 {
		t.buf = append(append(t.buf[:0], t.pending...), p...)
		b = t.buf
	}
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(b[:cut]) {
		t.bad = true
	}
	t.pending = append(t.pending[:0], b[cut:]...)
	return len(p), nil
}

func (t *textCheck) valid() bool { return !t.bad && len(t.pending) == 0 }

func (t *textCheck) bom() bool {
	return t.headN == 3 && t.head == [3]byte{0xef, 0xbb, 0xbf}
}
