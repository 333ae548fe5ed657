//go:build unix

package wellknown

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// getWithin is get with a deadline: a handler that blocks fails the test
// (err is returned for requests expected to time out).
func getWithin(u string, d time.Duration, hdr ...string) (response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, body}, err
}

func mustGet(t *testing.T, u string, hdr ...string) response {
	t.Helper()
	r, err := getWithin(u, testutil.Patience(t), hdr...)
	if err != nil {
		t.Fatalf("GET %s: %v (the server blocked?)", u, err)
	}
	return r
}

// The file route streams: a range of a 4 MiB file reads little, and a
// 1 GiB file is refused (413, naming it) before anything is read.
func TestHugeFileReads(t *testing.T) {
	root := t.TempDir()
	files := testSkills()
	files["huge/SKILL.md"] = file{md("huge", "A huge file."), 0o644}
	files["mid/SKILL.md"] = file{md("mid", "A 4 MiB file."), 0o644}
	files["mid/data.txt"] = file{strings.Repeat("0123456789abcdef", 4<<20/16), 0o644}
	writeTree(t, root, files)
	f, err := os.Create(filepath.Join(root, "huge", "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(testutil.GiB)
	f.Close()
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	defer srv.Close()

	n := testutil.Allocated(func() {
		for _, u := range []string{"/.well-known/agent-skills/huge/data.bin", "/.well-known/skills/huge/data.bin"} {
			for _, rng := range []string{"", "bytes=0-99"} {
				r := mustGet(t, srv.URL+u, "Range", rng)
				if r.status != http.StatusRequestEntityTooLarge || !bytes.Contains(r.body, []byte("1073741824")) || !bytes.Contains(r.body, []byte("data.bin")) {
					t.Errorf("%s (Range %q): %d %s", u, rng, r.status, r.body)
				}
			}
		}
	})
	if n > 16<<20 {
		t.Errorf("four refused reads of a 1 GiB file allocated %d bytes", n)
	}
	n = testutil.Allocated(func() {
		r := mustGet(t, srv.URL+"/.well-known/agent-skills/mid/data.txt", "Range", "bytes=100-199")
		if r.status != http.StatusPartialContent || string(r.body) != strings.Repeat("0123456789abcdef", 7)[4:104] {
			t.Errorf("ranged read: %d %q", r.status, r.body)
		}
	})
	if n > 2<<20 {
		t.Errorf("a 100-byte range of a 4 MiB file allocated %d bytes", n)
	}
	idx := decode[v2Index](t, mustGet(t, srv.URL+"/.well-known/agent-skills/index.json").body)
	var left []string
	for _, w := range idx.Warnings {
		left = append(left, w.Skill+":"+w.Code)
	}
	if strings.Join(left, ",") != "huge:too-large,multi:executable-dropped" {
		t.Errorf("warnings %v", left)
	}
}

// A FIFO swapped in after the scan does not hang the index, the archive or
// the file route, before or after a reload.
func TestFIFOSwappedInIsRefused(t *testing.T) {
	srv, root, svc := setup(t)
	p := filepath.Join(root, "multi", "references", "guide.md")
	testutil.Must(t, os.Remove(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	for _, u := range []string{"/.well-known/agent-skills/index.json", "/.well-known/skills/index.json", "/agents/coder/.well-known/agent-skills/index.json"} {
		r := mustGet(t, srv.URL+u)
		mustOK(t, r, u)
		if !bytes.Contains(r.body, []byte(`"skill":"multi"`)) || !bytes.Contains(r.body, []byte("named pipe")) {
			t.Errorf("%s: multi is not reported: %s", u, r.body)
		}
	}
	if r := mustGet(t, srv.URL+"/.well-known/agent-skills/multi.tar.gz"); r.status != http.StatusNotFound {
		t.Errorf("archive: %d %s", r.status, r.body)
	}
	for _, u := range []string{"/.well-known/agent-skills/multi/references/guide.md", "/.well-known/skills/multi/references/guide.md"} {
		r := mustGet(t, srv.URL+u)
		if r.status != http.StatusForbidden || !bytes.Contains(r.body, []byte(skill.CodeNotRegular)) {
			t.Errorf("%s: %d %s", u, r.status, r.body)
		}
	}
	// After a reload the FIFO is not listed, and the indexes answer.
	svc.Reload(context.Background(), "test")
	for _, u := range []string{"/.well-known/agent-skills/index.json", "/.well-known/skills/index.json"} {
		r := mustGet(t, srv.URL+u)
		mustOK(t, r, u)
		if bytes.Contains(r.body, []byte("named pipe")) || bytes.Contains(r.body, []byte("references/guide.md")) {
			t.Errorf("%s after a reload: %s", u, r.body)
		}
	}
	mustOK(t, mustGet(t, srv.URL+"/.well-known/agent-skills/multi.tar.gz"), "archive after a reload")
}

// A skill folder swapped for a link after the scan: the file route and
// the archive refuse it, and an index built after the swap leaves it out;
// the link's bytes are never served.
func TestSwappedSkillFolderIsRefused(t *testing.T) {
	srv, root, _ := setup(t)
	other := t.TempDir()
	secret := map[string]file{}
	for p, f := range testSkills() {
		if name, rest, _ := strings.Cut(p, "/"); name == "multi" || name == "single" {
			secret[name+"/"+rest] = file{string(bytes.Repeat([]byte("S"), len(f.data))), f.mode}
		}
	}
	writeTree(t, other, secret)
	for _, name := range []string{"multi", "single"} {
		dir := filepath.Join(root, name)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, name), dir); err != nil {
			t.Skip(err)
		}
	}
	for _, u := range []string{
		"/.well-known/agent-skills/multi/references/guide.md",
		"/.well-known/skills/multi/SKILL.md",
		"/.well-known/agent-skills/single/SKILL.md",
	} {
		r := mustGet(t, srv.URL+u)
		if r.status != http.StatusConflict || bytes.Contains(r.body, []byte("SSSS")) || !bytes.Contains(r.body, []byte(skill.CodeFolderChanged)) {
			t.Errorf("%s: %d %s", u, r.status, r.body)
		}
	}
	r := mustGet(t, srv.URL+"/.well-known/agent-skills/index.json")
	idx := decode[v2Index](t, r.body)
	if len(idx.Skills) != 1 || idx.Skills[0].Name != "hidden" || !bytes.Contains(r.body, []byte("no longer the folder")) {
		t.Errorf("index after the swap: %s", r.body)
	}
	if r := mustGet(t, srv.URL+"/.well-known/agent-skills/multi.tar.gz"); r.status != http.StatusNotFound {
		t.Errorf("archive: %d", r.status)
	}
}

// blockingReader is a reader that hangs on its first read until released:
// a file read that never returns (a hung network mount), which a test
// cannot make for real.
type blockingReader struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
	content []byte
}

func (r *blockingReader) ReadFile(string) ([]byte, error) {
	first := false
	r.once.Do(func() { first = true })
	if first {
		close(r.entered)
		<-r.release
	}
	return r.content, nil
}

// One read that never returns holds up only the index build it is part
// of: later generations build their own index, and waiters give up with
// their request.
func TestIndexBuildDoesNotHoldOtherRequests(t *testing.T) {
	content := []byte(md("slow", "Hangs on its first read."))
	doc, _, ok := skill.Parse(content, "SKILL.md", "")
	if !ok {
		t.Fatal("parse")
	}
	br := &blockingReader{entered: make(chan struct{}), release: make(chan struct{}), content: content}
	sk := skill.NewVirtual(doc, "plugin://p/slow", nil, &skill.Origin{Kind: "plugin", Plugin: "p"}, br)
	cat, err := catalog.New(context.Background(), nil, catalog.Options{
		Plugins:     map[string]catalog.Provider{"p": catalog.ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return []*skill.Skill{sk}, nil })},
		PluginOrder: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	defer svc.Close()
	srv := httptest.NewServer(mux(svc))
	defer srv.Close()
	defer close(br.release) // before srv.Close, which waits for the hung handler
	u := srv.URL + "/.well-known/agent-skills/index.json"

	// The first build hangs in the read; its request and a second one for
	// the same generation give up when their own deadline passes.
	go getWithin(u, time.Minute)
	<-br.entered
	if _, err := getWithin(u, 200*time.Millisecond); err == nil {
		t.Fatal("a request for the hung generation was answered")
	}
	// After a reload, the index is built anew without waiting for the
	// hung build.
	svc.Reload(context.Background(), "test")
	r := mustGet(t, u)
	mustOK(t, r, "index after a reload")
	if !bytes.Contains(r.body, []byte(`"slow"`)) {
		t.Errorf("index: %s", r.body)
	}
}

// TestFileReadOnceAndStreamed: a file up to maxBufferedFile is read once
// into a pooled buffer, hashed and served from it; a larger one is hashed
// and then streamed. Both answer the file's bytes, its digest as the ETag,
// ranges, and 304 for the ETag; and a buffered file costs a request no
// more than a few times its size.
func TestFileReadOnceAndStreamed(t *testing.T) {
	root := t.TempDir()
	files := testSkills()
	small := strings.Repeat("small file line\n", 40<<10/16)            // 40 KiB: past the pool's first buffer
	large := strings.Repeat("a larger file line\n", (256<<10+5000)/19) // streamed
	files["sized/SKILL.md"] = file{md("sized", "Files of two sizes."), 0o644}
	files["sized/small.txt"] = file{small, 0o644}
	files["sized/large.txt"] = file{large, 0o644}
	writeTree(t, root, files)
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	defer srv.Close()
	for _, c := range []struct{ path, body string }{{"small.txt", small}, {"large.txt", large}} {
		u := srv.URL + "/.well-known/agent-skills/sized/" + c.path
		r := mustGet(t, u)
		sum := sha256.Sum256([]byte(c.body))
		etag := `"` + hex.EncodeToString(sum[:]) + `"`
		if r.status != http.StatusOK || string(r.body) != c.body || r.header.Get("ETag") != etag {
			t.Fatalf("%s: %d, %d bytes, ETag %s; want 200, %d bytes, %s", c.path, r.status, len(r.body), r.header.Get("ETag"), len(c.body), etag)
		}
		if r := mustGet(t, u, "Range", "bytes=16-31"); r.status != http.StatusPartialContent || string(r.body) != c.body[16:32] {
			t.Errorf("%s range: %d %q", c.path, r.status, r.body)
		}
		if r := mustGet(t, u, "If-None-Match", etag); r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s revalidated: %d, %d bytes", c.path, r.status, len(r.body))
		}
	}
	// What the server allocates, without a client or a connection: the
	// answer goes to a writer that keeps nothing.
	h := mux(svc)
	req := httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/sized/small.txt", nil)
	var w discardWriter
	h.ServeHTTP(&w, req) // the pool holds a buffer of its size
	if w.status != http.StatusOK || w.n != len(small) {
		t.Fatalf("direct request: %d, %d bytes", w.status, w.n)
	}
	per := testutil.LeastAllocated(10, 20, func() {
		w = discardWriter{}
		h.ServeHTTP(&w, req)
	})
	// Hashing the file through io.Copy took a 32 KiB buffer a request;
	// read once into a pooled buffer, hashed and served from it, 2.2 KB.
	// Under -race sync.Pool drops buffers at random, and it is 10-17 KB;
	// the old handler took 35.6 KB either way.
	bound := uint64(8 << 10)
	if testutil.Race {
		bound = 24 << 10
	}
	if per > bound {
		t.Errorf("serving a 40 KiB file allocated %d bytes a request (at most %d)", per, bound)
	}
}

// discardWriter is an http.ResponseWriter that counts the body and keeps
// none of it.
type discardWriter struct {
	hd     http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header {
	if w.hd == nil {
		w.hd = http.Header{}
	}
	return w.hd
}

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// ReadFrom copies without a buffer of its own, as net/http's writer does.
func (w *discardWriter) ReadFrom(r io.Reader) (int64, error) {
	w.WriteHeader(http.StatusOK)
	n, err := io.Copy(io.Discard, r)
	w.n += int(n)
	return n, err
}
