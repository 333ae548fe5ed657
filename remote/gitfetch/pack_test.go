package gitfetch

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/remote"
)

// packBuilder writes a pack stream by hand, so that the tests can declare
// what no git binary would write (a 1 GiB object of 20 bytes, a delta
// that makes an object larger than its limit).
type packBuilder struct {
	buf     bytes.Buffer
	offsets []int
	count   int
}

func (b *packBuilder) header(typ uint8, size int64) {
	c := typ<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		b.buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b.buf.WriteByte(c)
}

func deflate(data []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// object adds a whole object of type typ holding data.
func (b *packBuilder) object(typ uint8, data []byte) {
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	b.header(typ, int64(len(data)))
	b.buf.Write(deflate(data))
}

// declared adds an object that declares size bytes but holds data (the
// transfer is meant to stop at its header).
func (b *packBuilder) declared(typ uint8, size int64, data []byte) {
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	b.header(typ, size)
	b.buf.Write(deflate(data))
}

func varint(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// ofsDelta adds a delta of the object at index base that makes an object
// of result bytes by copying the base's first byte over and over.
func (b *packBuilder) ofsDelta(base int, baseSize, result int64) {
	at := b.buf.Len()
	b.offsets = append(b.offsets, at)
	b.count++
	var d []byte
	d = append(d, varint(baseSize)...)
	d = append(d, varint(result)...)
	for left := result; left > 0; {
		n := min(left, 1)
		d = append(d, 0x90, byte(n)) // copy n bytes from offset 0
		left -= n
		if len(d) > 64 {
			break // the rest never matters: the header refuses it
		}
	}
	b.header(objOfsDelta, int64(len(d)))
	rel := int64(at - b.offsets[base])
	// gitformat-pack's offset encoding.
	enc := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		enc = append([]byte{byte(0x80 | rel&0x7f)}, enc...)
	}
	b.buf.Write(enc)
	b.buf.Write(deflate(d))
}

func (b *packBuilder) bytes() []byte {
	var h [12]byte
	copy(h[:], "PACK")
	binary.BigEndian.PutUint32(h[4:], 2)
	binary.BigEndian.PutUint32(h[8:], uint32(b.count))
	out := append(h[:], b.buf.Bytes()...)
	for i := range b.offsets {
		b.offsets[i] += 12
	}
	b.buf.Reset()
	return append(out, make([]byte, 20)...) // the checksum is go-git's to check
}

// sink records what the guard lets through.
type sink struct {
	bytes.Buffer
	closed bool
}

func (s *sink) Close() error { s.closed = true; return nil }

// feed writes pack to a guard in chunks of n bytes and returns the error
// and what reached go-git's side.
func feed(t *testing.T, pack []byte, n int, lim packLimits) (error, []byte) {
	t.Helper()
	out := &sink{}
	g := newPackGuard(out, lim)
	var err error
	for len(pack) > 0 && err == nil {
		k := min(n, len(pack))
		_, err = g.Write(pack[:k])
		pack = pack[k:]
	}
	cerr := g.Close()
	if err == nil {
		err = cerr
	}
	if !out.closed {
		t.Error("the guard did not close go-git's writer")
	}
	return err, out.Bytes()
}

func testLimits() packLimits {
	return packLimits{fileBytes: 1000, blobTotal: 5000, metaObject: 500, metaTotal: 800, objects: 10, packBytes: 1 << 20}
}

func wantPackLimit(t *testing.T, err error, want string) {
	t.Helper()
	var le *packLimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T), want a pack limit error", err, err)
	}
	if !strings.Contains(le.msg, want) {
		t.Errorf("error %q does not say %q", le.msg, want)
	}
}

