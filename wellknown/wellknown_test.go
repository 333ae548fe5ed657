package wellknown

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/service"
)

func TestMain(m *testing.M) {
	// Warnings are logged by design; keep test output readable.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

// pngBytes is not UTF-8: every byte value appears.
var pngBytes = func() []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i), byte(255-i))
	}
	return b
}()

type file struct {
	data string
	mode fs.FileMode
}

func md(name, desc string, extra ...string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n# %s\n\nDo the %s thing.\n", name, desc, strings.Join(extra, ""), name, name)
}

// testSkills is a multi-file skill (text, an executable script, a binary),
// a single-file skill and a hidden single-file skill.
func testSkills() map[string]file {
	return map[string]file{
		"multi/SKILL.md":                {md("multi", "A skill with files."), 0o644},
		"multi/references/guide.md":     {"# Guide\n\nSee the script.\n", 0o644},
		"multi/scripts/run.sh":          {"#!/bin/sh\necho ran \"$@\"\n", 0o755},
		"multi/assets/logo.png":         {string(pngBytes), 0o644},
		"multi/assets/deep/nested.json": {"{\"a\": [1, 2, 3]}\n", 0o644},
		"single/SKILL.md":               {md("single", "Only SKILL.md."), 0o644},
		"hidden/SKILL.md":               {md("hidden", "Invoked by people only.", "disable-model-invocation: true\n"), 0o644},
	}
}

func writeTree(t *testing.T, root string, files map[string]file) {
	t.Helper()
	for p, f := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, f.mode); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
}

// newService builds a catalog over root with agents "coder" (multi) and
// "writer" (single, hidden); the global catalog has every skill.
func newService(t *testing.T, root string) *service.Service {
	t.Helper()
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"multi"}}}},
		{AgentID: "writer", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"single", "hidden"}}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	return svc
}

// withPrincipal is the auth-free middleware of the tests: open access, or
// the scopes named in X-Test-Scopes.
func withPrincipal(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := service.Principal{Open: true}
		if s := r.Header.Get("X-Test-Scopes"); s != "" {
			p = service.Principal{TokenID: "t1", Scopes: strings.Split(s, ",")}
		}
		h.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
	})
}

// mux mounts the handler the way the server does: the global catalog at /,
// agents at /agents/ID/ (unstripped), and once more behind StripPrefix.
func mux(svc *service.Service) http.Handler {
	m := http.NewServeMux()
	m.Handle("/", Handler(svc, catalog.GlobalID))
	m.Handle("/agents/coder/", Handler(svc, "coder"))
	m.Handle("/agents/writer/", Handler(svc, "writer"))
	m.Handle("/agents/ghost/", Handler(svc, "ghost"))
	m.Handle("/stripped/coder/", http.StripPrefix("/stripped/coder", Handler(svc, "coder")))
	return withPrincipal(m)
}

func setup(t *testing.T) (*httptest.Server, string, *service.Service) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, testSkills())
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	t.Cleanup(srv.Close)
	return srv, root, svc
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, u string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, body}
}

func mustOK(t *testing.T, r response, what string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", what, r.status, r.body)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

type v2Index struct {
	Schema   string    `json:"$schema"`
	Skills   []entryV2 `json:"skills"`
	Warnings []Warning `json:"warnings"`
}

type v1Index struct {
	Skills   []entryV1 `json:"skills"`
	Warnings []Warning `json:"warnings"`
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

type unpacked struct {
	data []byte
	mode int64
}

// untar unpacks an archive, refusing anything but regular files with clean
// relative names.
func untar(t *testing.T, data []byte) (map[string]unpacked, []string) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]unpacked{}
	var order []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Fatalf("entry %s has type %q, want a regular file", h.Name, h.Typeflag)
		}
		if h.Format != tar.FormatUSTAR {
			t.Errorf("entry %s has format %v, want ustar", h.Name, h.Format)
		}
		if strings.HasPrefix(h.Name, "/") || strings.Contains(h.Name, "..") || strings.HasPrefix(h.Name, "multi/") {
			t.Fatalf("entry name %q: want a path relative to the skill root", h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = unpacked{b, h.Mode}
		order = append(order, h.Name)
	}
	return out, order
}

