package attack

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

// Attacks on oci remote sources, through `loadout sync` against a real
// registry (Debian's docker-registry, internal/registrytest). Faults a
// registry cannot be made to commit (redirecting blobs to another host,
// hanging, dribbling) come from a ociFront: a reverse proxy on loopback
// before the real registry, which misbehaves as a test asks.

// ociPush packs skill pdf with body and pushes it to reg's repo:tag;
// it returns what was pushed.
func ociPush(t *testing.T, reg *registrytest.Registry, user, pass, repo, tag, body string, files ...skill.BundleFile) *oci.Pushed {
	t.Helper()
	b := &skill.Bundle{Content: []byte("---\nname: pdf\ndescription: Fill PDF forms. Use when a PDF form must be filled.\n---\n" + body + "\n"), Files: files}
	a, err := oci.Pack(b, oci.Meta{Version: tag})
	if err != nil {
		t.Fatal(err)
	}
	c, err := oci.NewClient(oci.Options{Insecure: !reg.TLS, RootCAs: reg.CAPool, Username: user, Password: pass, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Push(context.Background(), reg.Ref(repo)+":"+tag, a, oci.PushOptions{})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return p
}

// ociDir is a folder with a loadout.json whose agent reads source
// (an oci source's fields) with id "pdf", and remote settings extra.
func ociDir(t *testing.T, src map[string]any, extra map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	src["id"] = "pdf"
	rem := map[string]any{"cache": "cache"}
	for k, v := range extra {
		rem[k] = v
	}
	cfg := map[string]any{"agents": []any{map[string]any{"agentId": "coder", "skills": []any{src}}}, "remote": rem, "store": "loadout.db"}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "loadout.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ociPin is loadout.lock's pin of source pdf: revision and tag.
func ociPin(t *testing.T, dir string) (rev string, raw string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "loadout.lock"))
	if err != nil {
		return "", ""
	}
	var l struct {
		Sources []struct{ ID, Kind, Revision string }
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("loadout.lock: %v", err)
	}
	for _, s := range l.Sources {
		if s.ID == "pdf" && s.Kind == "oci" {
			return s.Revision, string(data)
		}
	}
	return "", string(data)
}

// ociFront is a reverse proxy before a registry. mode says how it
// misbehaves; it counts blob downloads and records the Authorization
// header of each.
type ociFront struct {
	URL  *url.URL
	Host string
	mode atomic.Value // string: "", "redirect", "redirect-manifest", "hang", "dribble"
	// side is a second listener (another port) that blob downloads are
	// redirected to; it serves the blob from the registry itself.
	side     *ociSide
	mu       sync.Mutex
	blobGets []string // digests
	blobAuth []string // the Authorization header the ociFront saw on each
}

type ociSide struct {
	Host string
	mu   sync.Mutex
	auth []string
}

func (h *ociSide) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

func ociServeOn(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// newOCIFront starts a ociFront before reg; user and pass are what the side
// listener fetches blobs from reg with.
func newOCIFront(t *testing.T, reg *registrytest.Registry, user, pass string) *ociFront {
	t.Helper()
	target, _ := url.Parse(reg.URL)
	f := &ociFront{side: &ociSide{}}
	f.mode.Store("")
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = reg.Client().Transport
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.side.Host = ociServeOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.side.mu.Lock()
		f.side.auth = append(f.side.auth, r.Header.Get("Authorization"))
		f.side.mu.Unlock()
		req, _ := http.NewRequest("GET", reg.URL+strings.TrimPrefix(r.URL.Path, "/cdn"), nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := reg.Client().Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	f.Host = ociServeOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := f.mode.Load().(string)
		blob := r.Method == "GET" && strings.Contains(r.URL.Path, "/blobs/sha256:")
		if blob {
			f.mu.Lock()
			f.blobGets = append(f.blobGets, r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:])
			f.blobAuth = append(f.blobAuth, r.Header.Get("Authorization"))
			f.mu.Unlock()
		}
		switch {
		case mode == "redirect" && blob && r.Header.Get("Authorization") != "" || mode == "redirect" && blob && user == "":
			http.Redirect(w, r, "http://"+f.side.Host+"/cdn"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		case mode == "redirect-manifest" && strings.Contains(r.URL.Path, "/manifests/") && r.Header.Get("Authorization") != "":
			http.Redirect(w, r, "http://"+f.side.Host+"/cdn"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		case mode == "hang" && strings.Contains(r.URL.Path, "/manifests/"):
			select { // never answers: the client's bound must end it
			case <-r.Context().Done():
			case <-stop:
			}
			return
		case mode == "dribble" && blob:
			// Headers at once, then a byte every 100ms: each read
			// succeeds, so only a bound on the whole fetch ends it.
			req, _ := http.NewRequest("GET", reg.URL+r.URL.Path, nil)
			req.Header = r.Header.Clone()
			resp, err := reg.Client().Do(req)
			if err != nil {
				http.Error(w, err.Error(), 502)
				return
			}
			defer resp.Body.Close()
			w.Header().Set("Content-Length", resp.Header.Get("Content-Length"))
			w.WriteHeader(resp.StatusCode)
			buf := make([]byte, 1)
			for {
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					return
				}
				if _, err := w.Write(buf); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-time.After(100 * time.Millisecond):
				case <-r.Context().Done():
					return
				case <-stop:
					return
				}
			}
		}
		rp.ServeHTTP(w, r)
	}))
	f.URL, _ = url.Parse("http://" + f.Host)
	return f
}

