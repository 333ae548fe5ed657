package attack

// OCI layers and manifests from a hostile registry or publisher: every
// bound of oci.Unpack at its limit and one past it, digest mismatches,
// hostile indexes, a gzip bomb (1 GiB of zeros in about 1 MB), 100,000
// files, duplicate names, and entries that leave the skill. The in-process
// tests call oci.Unpack with blobs from a map; the end-to-end ones put the
// artifact in a real registry (Debian's docker-registry) and run the real
// `loadout pull`, bounding its peak memory.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
)

const ociSkillMD = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n"

type ociEntry struct {
	name, data, link string
	typ              byte
	mode             int64
	size             int64 // the header's size, when not len(data)
}

func ociTar(t testing.TB, entries ...ociEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Linkname: e.link, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.data))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func ociGzip(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func ociDigest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// ociBlobs is a Fetcher over a map that counts its fetches.
type ociBlobs struct {
	m       map[string][]byte
	fetches atomic.Int64
}

func (b *ociBlobs) Fetch(_ context.Context, d oci.Descriptor) (io.ReadCloser, error) {
	b.fetches.Add(1)
	data, ok := b.m[d.Digest]
	if !ok {
		return nil, fmt.Errorf("no blob %s", d.Digest)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// ociImage is an image manifest (so any number of layers) over layers.
func ociImage(t testing.TB, layers ...[]byte) (*ociBlobs, []byte) {
	t.Helper()
	b := &ociBlobs{m: map[string][]byte{}}
	cfg := []byte(`{}`)
	b.m[ociDigest(cfg)] = cfg
	m := oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, Config: oci.Descriptor{MediaType: oci.MediaTypeImageConfig, Digest: ociDigest(cfg), Size: 2}}
	for _, l := range layers {
		b.m[ociDigest(l)] = l
		mt := oci.MediaTypeImageLayer
		if len(l) > 1 && l[0] == 0x1f && l[1] == 0x8b {
			mt = oci.MediaTypeImageLayerGzip
		}
		m.Layers = append(m.Layers, oci.Descriptor{MediaType: mt, Digest: ociDigest(l), Size: int64(len(l))})
	}
	data, _ := json.Marshal(m)
	return b, data
}

// ociExpect unpacks and checks the outcome: ok, or refused with code,
// the message naming entry (when given).
func ociExpect(t *testing.T, what string, f oci.Fetcher, manifest []byte, lim oci.Limits, code, entry string) *oci.Unpacked {
	t.Helper()
	u, err := oci.Unpack(context.Background(), f, manifest, lim)
	if code == "" {
		if err != nil {
			t.Errorf("%s: refused at the limit: %v", what, err)
		}
		return u
	}
	if oci.CodeOf(err) != code {
		t.Errorf("%s: got %v, want code %s", what, err, code)
	} else if entry != "" && !strings.Contains(err.Error(), entry) {
		t.Errorf("%s: %v does not name %q", what, err, entry)
	}
	return nil
}

func TestAttackOCIUnpackBounds(t *testing.T) {
	skillEntry := ociEntry{name: "SKILL.md", data: ociSkillMD}
	files := func(n, size int) []ociEntry {
		es := []ociEntry{skillEntry}
		for i := 0; i < n; i++ {
			es = append(es, ociEntry{name: fmt.Sprintf("f%04d.txt", i), data: strings.Repeat("x", size)})
		}
		return es
	}
	t.Run("file size", func(t *testing.T) {
		lim := oci.Limits{MaxFileBytes: 1000}
		f, m := ociImage(t, ociTar(t, append(files(0, 0), ociEntry{name: "big.txt", data: strings.Repeat("a", 1000)})...))
		ociExpect(t, "a file at the limit", f, m, lim, "", "")
		f, m = ociImage(t, ociTar(t, append(files(0, 0), ociEntry{name: "big.txt", data: strings.Repeat("a", 1001)})...))
		ociExpect(t, "a file one byte over", f, m, lim, oci.CodeTooLarge, "big.txt")
	})
	t.Run("total size", func(t *testing.T) {
		n := len(ociSkillMD) + 3*100
		f, m := ociImage(t, ociTar(t, files(3, 100)...))
		ociExpect(t, "files at the total", f, m, oci.Limits{MaxTotalBytes: int64(n)}, "", "")
		ociExpect(t, "files one byte over the total", f, m, oci.Limits{MaxTotalBytes: int64(n - 1)}, oci.CodeTooLarge, "f0002.txt")
	})
	t.Run("file count", func(t *testing.T) {
		f, m := ociImage(t, ociTar(t, files(9, 1)...))
		ociExpect(t, "10 files (SKILL.md included) at 10", f, m, oci.Limits{MaxFiles: 10}, "", "")
		ociExpect(t, "10 files at 9", f, m, oci.Limits{MaxFiles: 9}, oci.CodeTooMany, "f0008.txt")
	})
	t.Run("entries", func(t *testing.T) {
		es := append(files(2, 1), ociEntry{name: "d1/", typ: tar.TypeDir, mode: 0o755}, ociEntry{name: "d2/", typ: tar.TypeDir, mode: 0o755})
		f, m := ociImage(t, ociTar(t, es...))
		ociExpect(t, "5 entries at 5", f, m, oci.Limits{MaxEntries: 5}, "", "")
		ociExpect(t, "5 entries at 4", f, m, oci.Limits{MaxEntries: 4}, oci.CodeTooMany, "d2/")
	})
	t.Run("decompressed bytes", func(t *testing.T) {
		layer := ociTar(t, files(2, 10)...)
		f, m := ociImage(t, ociGzip(layer))
		n := int64(len(layer))
		ociExpect(t, "a layer decompressing to the limit", f, m, oci.Limits{MaxUnpackedBytes: n}, "", "")
		ociExpect(t, "a layer decompressing one byte over", f, m, oci.Limits{MaxUnpackedBytes: n - 1}, oci.CodeTooLarge, "")
	})
	t.Run("layer bytes, from the descriptors, nothing fetched", func(t *testing.T) {
		l1, l2 := ociGzip(ociTar(t, skillEntry)), ociGzip(ociTar(t, ociEntry{name: "a.txt", data: "a"}))
		f, m := ociImage(t, l1, l2)
		n := int64(len(l1) + len(l2))
		ociExpect(t, "two layers at the limit", f, m, oci.Limits{MaxLayerBytes: n}, "", "")
		f.fetches.Store(0)
		ociExpect(t, "two layers one byte over", f, m, oci.Limits{MaxLayerBytes: n - 1}, oci.CodeTooLarge, "")
		if got := f.fetches.Load(); got != 0 {
			t.Errorf("%d blobs were fetched for layers over the limit by their descriptors", got)
		}
	})
	t.Run("layers", func(t *testing.T) {
		ls := [][]byte{ociTar(t, skillEntry)}
		for i := 1; i < 4; i++ {
			ls = append(ls, ociTar(t, ociEntry{name: fmt.Sprintf("l%d.txt", i), data: "x"}))
		}
		f, m := ociImage(t, ls...)
		ociExpect(t, "4 layers at 4", f, m, oci.Limits{MaxLayers: 4}, "", "")
		ociExpect(t, "4 layers at 3", f, m, oci.Limits{MaxLayers: 3}, oci.CodeTooMany, "")
	})
	t.Run("manifest bytes", func(t *testing.T) {
		f, m := ociImage(t, ociTar(t, skillEntry))
		n := int64(len(m))
		ociExpect(t, "a manifest at the limit", f, m, oci.Limits{MaxManifestBytes: n}, "", "")
		ociExpect(t, "a manifest one byte over", f, m, oci.Limits{MaxManifestBytes: n - 1}, oci.CodeTooLarge, "manifest")
	})
}

func TestAttackOCIDigestMismatch(t *testing.T) {
	layer := ociGzip(ociTar(t, ociEntry{name: "SKILL.md", data: ociSkillMD}))
	f, m := ociImage(t, layer)
	d := ociDigest(layer)
	for _, c := range []struct {
		what string
		data []byte
	}{
		{"one byte flipped", append(append([]byte(nil), layer[:len(layer)-1]...), layer[len(layer)-1]^1)},
		{"one byte more", append(append([]byte(nil), layer...), 0)},
		{"one byte less", layer[:len(layer)-1]},
		{"another skill of the same size", func() []byte {
			other := ociGzip(ociTar(t, ociEntry{name: "SKILL.md", data: strings.Replace(ociSkillMD, "Demo", "Evil", 1)}))
			return other
		}()},
	} {
		f.m[d] = c.data
		if _, err := oci.Unpack(context.Background(), f, m, oci.Limits{}); oci.CodeOf(err) != oci.CodeDigest && oci.CodeOf(err) != oci.CodeCorrupt {
			t.Errorf("%s: got %v, want %s", c.what, err, oci.CodeDigest)
		} else if oci.CodeOf(err) == oci.CodeCorrupt {
			t.Errorf("%s: reported as %v: the digest check must speak first", c.what, err)
		}
	}
}

func TestAttackOCIHostileEntries(t *testing.T) {
	skillEntry := ociEntry{name: "SKILL.md", data: ociSkillMD}
	for _, c := range []struct {
		what  string
		e     []ociEntry
		code  string
		entry string
	}{
		{"dot-dot", []ociEntry{{name: "../evil.sh", data: "x"}}, oci.CodePath, "../evil.sh"},
		{"dot-dot inside", []ociEntry{{name: "a/../../evil.sh", data: "x"}}, oci.CodePath, "a/../../evil.sh"},
		{"absolute", []ociEntry{{name: "/etc/cron.d/evil", data: "x"}}, oci.CodePath, "/etc/cron.d/evil"},
		{"backslash", []ociEntry{{name: `a\..\evil`, data: "x"}}, oci.CodePath, `a\..\evil`},
		{"control character", []ociEntry{{name: "a\x1b[31m.txt", data: "x"}}, oci.CodePath, ""},
		{"symlink out, relative", []ociEntry{{name: "link", typ: tar.TypeSymlink, link: "../../etc/passwd"}}, oci.CodeLink, "link"},
		{"symlink out, absolute", []ociEntry{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, oci.CodeLink, "link"},
		{"symlink to nothing", []ociEntry{{name: "link", typ: tar.TypeSymlink, link: "missing.txt"}}, oci.CodeLink, "link"},
		{"hardlink out", []ociEntry{{name: "hl", typ: tar.TypeLink, link: "../outside"}}, oci.CodeLink, "hl"},
		{"hardlink absolute", []ociEntry{{name: "hl", typ: tar.TypeLink, link: "/etc/shadow"}}, oci.CodeLink, "hl"},
		{"character device", []ociEntry{{name: "tty", typ: tar.TypeChar}}, oci.CodeSpecial, "tty"},
		{"block device", []ociEntry{{name: "sda", typ: tar.TypeBlock}}, oci.CodeSpecial, "sda"},
		{"fifo", []ociEntry{{name: "pipe", typ: tar.TypeFifo}}, oci.CodeSpecial, "pipe"},
		{"whiteout", []ociEntry{{name: "scripts/.wh.run.sh", data: ""}}, oci.CodeSpecial, ".wh.run.sh"},
		{"duplicate file", []ociEntry{{name: "a.txt", data: "1"}, {name: "a.txt", data: "2"}}, oci.CodeDuplicate, "a.txt"},
		{"duplicate after cleaning", []ociEntry{{name: "a.txt", data: "1"}, {name: "./a.txt", data: "2"}}, oci.CodeDuplicate, "./a.txt"},
		{"second SKILL.md", []ociEntry{{name: "./SKILL.md", data: ociSkillMD}}, oci.CodeDuplicate, "./SKILL.md"},
		{"file where a folder is", []ociEntry{{name: "d", data: "1"}, {name: "d/x", data: "2"}}, oci.CodeDuplicate, "d/x"},
		{"folder where a file is", []ociEntry{{name: "d", data: "1"}, {name: "d/", typ: tar.TypeDir}}, oci.CodeDuplicate, "d/"},
	} {
		f, m := ociImage(t, ociTar(t, append([]ociEntry{skillEntry}, c.e...)...))
		ociExpect(t, c.what, f, m, oci.Limits{}, c.code, c.entry)
	}
	// A link inside the skill, to a file before it, is kept as a copy.
	f, m := ociImage(t, ociTar(t, skillEntry, ociEntry{name: "scripts/run.sh", data: "echo\n", mode: 0o755}, ociEntry{name: "run", typ: tar.TypeSymlink, link: "scripts/run.sh"}))
	if u := ociExpect(t, "a link inside", f, m, oci.Limits{}, "", ""); u != nil {
		if len(u.Bundle.Files) != 2 || string(u.Bundle.Files[0].Data) != "echo\n" || !u.Bundle.Files[0].Executable {
			t.Errorf("a link inside: %+v", u.Bundle.Files)
		}
	}
}

// TestAttackOCIHundredThousandFiles: a layer of 100,000 files is refused
// at the file limit, naming the first file past it, without reading the rest.
func TestAttackOCIHundredThousandFiles(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "SKILL.md", Mode: 0o644, Size: int64(len(ociSkillMD))})
	tw.Write([]byte(ociSkillMD))
	for i := 0; i < 100_000; i++ {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f/%06d", i), Mode: 0o644, Size: 1})
		tw.Write([]byte{'x'})
	}
	tw.Close()
	zw.Close()
	f, m := ociImage(t, buf.Bytes())
	var err error
	alloc := testutil.Allocated(func() { _, err = oci.Unpack(context.Background(), f, m, oci.Limits{}) })
	if oci.CodeOf(err) != oci.CodeTooMany || !strings.Contains(err.Error(), "f/000512") {
		t.Fatalf("100,000 files: %v", err)
	}
	if alloc > 32<<20 {
		t.Errorf("refusing 100,000 files allocated %d MB", alloc>>20)
	}
}

// zerosGzip returns a gzip stream of head followed by n MiB of zeros
// (n >= 3), made without compressing them all: after a sync flush the
// deflate encoding of one more MiB of zeros is the same block every time,
// so it is repeated, and the trailer's CRC and size are set for the whole.
func zerosGzip(t testing.TB, head []byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(head)
	chunk := make([]byte, 1<<20)
	var reps [][]byte
	for i := 0; i < 3; i++ {
		mark := buf.Len()
		zw.Write(chunk)
		zw.Flush()
		reps = append(reps, append([]byte(nil), buf.Bytes()[mark:]...))
	}
	if !bytes.Equal(reps[1], reps[2]) {
		t.Fatal("the deflate encoding of a MiB of zeros is not the same twice: the bomb cannot be made this way")
	}
	for i := 3; i < n; i++ {
		buf.Write(reps[2])
	}
	zw.Close()
	out := buf.Bytes()
	crc := crc32.ChecksumIEEE(head)
	for i := 0; i < n; i++ {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	binary.LittleEndian.PutUint32(out[len(out)-8:], crc)
	binary.LittleEndian.PutUint32(out[len(out)-4:], uint32(int64(len(head))+int64(n)<<20))
	return out
}

// gzip bombs: 1 GiB of zeros in about 1 MB. An honest tar entry of 1 GiB
// is refused by its header; with the file limits raised, by what the
// layer may still decompress to, before anything is allocated; zeros
// hidden after the archive's end are refused at the decompressed cap.
func TestAttackOCIGzipBomb(t *testing.T) {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	tw.WriteHeader(&tar.Header{Name: "SKILL.md", Mode: 0o644, Size: int64(len(ociSkillMD))})
	tw.Write([]byte(ociSkillMD))
	tw.Flush()
	tw.WriteHeader(&tar.Header{Name: "zeros.bin", Mode: 0o644, Size: 1 << 30})
	tw.Flush()
	honest := zerosGzip(t, hdr.Bytes(), 1025) // the 1 GiB, then the end blocks (zeros too)
	hidden := zerosGzip(t, ociTar(t, ociEntry{name: "SKILL.md", data: ociSkillMD}), 1024)
	if len(honest) > 2<<20 || len(hidden) > 2<<20 {
		t.Fatalf("the bombs are %d and %d bytes", len(honest), len(hidden))
	}
	t.Logf("1 GiB of zeros: a %d-byte layer", len(honest))
	// The first MiB really is what it claims.
	zr, err := gzip.NewReader(bytes.NewReader(hidden))
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 8<<20)
	if _, err := io.ReadFull(zr, head); err != nil || !bytes.Contains(head[:2048], []byte("name: demo")) || bytes.Count(head[4096:], []byte{0}) != len(head)-4096 {
		t.Fatalf("the bomb does not decompress as built: %v", err)
	}
	for _, c := range []struct {
		what  string
		layer []byte
		lim   oci.Limits
		entry string
	}{
		{"an honest 1 GiB file", honest, oci.Limits{}, "zeros.bin"},
		{"an honest 1 GiB file, file limits raised", honest, oci.Limits{MaxFileBytes: 2 << 30, MaxTotalBytes: 2 << 30}, "zeros.bin"},
		{"1 GiB hidden after the archive", hidden, oci.Limits{}, ""},
	} {
		f, m := ociImage(t, c.layer)
		var err error
		alloc := testutil.Allocated(func() { _, err = oci.Unpack(context.Background(), f, m, c.lim) })
		if oci.CodeOf(err) != oci.CodeTooLarge || c.entry != "" && !strings.Contains(err.Error(), c.entry) {
			t.Errorf("%s: %v", c.what, err)
		}
		if alloc > 64<<20 {
			t.Errorf("%s: %d MB allocated", c.what, alloc>>20)
		}
	}
}

// ociRegistryPush puts a layer (and a manifest over it) in the registry.
func ociRegistryPush(t *testing.T, c *oci.Client, ref string, layer []byte) {
	t.Helper()
	ctx := testutil.Context(t)
	f, m := ociImage(t, layer)
	r, _ := oci.ParseRef(ref)
	for d, data := range f.m {
		mt := oci.MediaTypeImageLayerGzip
		if err := c.PushBlob(ctx, r.Name(), oci.Blob{Data: data, Descriptor: oci.Descriptor{MediaType: mt, Digest: d, Size: int64(len(data))}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PushManifest(ctx, ref, oci.Blob{Data: m, Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: ociDigest(m), Size: int64(len(m))}}); err != nil {
		t.Fatal(err)
	}
}

// ociPull runs the real `loadout pull`, returning its output, exit code
// and peak memory in MB (VmHWM, polled as gitfetch's runs do).
func ociPull(t *testing.T, args ...string) (string, int, float64) {
	t.Helper()
	cmd := exec.Command(Bin(t), append([]string{"pull"}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peakMB := watchPeakRSS(cmd)
	err := cmd.Wait()
	rss := peakMB()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code, rss
}

const ociRSSBound = 100 // MB

// The bombs and a tampered blob through a real registry and the real
// `loadout pull`: refused with the code, the folder left empty, memory
// bounded.
func TestAttackOCIPullThroughRegistry(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	tw.WriteHeader(&tar.Header{Name: "SKILL.md", Mode: 0o644, Size: int64(len(ociSkillMD))})
	tw.Write([]byte(ociSkillMD))
	tw.Flush()
	ociRegistryPush(t, c, reg.Ref("evil/hidden:1"), zerosGzip(t, hdr.Bytes(), 1024))
	ociRegistryPush(t, c, reg.Ref("evil/dotdot:1"), ociGzip(ociTar(t, ociEntry{name: "SKILL.md", data: ociSkillMD}, ociEntry{name: "../../evil.sh", data: "rm -rf ~\n", mode: 0o755})))
	good := ociGzip(ociTar(t, ociEntry{name: "SKILL.md", data: ociSkillMD}))
	ociRegistryPush(t, c, reg.Ref("ok/demo:1"), good)

	for _, c := range []struct{ ref, code string }{
		{reg.Ref("evil/hidden:1"), oci.CodeTooLarge},
		{reg.Ref("evil/dotdot:1"), oci.CodePath},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		out, code, rss := ociPull(t, c.ref, dir, "--insecure")
		if code != 1 || !strings.Contains(out, "["+c.code+"]") {
			t.Errorf("%s: exit %d\n%s", c.ref, code, out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: the folder was made", c.ref)
		}
		if rss > ociRSSBound {
			t.Errorf("%s: peak RSS %.0f MB, bound %d", c.ref, rss, ociRSSBound)
		}
		t.Logf("%s refused: peak RSS %.0f MB", c.ref, rss)
	}

	// A registry (or a proxy) that serves other bytes for a blob: the
	// tampered layer is refused by its digest. The real registry stands
	// behind a proxy that flips the last byte of every blob.
	target, _ := url.Parse(reg.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(res *http.Response) error {
		if !strings.Contains(res.Request.URL.Path, "/blobs/") || res.Request.Method != http.MethodGet || res.StatusCode != 200 {
			return nil
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		if len(b) > 0 {
			b[len(b)-1] ^= 0xff
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		return nil
	}
	proxy := httptest.NewServer(rp)
	defer proxy.Close()
	host := strings.TrimPrefix(proxy.URL, "http://")
	out, code, _ := ociPull(t, host+"/ok/demo:1", filepath.Join(t.TempDir(), "out"), "--insecure")
	if code != 1 || !strings.Contains(out, "["+oci.CodeDigest+"]") {
		t.Errorf("a tampered blob: exit %d\n%s", code, out)
	}
	// The same artifact straight from the registry pulls.
	if out, code, _ := ociPull(t, reg.Ref("ok/demo:1"), filepath.Join(t.TempDir(), "out"), "--insecure"); code != 0 {
		t.Errorf("the untampered artifact: exit %d\n%s", code, out)
	}
}

// A hostile index in a real registry: one entry past the limit, and an
// index of an index, refused by `loadout pull`.
func TestAttackOCIHostileIndex(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	var entries []oci.Descriptor
	for i := 0; i < 65; i++ {
		layer := ociGzip(ociTar(t, ociEntry{name: "SKILL.md", data: ociSkillMD + fmt.Sprintf("\n%d\n", i)}))
		ref := reg.Ref(fmt.Sprintf("evil/index:m%d", i))
		ociRegistryPush(t, c, ref, layer)
		d, err := c.Resolve(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		d.Platform = &oci.Platform{OS: "linux", Architecture: fmt.Sprintf("arch%d", i)}
		entries = append(entries, d)
	}
	pushIndex := func(tag string, ds []oci.Descriptor) oci.Descriptor {
		b, _ := json.Marshal(oci.Index{SchemaVersion: 2, MediaType: oci.MediaTypeImageIndex, Manifests: ds})
		d := oci.Descriptor{MediaType: oci.MediaTypeImageIndex, Digest: ociDigest(b), Size: int64(len(b))}
		if err := c.PushManifest(ctx, reg.Ref("evil/index:"+tag), oci.Blob{Data: b, Descriptor: d}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	pushIndex("at-limit", entries[:64])
	pushIndex("over", entries)
	inner := pushIndex("inner", entries[:1])
	pushIndex("nested", []oci.Descriptor{inner})
	if out, code, _ := ociPull(t, reg.Ref("evil/index:at-limit"), filepath.Join(t.TempDir(), "out"), "--insecure"); code != 0 {
		t.Errorf("64 entries: exit %d\n%s", code, out)
	}
	for _, tag := range []string{"over", "nested"} {
		out, code, _ := ociPull(t, reg.Ref("evil/index:"+tag), filepath.Join(t.TempDir(), "out"), "--insecure")
		if code != 1 || !strings.Contains(out, "["+oci.CodeIndex+"]") {
			t.Errorf("index %s: exit %d\n%s", tag, code, out)
		}
	}
}