// sourceFiles reads a skill folder: path -> bytes and executable bit.
func sourceFiles(t *testing.T, dir string) map[string]unpacked {
	t.Helper()
	out := map[string]unpacked{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = unpacked{b, int64(info.Mode().Perm())}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func resolve(t *testing.T, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return b.ResolveReference(r).String()
}

func TestIndexV2(t *testing.T) {
	srv, root, _ := setup(t)
	indexURL := srv.URL + "/.well-known/agent-skills/index.json"
	r := get(t, indexURL)
	mustOK(t, r, "index")
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	idx := decode[v2Index](t, r.body)
	if idx.Schema != SchemaV2 {
		t.Errorf("$schema %q", idx.Schema)
	}
	var got []string
	for _, e := range idx.Skills {
		got = append(got, e.Name+" "+e.Type+" "+e.URL)
	}
	want := []string{"hidden skill-md hidden/SKILL.md", "multi archive multi.tar.gz", "single skill-md single/SKILL.md"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// multi's executable script is listed, with a warning that installers
	// drop the bit.
	if len(idx.Warnings) != 1 || idx.Warnings[0].Code != WarnExecutable || idx.Warnings[0].Skill != "multi" ||
		!strings.Contains(idx.Warnings[0].Message, `"scripts/run.sh"`) || r.header.Get("Loadout-Warnings") != "1" {
		t.Errorf("warnings %v, header %q", idx.Warnings, r.header.Get("Loadout-Warnings"))
	}
	for _, e := range idx.Skills {
		if !strings.HasPrefix(e.Digest, "sha256:") || len(e.Digest) != 71 || strings.ToLower(e.Digest) != e.Digest {
			t.Errorf("%s: digest %q is not sha256:<64 lowercase hex>", e.Name, e.Digest)
		}
		a := get(t, resolve(t, indexURL, e.URL))
		mustOK(t, a, e.URL)
		if sha(a.body) != e.Digest {
			t.Errorf("%s: served bytes hash to %s, index says %s", e.Name, sha(a.body), e.Digest)
		}
		if a.header.Get("ETag") == "" || a.header.Get("Cache-Control") != "private, no-cache" {
			t.Errorf("%s: ETag %q, Cache-Control %q", e.Name, a.header.Get("ETag"), a.header.Get("Cache-Control"))
		}
		src := sourceFiles(t, filepath.Join(root, e.Name))
		switch e.Type {
		case "skill-md":
			if !bytes.Equal(a.body, src["SKILL.md"].data) {
				t.Errorf("%s: SKILL.md differs", e.Name)
			}
			if ct := a.header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", e.Name, ct)
			}
		case "archive":
			if ct := a.header.Get("Content-Type"); ct != "application/gzip" {
				t.Errorf("%s: Content-Type %q", e.Name, ct)
			}
			files, order := untar(t, a.body)
			if order[0] != "SKILL.md" {
				t.Errorf("first entry %q, want SKILL.md", order[0])
			}
			if !sort.StringsAreSorted(order[1:]) {
				t.Errorf("entries not in path order: %v", order)
			}
			if len(files) != len(src) {
				t.Errorf("archive has %d files, the skill %d", len(files), len(src))
			}
			for p, s := range src {
				f, ok := files[p]
				if !ok {
					t.Errorf("archive lacks %s", p)
					continue
				}
				if !bytes.Equal(f.data, s.data) {
					t.Errorf("%s differs after unpacking", p)
				}
				if f.mode != s.mode {
					t.Errorf("%s: mode %o in the archive, %o on disk", p, f.mode, s.mode)
				}
			}
		}
	}

	// Conditional requests.
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on the index")
	}
	if c := get(t, indexURL, "If-None-Match", etag); c.status != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d", c.status)
	}
	if again := get(t, indexURL); !bytes.Equal(again.body, r.body) || again.header.Get("ETag") != etag {
		t.Error("a second request gave other bytes")
	}
}