func (f *ociFront) gets() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.blobGets...), append([]string(nil), f.blobAuth...)
}

// TestOCITagMovedCheckFailsPinHolds: a tag moved to another manifest.
// `loadout sync --check` exits 1 naming the new digest; the lock keeps
// the old one, and the skill served is the pinned one until `loadout
// sync` moves it.
func TestOCITagMovedCheckFailsPinHolds(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	p1 := ociPush(t, reg, "", "", "team/pdf", "1.0.0", "version one")
	dir := ociDir(t, map[string]any{"oci": reg.Ref("team/pdf"), "tag": "1.0.0", "insecure": true}, nil)
	if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	if rev, lock := ociPin(t, dir); rev != p1.Manifest.Digest {
		t.Fatalf("pinned %q, want %s\n%s", rev, p1.Manifest.Digest, lock)
	}
	p2 := ociPush(t, reg, "", "", "team/pdf", "1.0.0", "version two, tag moved")
	out, errOut, code := CLI(t, dir, nil, "sync", "--check")
	short := p2.Manifest.Digest[:len("sha256:")+12]
	if code != 1 || !strings.Contains(out+errOut, short) {
		t.Fatalf("sync --check after the tag moved: exit %d, want 1 naming %s\n%s%s", code, short, out, errOut)
	}
	if rev, lock := ociPin(t, dir); rev != p1.Manifest.Digest {
		t.Fatalf("--check moved the pin to %q\n%s", rev, lock)
	}
	if out, _, code := CLI(t, dir, nil, "read", "--agent", "coder", "pdf", "SKILL.md"); code != 0 || !strings.Contains(out, "version one") || strings.Contains(out, "version two") {
		t.Fatalf("served after --check: %d\n%s", code, out)
	}
	if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	if rev, _ := ociPin(t, dir); rev != p2.Manifest.Digest {
		t.Fatalf("sync pinned %q, want %s", rev, p2.Manifest.Digest)
	}
	if out, _, _ := CLI(t, dir, nil, "read", "--agent", "coder", "pdf", "SKILL.md"); !strings.Contains(out, "version two") {
		t.Fatalf("served after sync:\n%s", out)
	}
}