// TestPackGuard: an object over a limit stops the stream before go-git
// sees its header, at every chunk size; at the limit exactly it passes.
func TestPackGuard(t *testing.T) {
	blob := bytes.Repeat([]byte("a"), 1000)
	cases := []struct {
		name  string
		build func(b *packBuilder) int // returns the index of the refused object, or -1
		want  string
	}{
		{"blob at the limit", func(b *packBuilder) int {
			b.object(objBlob, blob)
			b.object(objTree, bytes.Repeat([]byte("t"), 500))
			return -1
		}, ""},
		{"blob over the limit", func(b *packBuilder) int {
			b.object(objBlob, []byte("x"))
			b.declared(objBlob, 1001, []byte("short"))
			return 1
		}, "object 2 of the pack is a file of 1001 bytes, over the limit of 1000 bytes for one file (remote.maxFileSize)"},
		{"2 GiB blob of zeros", func(b *packBuilder) int {
			b.declared(objBlob, 2<<30, make([]byte, 64))
			return 0
		}, "file of 2147483648 bytes"},
		{"tree over its limit", func(b *packBuilder) int {
			b.declared(objTree, 501, nil)
			return 0
		}, "tree of 501 bytes, over the limit of 500"},
		{"delta making a file over the limit", func(b *packBuilder) int {
			b.object(objBlob, []byte("z"))
			b.ofsDelta(0, 1, 1001)
			return 1
		}, "object 2 of the pack is a file of 1001 bytes"},
		{"delta making a file at the limit", func(b *packBuilder) int {
			b.object(objBlob, []byte("z"))
			b.ofsDelta(0, 1, 40) // small enough to be written whole
			return -1
		}, ""},
		{"delta of a tree counts as a tree", func(b *packBuilder) int {
			b.object(objTree, []byte("z"))
			b.ofsDelta(0, 1, 501)
			return 1
		}, "tree of 501 bytes"},
		{"files over the total", func(b *packBuilder) int {
			for range 5 {
				b.object(objBlob, blob)
			}
			b.declared(objBlob, 1, nil)
			return 5
		}, "the files of the pack are over 5000 bytes"},
		{"trees over the total", func(b *packBuilder) int {
			b.object(objTree, bytes.Repeat([]byte("t"), 500))
			b.declared(objCommit, 301, nil)
			return 1
		}, "trees and commits of the pack are over 800 bytes"},
		{"files at the total", func(b *packBuilder) int {
			for range 5 {
				b.object(objBlob, blob)
			}
			b.object(objBlob, nil)
			return -1
		}, ""},
		{"trees at the total", func(b *packBuilder) int {
			b.object(objTree, bytes.Repeat([]byte("t"), 500))
			b.object(objCommit, bytes.Repeat([]byte("c"), 300))
			return -1
		}, ""},
		{"objects at the limit", func(b *packBuilder) int {
			for range 10 {
				b.object(objBlob, []byte("x"))
			}
			return -1
		}, ""},
		{"delta of a delta of a tree counts as a tree", func(b *packBuilder) int {
			b.object(objTree, []byte("z"))
			b.ofsDelta(0, 1, 2)
			b.ofsDelta(1, 2, 501)
			return 2
		}, "object 3 of the pack is a tree of 501 bytes"},
		{"delta far from its base", func(b *packBuilder) int {
			far := make([]byte, 900)
			for i := range far {
				far[i] = byte(i*7919 + i*i)
			}
			b.object(objTree, []byte("z"))
			b.object(objBlob, far) // incompressible: the delta's base is 900+ bytes back
			b.ofsDelta(0, 1, 501)
			return 2
		}, "object 3 of the pack is a tree of 501 bytes"},
		{"too many objects", func(b *packBuilder) int {
			for range 11 {
				b.object(objBlob, []byte("x"))
			}
			return 0
		}, "the pack holds 11 objects, more than 10"},
	}
	for _, tc := range cases {
		for _, chunk := range []int{1, 7, 4096} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, chunk), func(t *testing.T) {
				b := &packBuilder{}
				refused := tc.build(b)
				pack := b.bytes()
				err, out := feed(t, pack, chunk, testLimits())
				if refused < 0 {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if !bytes.Equal(out, pack) {
						t.Fatalf("go-git got %d bytes of %d", len(out), len(pack))
					}
					return
				}
				wantPackLimit(t, err, tc.want)
				// go-git may have the first bytes of the refused header
				// (those in the chunks before), never all of it; of a
				// delta, never more than the start of its data.
				end := 12 // the object count is in the pack's header
				switch {
				case strings.Contains(tc.name, "too many"):
				case strings.Contains(tc.name, "delta"):
					end = b.offsets[refused] + 30
				default:
					end = b.offsets[refused] + 1
					for h := pack[b.offsets[refused]]; h&0x80 != 0; h = pack[end-1] {
						end++
					}
				}
				if len(out) >= end {
					t.Errorf("go-git got %d bytes; the refused object's header ends at %d", len(out), end)
				}
			})
		}
	}
}