func TestIndexV1(t *testing.T) {
	srv, root, _ := setup(t)
	r := get(t, srv.URL+"/.well-known/skills/index.json")
	mustOK(t, r, "legacy index")
	idx := decode[v1Index](t, r.body)
	var names []string
	for _, e := range idx.Skills {
		names = append(names, e.Name)
		src := sourceFiles(t, filepath.Join(root, e.Name))
		if e.Files[0] != "SKILL.md" || len(e.Files) != len(src) {
			t.Errorf("%s: files %v, on disk %d", e.Name, e.Files, len(src))
		}
		if e.Description == "" {
			t.Errorf("%s: no description", e.Name)
		}
		for _, p := range e.Files {
			f := get(t, srv.URL+"/.well-known/skills/"+e.Name+"/"+p)
			mustOK(t, f, p)
			if !bytes.Equal(f.body, src[p].data) {
				t.Errorf("%s/%s: served bytes differ", e.Name, p)
			}
			// The same file under agent-skills/.
			if g := get(t, srv.URL+"/.well-known/agent-skills/"+e.Name+"/"+p); !bytes.Equal(g.body, src[p].data) {
				t.Errorf("agent-skills/%s/%s: served bytes differ", e.Name, p)
			}
		}
	}
	if strings.Join(names, ",") != "hidden,multi,single" {
		t.Errorf("skills %v", names)
	}
	types := map[string]string{
		"multi/assets/logo.png":         "image/png",
		"multi/scripts/run.sh":          "text/plain; charset=utf-8", // a script is read, not run (internal/inert)
		"multi/references/guide.md":     "text/markdown; charset=utf-8",
		"multi/assets/deep/nested.json": "application/json",
		"multi/SKILL.md":                "text/markdown; charset=utf-8",
	}
	for p, want := range types {
		if got := get(t, srv.URL+"/.well-known/skills/"+p).header.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", p, got, want)
		}
	}
	// The binary file is flagged for installers that read files as text,
	// and the executable script for installers that drop the bit.
	if len(idx.Warnings) != 2 || idx.Warnings[0].Code != WarnLegacyNotText || idx.Warnings[0].Skill != "multi" ||
		!strings.Contains(idx.Warnings[0].Message, "assets/logo.png") ||
		idx.Warnings[1].Code != WarnExecutable || !strings.Contains(idx.Warnings[1].Message, `"scripts/run.sh"`) {
		t.Errorf("warnings %+v", idx.Warnings)
	}
	if r.header.Get("Loadout-Warnings") != "2" {
		t.Errorf("Loadout-Warnings %q", r.header.Get("Loadout-Warnings"))
	}
}

