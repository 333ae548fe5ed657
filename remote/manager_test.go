package remote

import (
	"context"
	"errors"
	"fmt"
	"github.com/loadout/loadout/internal/testutil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
)

// dirFetcher is a real fetcher over folders on disk: the remote is a
// folder holding one subfolder per revision and a file HEAD naming the
// current one. Tests move HEAD, rewrite a revision, or make fetches fail.
type dirFetcher struct {
	remote string
	fail   error  // Fetch fails with it
	during func() // runs in the middle of a Fetch, once
	count  int    // fetches so far
}

func (f *dirFetcher) Resolve(context.Context) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.remote, "HEAD"))
	if err != nil {
		return "", Errorf("", CodeNetwork, "cannot reach %s: %v", f.remote, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (f *dirFetcher) Fetch(_ context.Context, rev, dir string, _ Limits) ([]string, error) {
	f.count++
	if d := f.during; d != nil {
		f.during = nil
		d()
	}
	if f.fail != nil {
		// a fetch that stopped half way
		if err := os.MkdirAll(filepath.Join(dir, "half"), 0o755); err != nil {
			return nil, err
		}
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

// pinnedFixture is a fixture whose remote is at aaa111 with skills, and
// a manager that has synced and pinned it, with the source's id.
func pinnedFixture(t *testing.T, skills map[string]string) (*fixture, *Manager, string) {
	t.Helper()
	fx := newFixture(t)
	fx.revision("aaa111", skills)
	m := fx.manager()
	if ch := m.Sync(context.Background())[0]; ch.Err != nil {
		t.Fatalf("the first sync: %v", ch.Err)
	}
	return fx, m, m.Specs()[0].ID
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
	fx, m, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
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
			testutil.Must(t, os.MkdirAll(filepath.Join(fx.remote, "ccc333", "skills"), 0o755))
			testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("ccc333"), 0o644))
		}, CodeInvalid},
		{"a bad ref", func() {
			testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("gone999"), 0o644))
		}, CodeRef},
		{"an unreachable remote", func() {
			testutil.Must(t, os.Remove(filepath.Join(fx.remote, "HEAD")))
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
	fx, m, id := pinnedFixture(t, map[string]string{"pdf": "v1"})

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
	testutil.Must(t, os.RemoveAll(fx.opt.Cache))
	m3 := fx.manager()
	if d := m3.Open(context.Background(), false); len(d) != 0 {
		t.Fatalf("open without cache: %v", d)
	}
	if sk, _ := m3.Skills(id); !slices.Equal(names(sk), []string{"pdf"}) {
		t.Fatalf("refetched %v", names(sk))
	}

	// The remote rewrote the pinned revision (or the snapshot was edited):
	// the lock no longer matches, and the error says what to run.
	testutil.Must(t, os.RemoveAll(fx.opt.Cache))
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
	testutil.Must(t, os.WriteFile(fx.opt.LockPath, []byte(`{"lockVersion": 9, "sources": []}`), 0o644))
	if _, err := NewManager(nil, fx.opt); err == nil || CodeOf(err) != CodeLock || !strings.Contains(err.Error(), "upgrade loadout") {
		t.Errorf("newer lock: %v", err)
	}
	testutil.Must(t, os.WriteFile(fx.opt.LockPath, []byte(`not json`), 0o644))
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

// body is skill name's body as source id serves it.
func body(t *testing.T, m *Manager, id, name string) string {
	t.Helper()
	sk, _ := m.Skills(id)
	for _, s := range sk {
		if s.Name == name {
			b, err := s.Body()
			if err != nil {
				t.Fatalf("%s: body: %v", name, err)
			}
			return strings.TrimSpace(b)
		}
	}
	t.Fatalf("%s is not served: %v", name, names(sk))
	return ""
}

// TestProvenanceIsEachSkillsFolder: every skill of a source carries its
// own folder, not the last one scanned (they shared one Origin).
func TestProvenanceIsEachSkillsFolder(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1", "xlsx": "v1", "deploy": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	if ch := m.Sync(context.Background())[0]; ch.Err != nil {
		t.Fatal(ch.Err)
	}
	sk, _ := m.Skills(id)
	if len(sk) != 3 {
		t.Fatalf("skills %v", names(sk))
	}
	for _, s := range sk {
		if s.Origin.Provenance != "skills/"+s.Name || s.Origin.Revision != "aaa111" || s.Origin.Kind != "git" {
			t.Errorf("%s: origin %+v", s.Name, *s.Origin)
		}
	}
	// And the same after a restart, from the cache.
	m2 := fx.manager()
	m2.Open(context.Background(), false)
	sk, _ = m2.Skills(id)
	for _, s := range sk {
		if s.Origin.Provenance != "skills/"+s.Name {
			t.Errorf("opened: %s: provenance %q", s.Name, s.Origin.Provenance)
		}
	}
}

// TestGateRefusesOneFinding: one refused finding is enough to refuse a
// snapshot; none lets it through.
func TestGateRefusesOneFinding(t *testing.T) {
	for _, n := range []int{0, 1, 2} {
		fx := newFixture(t)
		fx.revision("aaa111", map[string]string{"pdf": "v1"})
		fx.opt.Gate = func(sks []*skill.Skill) []skill.Diagnostic {
			var out []skill.Diagnostic
			for i := range n {
				out = append(out, skill.Diagnostic{Severity: skill.Error, Code: "safety-secret-aws", Skill: sks[0].Name, Path: fmt.Sprintf("f%d.md", i)})
			}
			return out
		}
		m := fx.manager()
		ch := m.Sync(context.Background())[0]
		if n == 0 {
			if ch.Err != nil || !ch.Moved {
				t.Errorf("no finding: %+v", ch)
			}
			continue
		}
		if ch.Err == nil || CodeOf(ch.Err) != CodeRefused || len(ch.Refused) != n || !strings.Contains(ch.Err.Error(), "pdf: safety-secret-aws (f0.md)") {
			t.Errorf("%d findings: %+v", n, ch)
		}
		if p := m.Pin(m.Specs()[0].ID); p != nil {
			t.Errorf("%d findings: pinned %+v", n, p)
		}
		if sk, _ := m.Skills(m.Specs()[0].ID); len(sk) != 0 {
			t.Errorf("%d findings: a refused snapshot is served: %v", n, names(sk))
		}
	}
}

// snapFolder is the one cache folder of source id at rev.
func snapFolder(t *testing.T, fx *fixture, id, rev string) string {
	t.Helper()
	var got []string
	for _, n := range cacheEntries(t, filepath.Join(fx.opt.Cache, id)) {
		if entryRev(n) == rev {
			got = append(got, n)
		}
	}
	if len(got) != 1 {
		t.Fatalf("cache folders of %s: %v", rev, cacheEntries(t, filepath.Join(fx.opt.Cache, id)))
	}
	return filepath.Join(fx.opt.Cache, id, got[0])
}

// tamper edits skill name's SKILL.md in the snapshot folder in place,
// keeping its size: "v1" becomes "XX".
func tamper(t *testing.T, folder, name string) {
	t.Helper()
	p := filepath.Join(folder, "skills", name, "SKILL.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	nb := []byte(strings.Replace(string(b), "\nv1\n", "\nXX\n", 1))
	if len(nb) != len(b) || string(nb) == string(b) {
		t.Fatalf("tamper: %q", b)
	}
	if err := os.WriteFile(p, nb, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTamperedSnapshotNotRepinned: a cached snapshot edited in place is
// never pinned nor served by a process that opens it: a sync at the same
// revision, or an Open, fetches the revision again into a new folder, and
// the edited folder is removed once no process serves it.
func TestTamperedSnapshotNotRepinned(t *testing.T) {
	fx, server, id := pinnedFixture(t, map[string]string{"pdf": "v1", "deploy": "v1"}) // serves the snapshot while it is edited
	pin := server.Pin(id)
	lockBefore, _ := os.ReadFile(fx.opt.LockPath)
	edited := snapFolder(t, fx, id, "aaa111")
	tamper(t, edited, "pdf")

	// `loadout sync` in another process: the revision has not moved, the
	// folder does not match the pin, so it is fetched again.
	cli := fx.manager()
	ch := cli.Sync(context.Background())[0]
	if ch.Err != nil || ch.Moved {
		t.Fatalf("sync over an edited snapshot: %+v", ch)
	}
	if lock, _ := os.ReadFile(fx.opt.LockPath); string(lock) != string(lockBefore) {
		t.Fatalf("the edited snapshot was pinned:\n%s\nwas\n%s", lock, lockBefore)
	}
	if got := body(t, cli, id, "pdf"); got != "v1" {
		t.Errorf("the sync serves the edited body %q", got)
	}
	if _, dir, _ := cli.Snapshot(id); dir == edited {
		t.Errorf("the sync serves the edited folder %s", dir)
	}
	// The edited folder is still there: the server serves it.
	if _, err := os.Stat(edited); err != nil {
		t.Errorf("a folder another manager serves was removed: %v", err)
	}

	// A new server opens the pin: the fresh folder, not the edited one.
	cli.Close()
	restarted := fx.manager()
	if d := restarted.Open(context.Background(), false); len(d) != 0 {
		t.Fatalf("open: %v", d)
	}
	if got := body(t, restarted, id, "pdf"); got != "v1" {
		t.Errorf("open serves the edited body %q", got)
	}

	// Once the first server lets go of it, the edited folder is removed by
	// the next process that serves the pin.
	server.Close()
	restarted.Close()
	again := fx.manager()
	again.Open(context.Background(), false)
	if _, err := os.Stat(edited); err == nil {
		t.Errorf("the edited folder outlived its last reader: %v", cacheEntries(t, filepath.Join(fx.opt.Cache, id)))
	}
	if got := cacheEntries(t, filepath.Join(fx.opt.Cache, id)); len(got) != 1 {
		t.Errorf("cache: %v", got)
	}
	if p := again.Pin(id); p.Digest != pin.Digest {
		t.Errorf("pin digest %s, want %s", p.Digest, pin.Digest)
	}

	// Edited again while the remote is out of reach: nothing is served,
	// and the edited folder goes.
	again.Close()
	edited = snapFolder(t, fx, id, "aaa111")
	tamper(t, edited, "pdf")
	fx.f.fail = Errorf("", CodeNetwork, "offline")
	offline := fx.manager()
	if d := offline.Open(context.Background(), false); len(d) != 1 || d[0].Code != CodeNetwork {
		t.Fatalf("open of an edited snapshot, offline: %v", d)
	}
	if sk, _ := offline.Skills(id); len(sk) != 0 {
		t.Errorf("an edited snapshot is served: %v", names(sk))
	}
	if _, err := os.Stat(edited); err == nil {
		t.Error("the edited folder was kept")
	}
}

// TestSameRevisionNewContent: when what a revision holds changed (an
// index republished under the same digest, a lock written elsewhere),
// a sync pins what it fetched, and a server follows the new digest at
// the same revision.
func TestSameRevisionNewContent(t *testing.T) {
	fx, server, id := pinnedFixture(t, map[string]string{"pdf": "v1"})

	// Fetched again into a new folder (the cached one is edited), the
	// revision holds other content now: that is pinned, as what the
	// source holds.
	fx.revision("aaa111", map[string]string{"pdf": "v2"})
	tamper(t, snapFolder(t, fx, id, "aaa111"), "pdf")
	cli := fx.manager()
	ch := cli.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || !slices.Equal(ch.Changed, []string{"pdf"}) || body(t, cli, id, "pdf") != "v2" {
		t.Fatalf("sync: %+v", ch)
	}
	cli.Close()
	// The server, at the same revision with the old digest, serves the new
	// pin at its next sync.
	if ch := server.Sync(context.Background())[0]; ch.Err != nil || body(t, server, id, "pdf") != "v2" {
		t.Fatalf("server sync: %+v", ch)
	}
}

// breakYAML writes a SKILL.md for name at revision rev whose frontmatter
// does not parse (line 3).
func (fx *fixture) breakYAML(rev, name string) {
	fx.t.Helper()
	p := filepath.Join(fx.remote, rev, "skills", name, "SKILL.md")
	testutil.Must(fx.t, os.MkdirAll(filepath.Dir(p), 0o755))
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: [unclosed\n---\nbody\n"), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

// TestBrokenSkillKeepsLastGood: a commit that breaks a pinned skill's
// SKILL.md does not move the pin nor drop the skill: the last good
// snapshot stays, and the error and the warning name the file and line.
// A skill whose folder is gone is removed, and a new skill that is broken
// is reported, both without holding the pin back.
func TestBrokenSkillKeepsLastGood(t *testing.T) {
	fx, m, id := pinnedFixture(t, map[string]string{"pdf": "v1", "deploy": "v1"})
	lockBefore, _ := os.ReadFile(fx.opt.LockPath)

	fx.revision("bbb222", map[string]string{"deploy": "v2"})
	fx.breakYAML("bbb222", "pdf")
	check := func(m *Manager, what string) {
		t.Helper()
		ch := m.Sync(context.Background())[0]
		if ch.Err == nil || CodeOf(ch.Err) != CodeBroken || ch.Moved ||
			!strings.Contains(ch.Err.Error(), "pdf: skills/pdf/SKILL.md: yaml-invalid") || !strings.Contains(ch.Err.Error(), "line 3") {
			t.Fatalf("%s: %+v", what, ch)
		}
		if lock, _ := os.ReadFile(fx.opt.LockPath); string(lock) != string(lockBefore) {
			t.Fatalf("%s: the pin moved", what)
		}
		if what != "the server" {
			return // it served nothing before either
		}
		sk, diags := m.Skills(id)
		if !slices.Equal(names(sk), []string{"deploy", "pdf"}) || body(t, m, id, "deploy") != "v1" {
			t.Fatalf("%s: served %v", what, names(sk))
		}
		var warned bool
		for _, d := range diags {
			warned = warned || d.Code == CodeStale && d.Severity == skill.Warning && strings.Contains(d.Message, "skills/pdf/SKILL.md") && strings.Contains(d.Message, "line 3")
		}
		if !warned {
			t.Errorf("%s: no warning names the file and line: %v", what, diags)
		}
	}
	check(m, "the server")
	// `loadout sync` in a new process: the pinned snapshot comes from the
	// cache to learn the skills' folders.
	check(fx.manager(), "a new process")
	// With no cache, the skill's folder is taken to be its name.
	testutil.Must(t, os.RemoveAll(fx.opt.Cache))
	check(fx.manager(), "a new process without a cache")

	// Fixed upstream: the pin moves, nothing removed.
	fx.revision("ccc333", map[string]string{"pdf": "v3", "deploy": "v2"})
	ch := m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || len(ch.Removed) != 0 || !slices.Equal(ch.Changed, []string{"deploy", "pdf"}) {
		t.Fatalf("fixed: %+v", ch)
	}
	if _, diags := m.Skills(id); slices.Contains(codes(diags), CodeStale) {
		t.Errorf("the warning outlived the fix: %v", diags)
	}

	// A folder deleted upstream is a removal, and a new broken skill
	// holds nothing back; both are said.
	fx.revision("ddd444", map[string]string{"deploy": "v2"})
	fx.breakYAML("ddd444", "newbie")
	ch = m.Sync(context.Background())[0]
	if ch.Err != nil || !slices.Equal(ch.Removed, []string{"pdf"}) || len(ch.Broken) != 1 ||
		!strings.Contains(ch.Summary(), "1 not loaded: skills/newbie/SKILL.md: yaml-invalid") || !strings.Contains(ch.Summary(), "line 3") {
		t.Fatalf("removed and new broken: %+v\n%s", ch, ch.Summary())
	}
}

// TestFollowTheLock: a manager serving a snapshot follows the lock file
// another process moved; the snapshot it serves is never removed by that
// other process, however many times it syncs.
func TestFollowTheLock(t *testing.T) {
	fx, server, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	_, served, _ := server.Snapshot(id)

	// Another process moves the pin twice.
	for _, rev := range []string{"bbb222", "ccc333"} {
		fx.revision(rev, map[string]string{"pdf": rev})
		cli := fx.manager()
		if ch := cli.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved {
			t.Fatalf("sync to %s: %+v", rev, ch)
		}
		cli.Close()
	}
	if _, err := os.Stat(filepath.Join(served, "skills", "pdf", "SKILL.md")); err != nil {
		t.Fatalf("another process removed the snapshot this one serves: %v", err)
	}
	if got := body(t, server, id, "pdf"); got != "v1" {
		t.Fatalf("before following: %q", got)
	}
	// What the server checks against is the lock's pin, not the one it
	// remembers.
	if ch := server.Check(context.Background())[0]; ch.Err != nil || ch.From != "ccc333" || ch.Moved {
		t.Fatalf("check before following: %+v", ch)
	}
	changed, err := server.Follow(context.Background())
	if err != nil || !slices.Equal(changed, []string{id}) || body(t, server, id, "pdf") != "ccc333" {
		t.Fatalf("follow: %v %v", changed, err)
	}
	if changed, _ := server.Follow(context.Background()); len(changed) != 0 {
		t.Errorf("a second follow changed %v", changed)
	}
	// The pin the server syncs from is the lock's, not its own memory:
	// its sync at ccc333 moves nothing.
	if ch := server.Sync(context.Background())[0]; ch.Err != nil || ch.Moved || ch.From != "ccc333" {
		t.Errorf("sync after following: %+v", ch)
	}

	// A lock that pins what cannot be fetched: the server keeps serving,
	// and says why.
	l, _ := ReadLock(fx.opt.LockPath)
	l.Sources[0].Revision = "gone999"
	l.Write(fx.opt.LockPath)
	changed, err = server.Follow(context.Background())
	sk, diags := server.Skills(id)
	if err != nil || !slices.Equal(changed, []string{id}) || len(sk) != 1 || body(t, server, id, "pdf") != "ccc333" ||
		!slices.Contains(codes(diags), CodeRef) || !strings.Contains(server.LastError(id), "still serving the snapshot at ccc333") {
		t.Fatalf("a bad pin: %v %v %v %q", changed, err, diags, server.LastError(id))
	}
	// An unreadable lock changes nothing.
	testutil.Must(t, os.WriteFile(fx.opt.LockPath, []byte("{"), 0o644))
	if _, err := server.Follow(context.Background()); err == nil || CodeOf(err) != CodeLock {
		t.Errorf("a broken lock: %v", err)
	}
	if body(t, server, id, "pdf") != "ccc333" {
		t.Error("a broken lock changed what is served")
	}
}

// TestSyncKeepsOtherPins: two processes syncing two sources of one lock
// keep each other's pins (each read the lock again before writing it).
func TestSyncKeepsOtherPins(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	other := t.TempDir()
	f2 := &dirFetcher{remote: other}
	fx.opt.Fetchers["index"] = func(Spec) (Fetcher, error) { return f2, nil }
	testutil.Must(t, os.MkdirAll(filepath.Join(other, "r1", "pdf2"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(other, "r1", "pdf2", "SKILL.md"), []byte("---\nname: pdf2\ndescription: d. Use when asked.\n---\nx\n"), 0o644))
	testutil.Must(t, os.WriteFile(filepath.Join(other, "HEAD"), []byte("r1"), 0o644))
	specs := []Spec{fx.spec, {ID: "idx", Index: "https://example.com/.well-known/agent-skills/index.json"}}
	a, err := NewManager(specs, fx.opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewManager(specs, fx.opt)
	// b pins idx while a fetches its own source: a read the lock before.
	fx.f.during = func() {
		if ch := b.Sync(context.Background(), "idx")[0]; ch.Err != nil {
			t.Fatal(ch.Err)
		}
	}
	if ch := a.Sync(context.Background(), "skills@main")[0]; ch.Err != nil {
		t.Fatal(ch.Err)
	}
	l, _ := ReadLock(fx.opt.LockPath)
	if len(l.Sources) != 2 {
		t.Fatalf("a sync dropped another process's pin: %+v", l.Sources)
	}
}

// TestProblemsClearWhenFixed: why a source is not served is reported
// with its skills until it is, and what the last sync that moved the pin
// did is said once, naming the source once.
func TestProblemsClearWhenFixed(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	m.Open(context.Background(), false)
	if _, diags := m.Skills(id); !slices.Equal(codes(diags), []string{CodeUnknown}) || m.LastError(id) == "" {
		t.Fatalf("unpinned: %v", diags)
	}
	m.Sync(context.Background())
	_, diags := m.Skills(id)
	if !slices.Equal(codes(diags), []string{CodeSynced}) || m.LastError(id) != "" {
		t.Fatalf("after the sync: %v %q", diags, m.LastError(id))
	}
	if msg := diags[0].Message; strings.Count(msg, id) != 1 || !strings.Contains(msg, "nothing → aaa111") {
		t.Errorf("synced: %q", msg)
	}
	fx.revision("bbb222", map[string]string{"pdf": "v2"})
	m.Sync(context.Background())
	if _, diags := m.Skills(id); len(diags) != 1 || !strings.Contains(diags[0].Message, "aaa111 → bbb222") || strings.Count(diags[0].Message, id) != 1 {
		t.Errorf("the second sync: %v", diags)
	}

	// A pin that cannot be opened at start: an error with the skills, no
	// skills; fixed by a sync, it goes.
	l, _ := ReadLock(fx.opt.LockPath)
	l.Sources[0].Revision = "gone999"
	l.Write(fx.opt.LockPath)
	m2 := fx.manager()
	m2.Open(context.Background(), false)
	if sk, diags := m2.Skills(id); len(sk) != 0 || !slices.Equal(codes(diags), []string{CodeRef}) || diags[0].Severity != skill.Error {
		t.Fatalf("bad pin at start: %v %v", names(sk), diags)
	}
	if ch := m2.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved {
		t.Fatalf("fix: %+v", ch)
	}
	if sk, diags := m2.Skills(id); len(sk) != 1 || slices.Contains(codes(diags), CodeRef) || m2.LastError(id) != "" {
		t.Errorf("after the fix: %v %v", names(sk), diags)
	}
}

// TestCacheKeepsWhatIsNeeded: the pinned snapshot stays in the cache
// after the process that fetched it ends (the next one opens it without
// fetching), and a server keeps only its current and previous snapshots.
func TestCacheKeepsWhatIsNeeded(t *testing.T) {
	fx, cli, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	cli.Close()
	fx.f.fail = Errorf("", CodeNetwork, "offline")
	server := fx.manager()
	if d := server.Open(context.Background(), false); len(d) != 0 || body(t, server, id, "pdf") != "v1" {
		t.Fatalf("open from the cache: %v", d)
	}
	fx.f.fail = nil
	for _, rev := range []string{"bbb222", "ccc333", "ddd444"} {
		fx.revision(rev, map[string]string{"pdf": rev})
		if ch := server.Sync(context.Background())[0]; ch.Err != nil {
			t.Fatal(ch.Err)
		}
	}
	var revs []string
	for _, n := range cacheEntries(t, filepath.Join(fx.opt.Cache, id)) {
		revs = append(revs, entryRev(n))
	}
	slices.Sort(revs)
	if !slices.Equal(revs, []string{"ccc333", "ddd444"}) {
		t.Errorf("the cache holds %v; want the previous and current snapshots", revs)
	}
	// A sync at the pin in a new process reads the cache, fetching nothing.
	server.Close()
	before := fx.f.count
	again := fx.manager()
	if ch := again.Sync(context.Background())[0]; ch.Err != nil || ch.Moved || fx.f.count != before {
		t.Errorf("a sync at the pin fetched %d times: %+v", fx.f.count-before, ch)
	}
	again.Close()
	// A refused sync in a new process keeps the pinned snapshot too.
	testutil.Must(t, os.MkdirAll(filepath.Join(fx.remote, "eee555", "skills"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("eee555"), 0o644))
	if ch := fx.manager().Sync(context.Background())[0]; ch.Err == nil {
		t.Fatalf("a snapshot with no skills was taken: %+v", ch)
	}
	fx.f.fail = Errorf("", CodeNetwork, "offline")
	if d := fx.manager().Open(context.Background(), false); len(d) != 0 {
		t.Errorf("the pinned snapshot is gone from the cache: %v %v", d, cacheEntries(t, filepath.Join(fx.opt.Cache, id)))
	}
}

// TestServedAtPinClearsTheProblem: a source that could not be opened at
// start (its snapshot not cached, the remote out of reach) is served once
// a sync reaches it at the same revision, and the problem goes.
func TestServedAtPinClearsTheProblem(t *testing.T) {
	fx, cli, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	cli.Close()
	testutil.Must(t, os.RemoveAll(fx.opt.Cache))
	fx.f.fail = Errorf("", CodeNetwork, "offline")
	m := fx.manager()
	if d := m.Open(context.Background(), false); len(d) != 1 || m.LastError(id) == "" {
		t.Fatalf("open offline: %v", d)
	}
	fx.f.fail = nil
	ch := m.Sync(context.Background())[0]
	sk, diags := m.Skills(id)
	if ch.Err != nil || ch.Moved || !ch.Served || len(sk) != 1 || len(diags) != 0 || m.LastError(id) != "" {
		t.Fatalf("sync at the pin: %+v %v %v %q", ch, names(sk), diags, m.LastError(id))
	}
}

// TestSyncServesThePinnedRevision: when another process moved the pin to
// a revision whose skills are the same as those served (same digest), a
// sync serves the pinned revision (the skills' origin names it), without
// moving anything.
func TestSyncServesThePinnedRevision(t *testing.T) {
	fx, server, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	fx.revision("bbb222", map[string]string{"pdf": "v1"})
	cli := fx.manager()
	if ch := cli.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved {
		t.Fatalf("the other process's sync: %+v", ch)
	}
	cli.Close()
	if l, _ := ReadLock(fx.opt.LockPath); l == nil || l.Get(id) == nil || l.Get(id).Revision != "bbb222" {
		t.Fatalf("the lock: %+v", l)
	}
	ch := server.Sync(context.Background())[0]
	if ch.Err != nil || ch.Moved || !ch.Served || ch.From != "bbb222" || ch.To != "bbb222" {
		t.Fatalf("the server's sync: %+v", ch)
	}
	if rev, _, n := server.Snapshot(id); rev != "bbb222" || n != 1 {
		t.Errorf("the server serves %s (%d skills), want bbb222", rev, n)
	}
	if sk, _ := server.Skills(id); len(sk) != 1 || sk[0].Origin.Revision != "bbb222" {
		t.Errorf("the skill's origin: %+v", sk[0].Origin)
	}
}

// TestNoSkillNamesTheBrokenFiles: a sync that finds no skill says which
// SKILL.md files did not load, and says nothing of them when none is
// there.
func TestNoSkillNamesTheBrokenFiles(t *testing.T) {
	fx := newFixture(t)
	fx.breakYAML("aaa111", "pdf")
	testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("aaa111"), 0o644))
	ch := fx.manager().Sync(context.Background())[0]
	msg := fmt.Sprint(ch.Err)
	if CodeOf(ch.Err) != CodeInvalid || !strings.Contains(msg, "no skill (no SKILL.md with a name and description) under skills at aaa111; not loaded: skills/pdf/SKILL.md: yaml-invalid: ") {
		t.Errorf("a source whose only SKILL.md is broken: %v", msg)
	}
	testutil.Must(t, os.MkdirAll(filepath.Join(fx.remote, "bbb222", "skills", "empty"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "HEAD"), []byte("bbb222"), 0o644))
	ch = fx.manager().Sync(context.Background())[0]
	if msg := fmt.Sprint(ch.Err); !strings.HasSuffix(msg, "no skill (no SKILL.md with a name and description) under skills at bbb222") {
		t.Errorf("a source with no SKILL.md: %v", msg)
	}
}

// TestBrokenSkillFolderFromWhatIsServed: a pinned skill whose folder is
// not its name (skills/tools-pdf holds pdf) and whose SKILL.md breaks is
// found by the folder the server serves it from, even when the cache
// was cleared meanwhile: the pin stays.
func TestBrokenSkillFolderFromWhatIsServed(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"deploy": "v1"})
	md := "---\nname: pdf\ndescription: pdf does things. Use when asked.\n---\nv1\n"
	testutil.Must(t, os.MkdirAll(filepath.Join(fx.remote, "aaa111", "skills", "tools-pdf"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(fx.remote, "aaa111", "skills", "tools-pdf", "SKILL.md"), []byte(md), 0o644))
	m := fx.manager()
	if ch := m.Sync(context.Background())[0]; ch.Err != nil || !slices.Equal(ch.Added, []string{"deploy", "pdf"}) {
		t.Fatalf("the first sync: %+v", ch)
	}
	testutil.Must(t, os.RemoveAll(fx.opt.Cache))
	fx.revision("bbb222", map[string]string{"deploy": "v2"})
	fx.breakYAML("bbb222", "tools-pdf")
	ch := m.Sync(context.Background())[0]
	if CodeOf(ch.Err) != CodeBroken || ch.Moved || !strings.Contains(fmt.Sprint(ch.Err), "pdf: skills/tools-pdf/SKILL.md: yaml-invalid") {
		t.Fatalf("the sync that breaks pdf: %+v", ch)
	}
	if sk, _ := m.Skills(m.Specs()[0].ID); !slices.Equal(names(sk), []string{"deploy", "pdf"}) {
		t.Errorf("served %v", names(sk))
	}
}

// TestCandidatesNewestFirst: the cache's folders of one revision are
// tried newest first (the last fetched is the likeliest to be intact);
// folders of other revisions, temporary ones and files are not
// candidates.
func TestCandidatesNewestFirst(t *testing.T) {
	fx := newFixture(t)
	m := fx.manager()
	id := m.Specs()[0].ID
	src := m.sourceDir(id)
	now := time.Now()
	for name, age := range map[string]time.Duration{"aaa111.a": 3, "aaa111.b": 1, "aaa111.c": 2, "aaa111": 4, "bbb222.d": 0, ".fetch-aaa111": 0} {
		testutil.Must(t, os.MkdirAll(filepath.Join(src, name), 0o755))
		at := now.Add(-age * time.Hour)
		testutil.Must(t, os.Chtimes(filepath.Join(src, name), at, at))
	}
	testutil.Must(t, os.WriteFile(filepath.Join(src, "aaa111.file"), nil, 0o644))
	if got, want := m.candidates(id, "aaa111"), []string{"aaa111.b", "aaa111.c", "aaa111.a", "aaa111"}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if got := m.candidates("other", "aaa111"); len(got) != 0 {
		t.Errorf("a source with no cache folder: %v", got)
	}
}

// TestBrokenSkillFileSkipsLoadedSkills: an error on a SKILL.md whose
// skill is loaded anyway (a skill kept at its last good version says so
// with an error on its file) is not a broken file; the same error where
// no skill loaded is, by its path in the snapshot; errors outside the
// snapshot, on other files, and warnings are not.
func TestBrokenSkillFileSkipsLoadedSkills(t *testing.T) {
	dir := t.TempDir()
	snap := &snapshot{dir: dir, skills: []*skill.Skill{{Name: "pdf", Origin: &skill.Origin{Provenance: "skills/pdf"}}}}
	at := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	for _, tc := range []struct {
		d    skill.Diagnostic
		want string // "" when it is not a broken file
	}{
		{skill.Diagnostic{Severity: skill.Error, Code: skill.CodeKeptLastGood, Path: at("skills/pdf/SKILL.md")}, ""},
		{skill.Diagnostic{Severity: skill.Error, Code: skill.CodeYAMLInvalid, Path: at("skills/deploy/SKILL.md")}, "skills/deploy/SKILL.md"},
		{skill.Diagnostic{Severity: skill.Error, Code: skill.CodeYAMLInvalid, Path: at("skills/deploy/skill.md")}, "skills/deploy/skill.md"},
		{skill.Diagnostic{Severity: skill.Warning, Code: skill.CodeNameMismatch, Path: at("skills/deploy/SKILL.md")}, ""},
		{skill.Diagnostic{Severity: skill.Error, Code: skill.CodeReadError, Path: at("skills/deploy/notes.md")}, ""},
		{skill.Diagnostic{Severity: skill.Error, Code: skill.CodeYAMLInvalid, Path: filepath.Join(filepath.Dir(dir), "SKILL.md")}, ""},
	} {
		rel, ok := brokenSkillFile(snap, tc.d)
		if ok != (tc.want != "") || rel != tc.want {
			t.Errorf("%s %s at %s: (%q, %v), want %q", tc.d.Severity, tc.d.Code, tc.d.Path, rel, ok, tc.want)
		}
	}
}

// TestRereadLockSeesEveryChange: the manager skips parsing a lock file
// that is still the one it last read or wrote, and sees every other:
// one renamed over it by another process, and one edited in place to the
// same size.
func TestRereadLockSeesEveryChange(t *testing.T) {
	fx, m, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	// Another process moves the pin (its write renames a new file in).
	fx.revision("bbb222", map[string]string{"pdf": "v2"})
	other := fx.manager()
	if ch := other.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved {
		t.Fatalf("the other sync: %+v", ch)
	}
	other.Close()
	if err := m.rereadLock(); err != nil || m.Pin(id).Revision != "bbb222" {
		t.Fatalf("after another process's write: %v, pin %+v", err, m.Pin(id))
	}
	// The same file, edited in place to the same size.
	data, err := os.ReadFile(fx.opt.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"revision": "bbb222"`, `"revision": "ccc333"`, 1)
	if len(edited) != len(data) || edited == string(data) {
		t.Fatal("the edit did not change the revision in place")
	}
	before, err := os.Stat(fx.opt.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(fx.opt.LockPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(edited), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// An editor's write is later; on a file system with coarse times it
	// could share the second, so the test sets a later time itself.
	testutil.Must(t, os.Chtimes(fx.opt.LockPath, time.Now(), before.ModTime().Add(time.Second)))
	if err := m.rereadLock(); err != nil || m.Pin(id).Revision != "ccc333" {
		t.Fatalf("after an edit in place: %v, pin %+v", err, m.Pin(id))
	}
}