// TestPackGuardMalformed: what the guard cannot read stops the transfer.
func TestPackGuardMalformed(t *testing.T) {
	for name, tc := range map[string]struct {
		pack []byte
		says string
	}{
		"not a pack":    {[]byte("HTTP/1.1 200 OK\r\n\r\n"), "does not begin with PACK"},
		"PACX":          {append([]byte("PACX\x00\x00\x00\x02\x00\x00\x00\x01"), make([]byte, 40)...), "does not begin with PACK"},
		"version 9":     {append([]byte("PACK\x00\x00\x00\x09\x00\x00\x00\x01"), make([]byte, 40)...), "version 9"},
		"longer object": {func() []byte { b := &packBuilder{}; b.declared(objBlob, 3, []byte("four")); return b.bytes() }(), "declares 3 bytes and inflates to 4"},
		"shorter":       {func() []byte { b := &packBuilder{}; b.declared(objBlob, 5, []byte("four")); return b.bytes() }(), "declares 5 bytes and inflates to 4"},
		"bad type":      {func() []byte { b := &packBuilder{}; b.declared(5, 1, []byte("x")); return b.bytes() }(), "has type 5"},
		"bad base": {func() []byte {
			b := &packBuilder{}
			b.object(objBlob, []byte("z"))
			b.ofsDelta(0, 1, 2)
			p := b.bytes()
			// Point the delta one byte further back than the blob.
			p[b.offsets[1]+1]++
			return p
		}(), "where no object begins"},
	} {
		t.Run(name, func(t *testing.T) {
			err, _ := feed(t, tc.pack, 5, testLimits())
			if err == nil || !strings.Contains(err.Error(), "malformed pack") || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want a malformed pack that says %q", err, tc.says)
			}
		})
	}
	// A pack cut short is go-git's to report: the guard says nothing.
	b := &packBuilder{}
	b.object(objBlob, []byte("whole"))
	pack := b.bytes()
	if err, out := feed(t, pack[:len(pack)-25], 3, testLimits()); err != nil || len(out) != len(pack)-25 {
		t.Errorf("a cut pack: %v, %d bytes passed", err, len(out))
	}
}

// TestPackBytesLimit: the bytes transferred are bounded too (a zlib
// stream may pad nothing out to any length).
func TestPackBytesLimit(t *testing.T) {
	b := &packBuilder{}
	b.object(objBlob, bytes.Repeat([]byte("q"), 900))
	pack := b.bytes()
	lim := testLimits()
	lim.packBytes = int64(len(pack))
	if err, _ := feed(t, pack, 100, lim); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	lim.packBytes--
	err, _ := feed(t, pack, 100, lim)
	wantPackLimit(t, err, fmt.Sprintf("the pack is over %d bytes", lim.packBytes))
}