func names2(t *testing.T, u string, hdr ...string) string {
	t.Helper()
	r := get(t, u, hdr...)
	mustOK(t, r, u)
	var v struct {
		Skills []struct{ Name string } `json:"skills"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range v.Skills {
		out = append(out, s.Name)
	}
	return strings.Join(out, ",")
}

func TestPerAgentMount(t *testing.T) {
	srv, _, _ := setup(t)
	for _, c := range []struct{ prefix, want string }{
		{"/agents/coder", "multi"},
		{"/stripped/coder", "multi"},
		{"/agents/writer", "hidden,single"},
		{"", "hidden,multi,single"},
	} {
		for _, idx := range []string{"agent-skills", "skills"} {
			if got := names2(t, srv.URL+c.prefix+"/.well-known/"+idx+"/index.json"); got != c.want {
				t.Errorf("%s %s: %s, want %s", c.prefix, idx, got, c.want)
			}
		}
	}
	// Relative URLs resolve under the mount.
	indexURL := srv.URL + "/agents/coder/.well-known/agent-skills/index.json"
	idx := decode[v2Index](t, get(t, indexURL).body)
	a := get(t, resolve(t, indexURL, idx.Skills[0].URL))
	mustOK(t, a, "archive under the agent mount")
	if sha(a.body) != idx.Skills[0].Digest {
		t.Error("archive digest differs under the agent mount")
	}
	if !strings.HasPrefix(resolve(t, indexURL, idx.Skills[0].URL), srv.URL+"/agents/coder/.well-known/agent-skills/") {
		t.Errorf("archive URL resolves to %s", resolve(t, indexURL, idx.Skills[0].URL))
	}
	// An agent does not serve another agent's skill files.
	if r := get(t, srv.URL+"/agents/coder/.well-known/skills/single/SKILL.md"); r.status != http.StatusNotFound {
		t.Errorf("coder serving single: %d", r.status)
	}
	if r := get(t, srv.URL+"/agents/writer/.well-known/agent-skills/multi.tar.gz"); r.status != http.StatusNotFound {
		t.Errorf("writer serving multi's archive: %d", r.status)
	}
	// Same skill, same bytes, whichever mount.
	g := decode[v2Index](t, get(t, srv.URL+"/.well-known/agent-skills/index.json").body)
	for _, e := range g.Skills {
		if e.Name == "multi" && e.Digest != idx.Skills[0].Digest {
			t.Error("the global and agent archives of multi differ")
		}
	}
}

func TestScopes(t *testing.T) {
	srv, _, _ := setup(t)
	other := []string{"X-Test-Scopes", "agent:other"}
	for _, p := range []string{
		"/agents/coder/.well-known/agent-skills/index.json",
		"/agents/coder/.well-known/skills/index.json",
		"/agents/coder/.well-known/agent-skills/multi.tar.gz",
		"/agents/coder/.well-known/skills/multi/SKILL.md",
		"/agents/coder/.well-known/agent-skills/multi/scripts/run.sh",
		"/.well-known/agent-skills/index.json", // the global catalog needs admin
		"/agents/ghost/.well-known/skills/index.json",
	} {
		r := get(t, srv.URL+p, other...)
		if r.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", p, r.status)
			continue
		}
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Code != "forbidden" || e.Error.Message == "" {
			t.Errorf("%s: body %s", p, r.body)
		}
		if r.header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", p, r.header.Get("Content-Type"))
		}
	}
	if got := names2(t, srv.URL+"/agents/coder/.well-known/agent-skills/index.json", "X-Test-Scopes", "agent:coder"); got != "multi" {
		t.Errorf("agent:coder sees %q", got)
	}
	if r := get(t, srv.URL+"/agents/ghost/.well-known/skills/index.json"); r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"not_found"`) {
		t.Errorf("unknown agent: %d %s", r.status, r.body)
	}
}

func TestRefusals(t *testing.T) {
	srv, _, _ := setup(t)
	for p, want := range map[string]int{
		"/.well-known/skills/multi/..%2f..%2fsingle/SKILL.md": http.StatusBadRequest,
		"/.well-known/skills/multi/a%01b":                     http.StatusBadRequest,
		"/.well-known/skills/multi/nope.txt":                  http.StatusNotFound,
		"/.well-known/skills/nope/SKILL.md":                   http.StatusNotFound,
		"/.well-known/skills/multi":                           http.StatusNotFound,
		"/.well-known/agent-skills/single.tar.gz":             http.StatusNotFound, // a skill-md entry has no archive
		"/.well-known/agent-skills/nope.tar.gz":               http.StatusNotFound,
		"/.well-known/other/index.json":                       http.StatusNotFound,
		"/index.json":                                         http.StatusNotFound,
	} {
		if r := get(t, srv.URL+p); r.status != want {
			t.Errorf("%s: status %d, want %d (%s)", p, r.status, want, r.body)
		}
	}
	res, err := http.Post(srv.URL+"/.well-known/skills/index.json", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	// Served files cannot act as pages of this origin.
	r := get(t, srv.URL+"/.well-known/skills/multi/references/guide.md")
	if r.header.Get("Content-Security-Policy") != inert.CSP || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", r.header)
	}
}

