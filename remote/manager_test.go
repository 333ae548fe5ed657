package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// dirFetcher is a real fetcher over folders on disk: the remote is a
// folder holding one subfolder per revision and a file HEAD naming the
// current one. Tests move HEAD, rewrite a revision, or make fetches fail.
type dirFetcher struct {
	remote string
	fail   error // Fetch fails with it
}

func (f *dirFetcher) Resolve(context.Context) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.remote, "HEAD"))
	if err != nil {
		return "", Errorf("", CodeNetwork, "cannot reach %s: %v", f.remote, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (f *dirFetcher) Fetch(_ context.Context, rev, dir string, _ Limits) ([]string, error) {
	if f.fail != nil {
		os.MkdirAll(filepath.Join(dir, "half"), 0o755) // a fetch that stopped half way
		return nil, f.fail
	}
	src := filepath.Join(f.remote, rev)
	if _, err := os.Stat(src); err != nil {
		return nil, Errorf("", CodeRef, "revision %s is gone", rev)
	}
	return nil, os.CopyFS(dir, os.DirFS(src))
}

type fixture struct {
	t      *testing.T
	remote string
	f      *dirFetcher
	opt    Options
	spec   Spec
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{t: t, remote: filepath.Join(root, "remote")}
	fx.f = &dirFetcher{remote: fx.remote}
	fx.opt = Options{Cache: filepath.Join(root, "cache"), LockPath: filepath.Join(root, LockName),
		Fetchers: map[string]func(Spec) (Fetcher, error){"git": func(Spec) (Fetcher, error) { return fx.f, nil }}}
	fx.spec = Spec{Git: "https://user:hunter2@example.com/org/skills.git", Ref: "main", Paths: []string{"skills"}, Token: "s3cret-token"}
	return fx
}

// revision writes revision rev with the given skills (name → body) and
// points HEAD at it.
func (fx *fixture) revision(rev string, skills map[string]string) {
	fx.t.Helper()
	for name, body := range skills {
		dir := filepath.Join(fx.remote, rev, "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fx.t.Fatal(err)
		}
		md := "---\nname: " + name + "\ndescription: " + name + " does things. Use when asked.\n---\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			fx.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte(rev), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *fixture) manager() *Manager {
	fx.t.Helper()
	m, err := NewManager([]Spec{fx.spec}, fx.opt)
	if err != nil {
		fx.t.Fatal(err)
	}
	return m
}

func names(sk []*skill.Skill) []string {
	var out []string
	for _, s := range sk {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

func codes(ds []skill.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

func TestSyncPinsAndSwaps(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1", "git-review": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	if id != "skills@main" {
		t.Fatalf("id %q", id)
	}

	// First sync: pinned, served, with provenance.
	ch := m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || ch.From != "" || ch.To != "aaa111" || !slices.Equal(ch.Added, []string{"git-review", "pdf"}) {
		t.Fatalf("first sync: %+v", ch)
	}
	sk, _ := m.Skills(id)
	if got := names(sk); !slices.Equal(got, []string{"git-review", "pdf"}) {
		t.Fatalf("skills %v", got)
	}
	o := sk[0].Origin
	if o.Kind != "git" || o.Root != "https://***@example.com/org/skills.git" || o.Ref != "main" || o.Revision != "aaa111" || !strings.HasPrefix(o.Provenance, "skills/") {
		t.Errorf("origin %+v", o)
	}
	pin := m.Pin(id)
	if pin == nil || pin.Revision != "aaa111" || len(pin.Skills) != 2 || !strings.HasPrefix(pin.Digest, "sha256:") {
		t.Fatalf("pin %+v", pin)
	}
	lock, _ := os.ReadFile(fx.opt.LockPath)
	if strings.Contains(string(lock), "hunter2") || strings.Contains(string(lock), "s3cret") {
		t.Errorf("a credential is in the lock file:\n%s", lock)
	}

	// No change: nothing moves.
	if ch := m.Sync(context.Background())[0]; ch.Err != nil || ch.Moved {
		t.Fatalf("re-sync: %+v", ch)
	}

	// The branch moves: one skill changed, one added, one removed.
	fx.revision("bbb222", map[string]string{"pdf": "v2", "deploy": "v1"})
	ch = m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || ch.From != "aaa111" || ch.To != "bbb222" ||
		!slices.Equal(ch.Added, []string{"deploy"}) || !slices.Equal(ch.Removed, []string{"git-review"}) || !slices.Equal(ch.Changed, []string{"pdf"}) {
		t.Fatalf("moved: %+v", ch)
	}
	if ch.Digests["pdf"] == pin.Skills["pdf"] || ch.Digests["git-review"] != pin.Skills["git-review"] {
		t.Errorf("digests %v", ch.Digests)
	}
	if s := ch.Summary(); !strings.Contains(s, "aaa111 → bbb222") || !strings.Contains(s, "1 added (deploy)") {
		t.Errorf("summary %q", s)
	}
	sk, _ = m.Skills(id)
	if got := names(sk); !slices.Equal(got, []string{"deploy", "pdf"}) {
		t.Fatalf("after the move: %v", got)
	}
}

func TestFailedSyncKeepsLastGood(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	m.Sync(context.Background())
	lockBefore, _ := os.ReadFile(fx.opt.LockPath)

	cases := []struct {
		name string
		prep func()
		code string
	}{
		{"a fetch that breaks half way", func() {
			fx.revision("bbb222", map[string]string{"pdf": "v2"})
			fx.f.fail = Errorf("", CodeNetwork, "connection reset by https://user:hunter2@example.com")
		}, CodeNetwork},
		{"a repository with no skills left", func() {
			fx.f.fail = nil
			os.MkdirAll(filepath.Join(fx.remote, "ccc333", "skills"), 0o755)
			os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("ccc333"), 0o644)
		}, CodeInvalid},
		{"a bad ref", func() {
			os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("gone999"), 0o644)
		}, CodeRef},
		{"an unreachable remote", func() {
			os.Remove(filepath.Join(fx.remote, "HEAD"))
		}, CodeNetwork},
	}
	for _, tc := range cases {
		tc.prep()
		ch := m.Sync(context.Background())[0]
		if ch.Err == nil || CodeOf(ch.Err) != tc.code {
			t.Fatalf("%s: %+v", tc.name, ch)
		}
		if strings.Contains(ch.Err.Error(), "hunter2") {
			t.Errorf("%s: a credential in the error: %v", tc.name, ch.Err)
		}
		sk, diags := m.Skills(id)
		if got := names(sk); !slices.Equal(got, []string{"pdf"}) || sk[0].Origin.Revision != "aaa111" {
			t.Fatalf("%s: the last good snapshot is not served: %v", tc.name, got)
		}
		if !slices.Contains(codes(diags), CodeStale) {
			t.Errorf("%s: no stale warning: %v", tc.name, diags)
		}
		if lock, _ := os.ReadFile(fx.opt.LockPath); string(lock) != string(lockBefore) {
			t.Errorf("%s: the lock moved", tc.name)
		}
		// Nothing half-fetched is left in the cache.
		if got := cacheEntries(t, filepath.Join(fx.opt.Cache, id)); len(got) != 1 || entryRev(got[0]) != "aaa111" {
			t.Errorf("%s: the cache holds %v, not the one snapshot of aaa111", tc.name, got)
		}
	}
}

func TestOpenUsesThePin(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	m.Sync(context.Background())

	// The remote moves; a new server opens the pinned snapshot, not HEAD.
	fx.revision("bbb222", map[string]string{"pdf": "v2", "deploy": "v1"})
	m2 := fx.manager()
	if d := m2.Open(context.Background(), false); len(d) != 0 {
		t.Fatalf("open: %v", d)
	}
	if sk, _ := m2.Skills(id); !slices.Equal(names(sk), []string{"pdf"}) || sk[0].Origin.Revision != "aaa111" {
		t.Fatalf("open served %v", names(sk))
	}

	// With the cache gone, the pinned revision is fetched again.
	os.RemoveAll(fx.opt.Cache)
	m3 := fx.manager()
	if d := m3.Open(context.Background(), false); len(d) != 0 {
		t.Fatalf("open without cache: %v", d)
	}
	if sk, _ := m3.Skills(id); !slices.Equal(names(sk), []string{"pdf"}) {
		t.Fatalf("refetched %v", names(sk))
	}

	// The remote rewrote the pinned revision (or the snapshot was edited):
	// the lock no longer matches, and the error says what to run.
	os.RemoveAll(fx.opt.Cache)
	fx.revision("aaa111", map[string]string{"pdf": "tampered"})
	m4 := fx.manager()
	d := m4.Open(context.Background(), false)
	if len(d) != 1 || d[0].Code != CodeLock || !strings.Contains(d[0].Message, "loadout sync "+id) {
		t.Fatalf("tampered: %v", d)
	}
	if sk, _ := m4.Skills(id); len(sk) != 0 {
		t.Errorf("a snapshot that does not match the lock is served: %v", names(sk))
	}

	// Check says the remote moved and what would change, and moves nothing.
	fx.revision("bbb222", map[string]string{"pdf": "v2", "deploy": "v1"})
	ch := m.Check(context.Background())[0]
	if ch.Err != nil || !ch.Moved || !slices.Equal(ch.Added, []string{"deploy"}) || !slices.Equal(ch.Changed, []string{"pdf"}) {
		t.Fatalf("check: %+v", ch)
	}
	if p := m.Pin(id); p.Revision != "aaa111" {
		t.Errorf("check moved the pin to %s", p.Revision)
	}
}

func TestOpenUnpinned(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	d := m.Open(context.Background(), false)
	if len(d) != 1 || d[0].Code != CodeUnknown || !strings.Contains(d[0].Message, "loadout sync") {
		t.Fatalf("unpinned: %v", d)
	}
	if d := m.Open(context.Background(), true); len(d) != 1 || d[0].Code != CodeSynced {
		t.Fatalf("pinNew: %v", d)
	}
	if p := m.Pin(m.Specs()[0].ID); p == nil || p.Revision != "aaa111" {
		t.Fatalf("not pinned: %+v", p)
	}
	// A config edit (another ref) makes the old pin not count.
	fx.spec.Ref = "release"
	fx.spec.ID = "skills@main"
	m2 := fx.manager()
	if d := m2.Open(context.Background(), false); len(d) != 1 || d[0].Code != CodeUnknown {
		t.Fatalf("pin for another ref used: %v", d)
	}
}

func TestNewManagerRefuses(t *testing.T) {
	fx := newFixture(t)
	for _, specs := range [][]Spec{
		{{Git: "a"}, {Git: "b/a"}},             // the same default id
		{{Git: "x", Index: "https://h/i"}},     // two locations
		{{Git: "x", Paths: []string{"../up"}}}, // a path out of the repository
		{{Git: "x", ID: ".hidden"}},
	} {
		if _, err := NewManager(specs, fx.opt); err == nil {
			t.Errorf("%+v accepted", specs)
		}
	}
	os.WriteFile(fx.opt.LockPath, []byte(`{"lockVersion": 9, "sources": []}`), 0o644)
	if _, err := NewManager(nil, fx.opt); err == nil || CodeOf(err) != CodeLock || !strings.Contains(err.Error(), "upgrade loadout") {
		t.Errorf("newer lock: %v", err)
	}
	os.WriteFile(fx.opt.LockPath, []byte(`not json`), 0o644)
	if _, err := NewManager(nil, fx.opt); err == nil || !strings.Contains(err.Error(), fx.opt.LockPath) {
		t.Errorf("bad lock: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@host/x":            "https://***@host/x",
		"fetch https://tok@h/a failed":      "fetch https://***@h/a failed",
		"no creds https://host/a":           "no creds https://host/a",
		"two https://a:b@x and ssh://g@y/z": "two https://***@x and ssh://***@y/z",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	e := Errorf("s", CodeNetwork, "GET %s", "https://x:y@h/")
	if strings.Contains(e.Error(), "x:y") || !errors.Is(e, e) {
		t.Errorf("Errorf kept a credential: %v", e)
	}
}

// cacheEntries are the names in a source's cache folder, leases aside,
// and each lease's name prefixed with "lease:" when its folder is gone.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.Name() != leaseDir {
			out = append(out, e.Name())
		}
	}
	leases, _ := os.ReadDir(filepath.Join(dir, leaseDir))
	for _, e := range leases {
		if _, err := os.Lstat(filepath.Join(dir, e.Name())); err != nil {
			out = append(out, "lease:"+e.Name())
		}
	}
	return out
}