// zeroRepo makes a bare repository under fx.root whose main branch holds
// SKILL.md and one file of size zero bytes, with git fast-import (which
// streams a large blob into a pack without holding it).
func zeroRepo(t testing.TB, fx *fixture, size int64) string {
	t.Helper()
	cmd := exec.Command("git", "-c", "core.compression=1", "fast-import", "--quiet")
	cmd.Dir = fx.bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+fx.bare)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: zero\ndescription: a file of zeros\n---\nzeros\n"
	fmt.Fprintf(stdin, "blob\nmark :1\ndata %d\n%s\n", len(skill), skill)
	fmt.Fprintf(stdin, "blob\nmark :2\ndata %d\n", size)
	if _, err := io.CopyN(stdin, zeroReader{}, size); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(stdin, "\ncommit refs/heads/main\ncommitter t <t@example.com> 1700000000 +0000\ndata 5\nbomb\nM 100644 :1 zero/SKILL.md\nM 100644 :2 zero/zeros.bin\n\n")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, stderr.Bytes())
	}
	return fx.git(fx.bare, "rev-parse", "refs/heads/main")
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestZeroBomb: a small repository holding a file of 256 MiB of zeros is
// refused over HTTP while its pack streams in, naming the limit, without
// inflating the file: far less is allocated than the file's size.
func TestZeroBomb(t *testing.T) {
	fx := newFixture(t)
	rev := zeroRepo(t, fx, 256<<20)
	loc := fx.serve("", false)
	f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dir := filepath.Join(t.TempDir(), "snap")
	_, err := f.Fetch(context.Background(), rev, dir, remote.DefaultLimits)
	runtime.ReadMemStats(&after)
	wantCode(t, err, remote.CodeLimit)
	if !strings.Contains(err.Error(), "268435456 bytes, over the limit of 10485760 bytes for one file (remote.maxFileSize)") {
		t.Errorf("error does not name the size and the limit: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("refusing a file of 256 MiB allocated %d MB", alloc>>20)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the snapshot folder was made")
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	if len(ents) != 0 {
		t.Errorf("the fetch left %d entries behind (%s…)", len(ents), ents[0].Name())
	}
}

// TestNewPackLimits: a commit's pack is held to the snapshot's limits; a
// history's totals (not its one-object bounds) are four times as large;
// the object count is four per file, at least 1,000.
func TestNewPackLimits(t *testing.T) {
	one := newPackLimits(remote.Limits{}, false)
	want := packLimits{fileBytes: 10 << 20, blobTotal: 512 << 20, metaObject: 16 << 20, metaTotal: 64 << 20, objects: 80000, packBytes: 512<<20 + 64<<20 + 8<<20}
	if one != want {
		t.Errorf("a commit's limits %+v, want %+v", one, want)
	}
	hist := newPackLimits(remote.Limits{}, true)
	want = packLimits{fileBytes: 10 << 20, blobTotal: 2048 << 20, metaObject: 16 << 20, metaTotal: 256 << 20, objects: 320000, packBytes: 2048<<20 + 256<<20 + 32<<20}
	if hist != want {
		t.Errorf("a history's limits %+v, want %+v", hist, want)
	}
	if got := newPackLimits(remote.Limits{MaxFiles: 249}, false).objects; got != 1000 {
		t.Errorf("249 files allow %d objects, want the minimum 1000", got)
	}
	if got := newPackLimits(remote.Limits{MaxFiles: 251}, false).objects; got != 1004 {
		t.Errorf("251 files allow %d objects, want 1004", got)
	}
}

// TestPackGuardDeltas: a delta's own data is bounded (go-git holds it
// while applying it); a ref delta, whose base the guard cannot type,
// counts as a file; version 3 packs are read.
func TestPackGuardDeltas(t *testing.T) {
	lim := testLimits()
	b := &packBuilder{}
	b.object(objBlob, []byte("z"))
	// A ref delta making 1001 bytes: over the file limit, not the tree's.
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	d := append(append(varint(1), varint(1001)...), 0x90, 1)
	b.header(objRefDelta, int64(len(d)))
	b.buf.Write(make([]byte, 20))
	b.buf.Write(deflate(d))
	err, _ := feed(t, b.bytes(), 64, lim)
	wantPackLimit(t, err, "object 2 of the pack is a file of 1001 bytes")

	// A delta whose data alone is over max(file, tree) limits.
	b = &packBuilder{}
	b.object(objBlob, []byte("z"))
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	b.header(objRefDelta, 1001)
	b.buf.Write(make([]byte, 20))
	b.buf.Write(deflate([]byte{1, 1}))
	err, _ = feed(t, b.bytes(), 64, lim)
	wantPackLimit(t, err, "is a delta of 1001 bytes, over the limit of 1000")

	// Version 3, and an empty object.
	b = &packBuilder{}
	b.object(objBlob, nil)
	p := b.bytes()
	p[7] = 3
	if err, out := feed(t, p, 5, lim); err != nil || !bytes.Equal(out, p) {
		t.Errorf("a version 3 pack: %v", err)
	}
	// A size past 2^60: nine bytes of continuation, then 1 at bit 60.
	p = append([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\xbf"), bytes.Repeat([]byte{0x80}, 8)...)
	if err, _ := feed(t, append(p, 1), 5, lim); err == nil || !strings.Contains(err.Error(), "more than 2^60 bytes") {
		t.Errorf("an overlong size: %v", err)
	}
}

// refDelta adds a ref delta (its base named by a hash of zeros) whose own
// data is d, declared as size bytes.
func (b *packBuilder) refDelta(size int64, d []byte) {
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	b.header(objRefDelta, size)
	b.buf.Write(make([]byte, 20))
	b.buf.Write(deflate(d))
}

// TestPackGuardDeltaAtOwnLimit: a delta whose own data is exactly
// max(file, tree limit) bytes is read; one byte more is refused (the case
// in TestPackGuardDeltas).
func TestPackGuardDeltaAtOwnLimit(t *testing.T) {
	d := append(varint(1), varint(989)...) // 3 bytes: base 1, result 989
	for range 7 {
		d = append(d, 127) // insert the next 127 bytes
		d = append(d, bytes.Repeat([]byte("i"), 127)...)
	}
	d = append(d, 100)
	d = append(d, bytes.Repeat([]byte("j"), 100)...)
	if len(d) != 1000 {
		t.Fatalf("the delta is %d bytes, want 1000", len(d))
	}
	b := &packBuilder{}
	b.object(objBlob, []byte("z"))
	b.refDelta(int64(len(d)), d)
	pack := b.bytes()
	if err, out := feed(t, pack, 64, testLimits()); err != nil || !bytes.Equal(out, pack) {
		t.Fatalf("a delta of 1000 bytes (the limit): %v, %d of %d bytes passed", err, len(out), len(pack))
	}
}

// ofsEncoding is gitformat-pack's encoding of an OFS delta's base
// distance, with the continuation bit set on its last byte too, so that
// one more byte follows.
func ofsEncodingOpen(rel int64) []byte {
	enc := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		enc = append([]byte{byte(0x80 | rel&0x7f)}, enc...)
	}
	enc[len(enc)-1] |= 0x80
	return enc
}

// TestPackGuardOffsetBound: a delta's base distance is read while it fits
// in 64 bits: 2^55-1 before the last byte still does (the distance then
// names no object), 2^55 does not.
func TestPackGuardOffsetBound(t *testing.T) {
	for _, tc := range []struct {
		before int64
		says   string
	}{
		{1<<55 - 1, "where no object begins"},
		{1 << 55, "a delta's base offset does not fit in 64 bits"},
	} {
		b := &packBuilder{}
		b.object(objBlob, []byte("z"))
		b.offsets = append(b.offsets, b.buf.Len())
		b.count++
		b.header(objOfsDelta, 3)
		b.buf.Write(ofsEncodingOpen(tc.before))
		b.buf.WriteByte(0)
		b.buf.Write(deflate([]byte{1, 1, 0x90}))
		pack := b.bytes()
		if tc.before < 1<<55 {
			// The distance read is (2^55-1+1)<<7 = 2^62: before the pack.
			tc.says = fmt.Sprintf("is a delta of offset %d, %s", int64(b.offsets[1])-1<<62, tc.says)
		}
		err, _ := feed(t, pack, 5, testLimits())
		if err == nil || !strings.Contains(err.Error(), "malformed pack") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("a distance of %d before its last byte: %v, want a malformed pack that says %q", tc.before, err, tc.says)
		}
	}
}

// TestPackGuardDeltaSizeBound: a delta's result size is read while it
// fits in 64 bits: nine bytes (2^56) do, and the size is then over the
// file limit; ten bytes do not.
func TestPackGuardDeltaSizeBound(t *testing.T) {
	nine := append(bytes.Repeat([]byte{0x80}, 8), 1) // 2^56
	if v := varint(1 << 56); !bytes.Equal(v, nine) {
		t.Fatalf("varint(2^56) = %x, want %x", v, nine)
	}
	ten := append(bytes.Repeat([]byte{0x80}, 9), 1)
	for _, tc := range []struct {
		size []byte
		says string
	}{
		{nine, "object 2 of the pack is a file of 72057594037927936 bytes, over the limit of 1000"},
		{ten, "malformed pack: object 2: a delta declares a size that does not fit in 64 bits"},
	} {
		d := append(varint(1), tc.size...)
		b := &packBuilder{}
		b.object(objBlob, []byte("z"))
		b.refDelta(int64(len(d)), d)
		err, _ := feed(t, b.bytes(), 5, testLimits())
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("a result size of %d bytes: %v, want %q", len(tc.size), err, tc.says)
		}
	}
	// Data that ends inside the sizes: the delta is cut short.
	b := &packBuilder{}
	b.object(objBlob, []byte("z"))
	b.refDelta(1, []byte{1})
	err, _ := feed(t, b.bytes(), 5, testLimits())
	if err == nil || !strings.Contains(err.Error(), "malformed pack: object 2: unexpected EOF") {
		t.Errorf("a delta that ends inside its sizes: %v, want a malformed pack, object 2 ending early", err)
	}
}

// TestPackGuardOfsDeltaOwnSize: an OFS delta's own data is bounded as a
// ref delta's is: 1001 bytes, over max(file, tree limit), are refused
// before go-git sees them.
func TestPackGuardOfsDeltaOwnSize(t *testing.T) {
	b := &packBuilder{}
	b.object(objBlob, []byte("z"))
	b.offsets = append(b.offsets, b.buf.Len())
	b.count++
	at := b.buf.Len()
	b.header(objOfsDelta, 1001)
	b.buf.WriteByte(byte(at - b.offsets[0])) // the blob, under 128 bytes back
	b.buf.Write(deflate([]byte{1, 1}))
	err, out := feed(t, b.bytes(), 64, testLimits())
	wantPackLimit(t, err, "object 2 of the pack is a delta of 1001 bytes, over the limit of 1000")
	if len(out) > 12+at {
		t.Errorf("go-git got %d bytes, past the delta's header at %d", len(out), 12+at)
	}
}