func TestCacheFollowsGeneration(t *testing.T) {
	srv, root, svc := setup(t)
	u := srv.URL + "/.well-known/agent-skills/index.json"
	first := get(t, u)
	sl := slotFor(svc, catalog.GlobalID)
	s1 := sl.snap
	get(t, u)
	if sl.snap != s1 {
		t.Fatal("the index was rebuilt without a reload")
	}
	// A reload with no change: a new snapshot with the same bytes.
	svc.Reload(context.Background(), "test")
	second := get(t, u)
	if sl.snap == s1 || !bytes.Equal(first.body, second.body) {
		t.Fatal("after a reload with no change: not rebuilt, or other bytes")
	}
	// A changed file changes the archive's digest and the ETag.
	if err := os.WriteFile(filepath.Join(root, "multi/references/guide.md"), []byte("# Guide, v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc.Reload(context.Background(), "test")
	third := get(t, u)
	if bytes.Equal(second.body, third.body) || second.header.Get("ETag") == third.header.Get("ETag") {
		t.Fatal("a changed file did not change the index")
	}
	idx := decode[v2Index](t, third.body)
	for _, e := range idx.Skills {
		if e.Type == "archive" {
			a := get(t, resolve(t, u, e.URL))
			files, _ := untar(t, a.body)
			if sha(a.body) != e.Digest || string(files["references/guide.md"].data) != "# Guide, v2\n" {
				t.Error("the archive after the reload is not the new one")
			}
		}
	}
}

func TestStaleBytesRefused(t *testing.T) {
	srv, root, svc := setup(t)
	u := srv.URL + "/.well-known/agent-skills/index.json"
	before := decode[v2Index](t, get(t, u).body)
	// Change files on disk without a reload.
	if err := os.WriteFile(filepath.Join(root, "single/SKILL.md"), []byte(md("single", "Changed.")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := get(t, srv.URL+"/.well-known/agent-skills/single/SKILL.md"); r.status != http.StatusConflict {
		t.Fatalf("changed SKILL.md: status %d", r.status)
	}
	if slotFor(svc, catalog.GlobalID).snap != nil {
		t.Fatal("the stale index was kept")
	}
	after := decode[v2Index](t, get(t, u).body)
	for i := range after.Skills {
		if after.Skills[i].Name == "single" && after.Skills[i].Digest == before.Skills[i].Digest {
			t.Error("the rebuilt index has the old digest")
		}
	}
	// An archive rebuilt after eviction must still match its digest.
	if err := os.WriteFile(filepath.Join(root, "multi/references/guide.md"), []byte("# Other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	archives.mu.Lock()
	for k, el := range archives.byKey {
		archives.order.Remove(el)
		delete(archives.byKey, k)
	}
	archives.size = 0
	archives.mu.Unlock()
	if r := get(t, srv.URL+"/.well-known/agent-skills/multi.tar.gz"); r.status != http.StatusConflict {
		t.Fatalf("changed archive: status %d", r.status)
	}
	idx := decode[v2Index](t, get(t, u).body)
	for _, e := range idx.Skills {
		if e.Name == "multi" {
			a := get(t, srv.URL+"/.well-known/agent-skills/multi.tar.gz")
			mustOK(t, a, "archive")
			if sha(a.body) != e.Digest {
				t.Error("archive does not match the rebuilt index")
			}
		}
	}
}

func TestLimitsAreReported(t *testing.T) {
	root := t.TempDir()
	files := testSkills()
	many := map[string]file{"many/SKILL.md": {md("many", "Too many files."), 0o644}}
	for i := 0; i < MaxFiles; i++ { // with SKILL.md: MaxFiles+1
		many[fmt.Sprintf("many/f/%04d.txt", i)] = file{"x\n", 0o644}
	}
	for p, f := range many {
		files[p] = f
	}
	files["edge/SKILL.md"] = file{md("edge", "Exactly the file limit."), 0o644}
	for i := 0; i < MaxFiles-1; i++ {
		files[fmt.Sprintf("edge/f/%04d.txt", i)] = file{"y\n", 0o644}
	}
	files["Bad_Name/SKILL.md"] = file{md("Bad_Name", "Not a name installers take."), 0o644}
	files["pct/SKILL.md"] = file{md("pct", "A file name with a percent sign."), 0o644}
	files["pct/100%.txt"] = file{"full\n", 0o644}
	files["long/SKILL.md"] = file{md("long", strings.Repeat("é", MaxDescription+5)), 0o644}
	files["bom/SKILL.md"] = file{md("bom", "A BOM file."), 0o644}
	files["bom/notes.txt"] = file{"\xef\xbb\xbfhello\n", 0o644}
	files["deeppath/SKILL.md"] = file{md("deeppath", "A path ustar cannot hold."), 0o644}
	files["deeppath/"+strings.Repeat("d", 120)+".txt"] = file{"z\n", 0o644}
	writeTree(t, root, files)
	// Over 50 MiB without writing 50 MiB: a sparse file.
	writeTree(t, root, map[string]file{"huge/SKILL.md": {md("huge", "Too big."), 0o644}})
	f, err := os.Create(filepath.Join(root, "huge/big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()

	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	defer srv.Close()

	r2 := get(t, srv.URL+"/.well-known/agent-skills/index.json")
	v2 := decode[v2Index](t, r2.body)
	r1 := get(t, srv.URL+"/.well-known/skills/index.json")
	v1 := decode[v1Index](t, r1.body)
	codes := func(ws []Warning) string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Skill+":"+w.Code)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	if got, want := codes(v2.Warnings), "Bad_Name:name-unsupported deeppath:archive-path huge:too-large long:description-shortened many:too-many-files multi:executable-dropped"; got != want {
		t.Errorf("0.2.0 warnings:\n%s\nwant\n%s", got, want)
	}
	if got, want := codes(v1.Warnings), "Bad_Name:name-unsupported bom:legacy-bom huge:too-large many:too-many-files multi:executable-dropped multi:legacy-not-text pct:legacy-path"; got != want {
		t.Errorf("0.1.0 warnings:\n%s\nwant\n%s", got, want)
	}
	if r2.header.Get("Loadout-Warnings") != "6" || r1.header.Get("Loadout-Warnings") != "7" {
		t.Errorf("Loadout-Warnings %q, %q", r2.header.Get("Loadout-Warnings"), r1.header.Get("Loadout-Warnings"))
	}
	in := func(names []string) string { sort.Strings(names); return strings.Join(names, ",") }
	var n2, n1 []string
	for _, e := range v2.Skills {
		n2 = append(n2, e.Name)
		if e.Name == "long" {
			if units := len(utf16.Encode([]rune(e.Description))); units != MaxDescription {
				t.Errorf("shortened description has %d units", units)
			}
		}
	}
	for _, e := range v1.Skills {
		n1 = append(n1, e.Name)
	}
	if got := in(n2); got != "bom,edge,hidden,long,multi,pct,single" {
		t.Errorf("0.2.0 skills %s", got)
	}
	if got := in(n1); got != "bom,deeppath,edge,hidden,long,multi,single" {
		t.Errorf("0.1.0 skills %s", got)
	}
	// Exactly 1,000 files is served, and unpacks whole.
	a := get(t, srv.URL+"/.well-known/agent-skills/edge.tar.gz")
	mustOK(t, a, "edge archive")
	if files, _ := untar(t, a.body); len(files) != MaxFiles {
		t.Errorf("edge archive has %d files", len(files))
	}
}

func TestLowercaseEntryFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]file{
		"lower/skill.md":  {md("lower", "Entry file in lower case."), 0o644},
		"lower/notes.txt": {"n\n", 0o644},
	})
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	defer srv.Close()
	v1 := decode[v1Index](t, get(t, srv.URL+"/.well-known/skills/index.json").body)
	if len(v1.Skills) != 1 || strings.Join(v1.Skills[0].Files, ",") != "SKILL.md,notes.txt" {
		t.Fatalf("%+v", v1)
	}
	r := get(t, srv.URL+"/.well-known/skills/lower/SKILL.md")
	mustOK(t, r, "SKILL.md of a skill.md skill")
	if !strings.Contains(string(r.body), "name: lower") {
		t.Errorf("body %s", r.body)
	}
	a := get(t, srv.URL+"/.well-known/agent-skills/lower.tar.gz")
	mustOK(t, a, "archive")
	files, order := untar(t, a.body)
	if order[0] != "SKILL.md" || !bytes.Equal(files["SKILL.md"].data, r.body) {
		t.Errorf("archive entries %v", order)
	}
}

func TestArchiveDeterministic(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, testSkills())
	svc := newService(t, root)
	e, ok := svc.Catalog().Global().Lookup("multi")
	if !ok {
		t.Fatal("no multi")
	}
	b, err := e.Skill.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	x, err := writeArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	y, err := writeArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatal("two archives of one skill differ")
	}
	// A compressor from the pool writes what a new one writes: pooling
	// them changed no digest. (The first archives above put theirs back.)
	fresh := &tarball{}
	fresh.gz, _ = gzip.NewWriterLevel(&fresh.buf, gzip.BestCompression)
	fresh.tw = tar.NewWriter(fresh.gz)
	z, err := writeArchiveTo(fresh, b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, z) {
		t.Fatal("an archive from a pooled compressor differs from a new compressor's")
	}
	gz, err := gzip.NewReader(bytes.NewReader(x))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q, time %v", gz.Name, gz.ModTime)
	}
}

func TestHEAD(t *testing.T) {
	srv, _, _ := setup(t)
	res, err := http.Head(srv.URL + "/.well-known/agent-skills/multi.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ContentLength <= 0 || res.Header.Get("ETag") == "" {
		t.Errorf("HEAD: %d, length %d", res.StatusCode, res.ContentLength)
	}
}

func TestWarningsAreLogged(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]file{"Bad_Name/SKILL.md": {md("Bad_Name", "Not a name installers take."), 0o644}})
	svc := newService(t, root)
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	h := Handler(svc, "")
	slog.SetDefault(old)
	srv := httptest.NewServer(withPrincipal(h))
	defer srv.Close()
	get(t, srv.URL+"/.well-known/agent-skills/index.json")
	get(t, srv.URL+"/.well-known/skills/index.json") // cached: logged once per build
	if n := strings.Count(buf.String(), "code=name-unsupported"); n != 2 {
		t.Errorf("logged %d times, want once per index:\n%s", n, buf.String())
	}
}