// TestOCIRedirectSendsNoCredentials: a registry behind basic auth
// redirects blob downloads to another listener (another port, as a CDN
// would be another host). The sync follows the redirect, as the
// distribution spec allows, and the other listener never receives the
// registry's credentials; a redirected manifest is refused.
func TestOCIRedirectSendsNoCredentials(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{Users: map[string]string{"ci": "hunter2"}})
	p := ociPush(t, reg, "ci", "hunter2", "team/pdf", "1.0.0", "redirected")
	f := newOCIFront(t, reg, "ci", "hunter2")
	f.mode.Store("redirect")
	env := []string{"REG_USER=ci", "REG_PASSWORD=hunter2"}
	dir := ociDir(t, map[string]any{"oci": f.Host + "/team/pdf", "tag": "1.0.0", "insecure": true, "username": "${REG_USER}", "password": "${REG_PASSWORD}"}, nil)
	if out, errOut, code := CLI(t, dir, env, "sync"); code != 0 {
		t.Fatalf("sync through a redirecting registry: %d\n%s%s", code, out, errOut)
	}
	if rev, _ := ociPin(t, dir); rev != p.Manifest.Digest {
		t.Fatalf("pinned %q, want %s", rev, p.Manifest.Digest)
	}
	_, auths := f.gets()
	withAuth := 0
	for _, a := range auths {
		if a != "" {
			withAuth++
		}
	}
	if withAuth == 0 {
		t.Fatalf("the registry saw no blob download with credentials (%q): the test proves nothing", auths)
	}
	side := f.side.seen()
	if len(side) == 0 {
		t.Fatal("no blob download reached the other listener: the redirect was not followed")
	}
	for i, a := range side {
		if a != "" {
			t.Errorf("request %d to the other listener carried Authorization %q", i, a)
		}
	}
	if out, _, _ := CLI(t, dir, env, "read", "--agent", "coder", "pdf", "SKILL.md"); !strings.Contains(out, "redirected") {
		t.Errorf("served:\n%s", out)
	}

	// A manifest is not a blob: its redirect is refused, and the pin holds.
	ociPush(t, reg, "ci", "hunter2", "team/pdf", "1.0.0", "moved")
	f.mode.Store("redirect-manifest")
	before := len(f.side.seen())
	out, errOut, code := CLI(t, dir, env, "sync")
	if code == 0 || !strings.Contains(out+errOut, "only blob downloads may be redirected") {
		t.Fatalf("sync with a redirected manifest: %d\n%s%s", code, out, errOut)
	}
	if len(f.side.seen()) != before {
		t.Errorf("the redirected manifest request reached the other listener")
	}
	if rev, _ := ociPin(t, dir); rev != p.Manifest.Digest {
		t.Errorf("the pin moved to %q", rev)
	}
}

// TestOCIHangAndDribble: a registry that never answers, and one that
// sends a blob a byte at a time, fail the sync at the configured bounds
// (remote.oci.responseTimeout, remote.oci.fetchTimeout) with errors that
// name them; the last good pin holds.
func TestOCIHangAndDribble(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	p := ociPush(t, reg, "", "", "team/pdf", "1.0.0", "good", skill.BundleFile{Path: "big.txt", Data: []byte(strings.Repeat("z", 4096))})
	f := newOCIFront(t, reg, "", "")
	dir := ociDir(t, map[string]any{"oci": f.Host + "/team/pdf", "tag": "1.0.0", "insecure": true},
		map[string]any{"oci": map[string]any{"responseTimeout": "500ms", "fetchTimeout": "2s"}})
	if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	ociPush(t, reg, "", "", "team/pdf", "1.0.0", "moved", skill.BundleFile{Path: "big.txt", Data: []byte(strings.Repeat("y", 4096))})

	f.mode.Store("hang")
	start := time.Now()
	out, errOut, code := CLI(t, dir, nil, "sync", "--json")
	took := time.Since(start)
	if code != 1 || !strings.Contains(out, `"code": "remote-network"`) || !strings.Contains(out, "remote.oci.responseTimeout") {
		t.Fatalf("sync against a hanging registry: %d\n%s%s", code, out, errOut)
	}
	if took > 10*time.Second { // 500ms, and the process's start; the default bound is 30s
		t.Errorf("the hang took %s to fail: the bound of 500ms did not hold", took)
	}
	if rev, _ := ociPin(t, dir); rev != p.Manifest.Digest {
		t.Errorf("the pin moved to %q", rev)
	}

	f.mode.Store("dribble")
	start = time.Now()
	out, errOut, code = CLI(t, dir, nil, "sync")
	took = time.Since(start)
	if code != 1 || !strings.Contains(out+errOut, "remote.oci.fetchTimeout") {
		t.Fatalf("sync against a dribbling registry: %d, want a failure naming remote.oci.fetchTimeout\n%s%s", code, out, errOut)
	}
	if took > 15*time.Second { // 2s, and the process's start; the blob would take 400s
		t.Errorf("the dribble took %s to fail: the bound of 2s did not hold", took)
	}
	if rev, _ := ociPin(t, dir); rev != p.Manifest.Digest {
		t.Errorf("the pin moved to %q", rev)
	}
	if out, _, _ := CLI(t, dir, nil, "read", "--agent", "coder", "pdf", "SKILL.md"); !strings.Contains(out, "good") {
		t.Errorf("the last good snapshot is not served:\n%s", out)
	}
}

// TestOCILayerOverLimitNotDownloaded: a layer larger than
// remote.maxTotalSize, by its descriptor, is refused before a byte of it
// is downloaded; at the limit it is fetched.
func TestOCILayerOverLimitNotDownloaded(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	noise := make([]byte, 64<<10)
	rand.Read(noise)
	p := ociPush(t, reg, "", "", "team/pdf", "1.0.0", "big", skill.BundleFile{Path: "noise.bin", Data: noise})
	f := newOCIFront(t, reg, "", "")
	layer := p.Layer
	for _, c := range []struct {
		limit int64
		ok    bool
	}{{layer.Size - 1, false}, {layer.Size, true}} {
		dir := ociDir(t, map[string]any{"oci": f.Host + "/team/pdf", "tag": "1.0.0", "insecure": true}, map[string]any{"maxTotalSize": c.limit})
		before, _ := f.gets()
		out, errOut, code := CLI(t, dir, nil, "sync", "--json")
		after, _ := f.gets()
		fetched := 0
		for _, d := range after[len(before):] {
			if d == layer.Digest {
				fetched++
			}
		}
		if c.ok {
			if code != 0 || fetched != 1 {
				t.Errorf("limit %d (the layer's size): exit %d, layer fetched %d times\n%s%s", c.limit, code, fetched, out, errOut)
			}
			continue
		}
		if code != 1 || !strings.Contains(out, `"code": "remote-limit"`) || fetched != 0 {
			t.Errorf("limit %d (one under the layer's %d bytes): exit %d, layer fetched %d times; want remote-limit and no download\n%s%s", c.limit, layer.Size, code, fetched, out, errOut)
		}
		if rev, _ := ociPin(t, dir); rev != "" {
			t.Errorf("limit %d: pinned %s", c.limit, rev)
		}
	}
}

// TestOCIServeAndWebhook: `loadout serve` pins a new oci source at start
// and serves it; a tag moved upstream is served after the webhook
// (POST /v1/sources/ID/sync), not before; /v1/sources names the digest.
func TestOCIServeAndWebhook(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ociPush(t, reg, "", "", "team/pdf", "1.0.0", "served one")
	cfg := `{"agents": [{"agentId": "coder", "skills": [{"oci": "` + reg.Ref("team/pdf") + `", "tag": "1.0.0", "insecure": true, "id": "pdf"}]}], "remote": {"cache": "cache"}}`
	s := Start(t, Options{Config: cfg})
	read := func() string {
		code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/pdf/files/SKILL.md?raw=1", "", "")
		if code != 200 {
			t.Fatalf("read SKILL.md: %d %s\n%s", code, body, s.Log())
		}
		return body
	}
	if got := read(); !strings.Contains(got, "served one") {
		t.Fatalf("at start, served %q", got)
	}
	p2 := ociPush(t, reg, "", "", "team/pdf", "1.0.0", "served two")
	if got := read(); !strings.Contains(got, "served one") {
		t.Fatalf("before the webhook, served %q", got)
	}
	code, _, body := s.Do(t, "POST", "/v1/sources/pdf/sync", "", "")
	if code != 200 || !strings.Contains(body, `"moved":true`) {
		t.Fatalf("webhook: %d %s", code, body)
	}
	if got := read(); !strings.Contains(got, "served two") {
		t.Fatalf("after the webhook, served %q", got)
	}
	_, _, src := s.Do(t, "GET", "/v1/sources", "", "")
	if !strings.Contains(src, `"kind":"oci"`) || !strings.Contains(src, p2.Manifest.Digest) {
		t.Errorf("/v1/sources: %s", src)
	}
	s.Healthy(t)
}