// A skill's active files (HTML, XHTML, SVG, XML, JavaScript), whatever the
// case of their names, are served under the well-known routes, and the
// link URLs that reach them, as text or bytes, never as their own type,
// and always sandboxed: before, page.html went out as text/html, so a page
// of any site that navigated to it ran its script in this origin.
func TestActiveFilesInert(t *testing.T) {
	root := t.TempDir()
	files := testSkills()
	active := map[string]string{
		"page.html": "text/plain; charset=utf-8", "page.HTML": "text/plain; charset=utf-8", "page.htm": "text/plain; charset=utf-8",
		"page.xhtml": "text/plain; charset=utf-8", "feed.xml": "text/plain; charset=utf-8", "pic.svg": "text/plain; charset=utf-8",
		"app.js": "text/plain; charset=utf-8", "app.mjs": "text/plain; charset=utf-8", "style.css": "text/plain; charset=utf-8",
		"pic.svgz": "application/octet-stream", "doc.pdf": "application/octet-stream",
	}
	for p := range active {
		data := "<html><script>document.title='ran'</script></html>\n"
		switch p {
		case "pic.svgz":
			data = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe"
		case "doc.pdf":
			data = "%PDF-1.4\n\xff\xfe\x00"
		}
		files["multi/assets/"+p] = file{data, 0o644}
	}
	writeTree(t, root, files)
	srv := httptest.NewServer(mux(newService(t, root)))
	t.Cleanup(srv.Close)
	for p, want := range active {
		for _, u := range []string{"/.well-known/skills/multi/assets/" + p, "/.well-known/agent-skills/multi/assets/" + p, "/agents/coder/.well-known/agent-skills/multi/assets/" + p} {
			r := get(t, srv.URL+u)
			if r.status != 200 || r.header.Get("Content-Type") != want || r.header.Get("Content-Security-Policy") != inert.CSP ||
				r.header.Get("X-Content-Type-Options") != "nosniff" || (want == inert.Binary) != strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") {
				t.Errorf("%s: %d %v", u, r.status, r.header)
			}
		}
	}
	// An <img> gets the SVG as an image, and the answer says it varies.
	r := get(t, srv.URL+"/.well-known/skills/multi/assets/pic.svg", "Sec-Fetch-Dest", "image")
	if r.header.Get("Content-Type") != "image/svg+xml" || r.header.Get("Vary") != "Sec-Fetch-Dest" {
		t.Errorf("pic.svg as an image: %v", r.header)
	}
}
