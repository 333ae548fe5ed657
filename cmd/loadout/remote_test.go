package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/source"
)

// gitRepo is a real repository made with the git binary: a working copy
// and a bare clone served over HTTP (git http-backend behind net/http/cgi)
// that tests push to.
type gitRepo struct {
	t          *testing.T
	work, bare string
	srv        *httptest.Server
	token      string // when set, the server wants it as the basic-auth password
}

const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

func newGitRepo(t *testing.T, files map[string]string) *gitRepo {
	t.Helper()
	_, err := exec.LookPath("git")
	if err == nil {
		_, err = os.Stat(gitHTTPBackend)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must not skip the remote-source tests: install Debian's git (%v)", err)
		}
		t.Skipf("no git binary or http-backend (%v): the test makes its repositories with them", err)
	}
	root := t.TempDir()
	g := &gitRepo{t: t, work: filepath.Join(root, "work"), bare: filepath.Join(root, "srv", "skills.git")}
	testutil.Must(t, os.MkdirAll(g.work, 0o755))
	g.git(g.work, "init", "-q", "-b", "main")
	g.commit("first", files)
	g.git(root, "clone", "-q", "--bare", g.work, g.bare)
	cgiH := &cgi.Handler{Path: gitHTTPBackend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(g.bare), "GIT_HTTP_EXPORT_ALL=1"}}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.token != "" {
			if _, pw, ok := r.BasicAuth(); !ok || pw != g.token {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		cgiH.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *gitRepo) url() string { return g.srv.URL + "/skills.git" }

func (g *gitRepo) git(dir string, args ...string) {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// commit writes files (path → content; "" removes the file) and commits.
func (g *gitRepo) commit(msg string, files map[string]string) {
	g.t.Helper()
	for p, c := range files {
		full := filepath.Join(g.work, p)
		if c == "" {
			testutil.Must(g.t, os.Remove(full))
			continue
		}
		testutil.Mkdir(g.t, filepath.Dir(full))
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.git(g.work, "add", "-A")
	g.git(g.work, "commit", "-q", "-m", msg)
}

func (g *gitRepo) push() { g.t.Helper(); g.git(g.work, "push", "-q", g.bare, "main") }

func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n"
}

// writeRemoteConfig writes a config with one agent reading src.
func writeRemoteConfig(t *testing.T, src map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	cfg := map[string]any{"agents": []any{map[string]any{"agentId": "coder", "skills": []any{src}}}}
	data, _ := json.Marshal(cfg)
	p := filepath.Join(dir, "loadout.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type listOut struct {
	Skills []struct {
		Name, Description, Location string
		Source                      struct{ Kind, Root, Ref, Revision, Provenance string }
	}
	Diagnostics []struct{ Severity, Code, Message string }
}

func listJSON(t *testing.T, env func(string) string, cfg string) listOut {
	t.Helper()
	r := runCLIEnv(t, env, "list", "--config", cfg, "--json")
	var out listOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("list --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return out
}

func (l listOut) names() string {
	var n []string
	for _, s := range l.Skills {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

// TestSyncGit: `loadout sync` pins a real repository served over HTTP,
// the catalog commands read the pin (not the branch's tip), `sync
// --check` fails when the remote moves, and a token stays out of the lock
// and the output.
func TestSyncGit(t *testing.T) {
	g := newGitRepo(t, map[string]string{
		"skills/pdf/SKILL.md":    skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1"),
		"skills/deploy/SKILL.md": skillMD("deploy", "Deploy the service. Use when asked to deploy.", "v1"),
		"README.md":              "not a skill",
	})
	g.token = "tok-s3cret-123"
	env := func(k string) string {
		if k == "GIT_TOKEN" {
			return g.token
		}
		return ""
	}
	cfg := writeRemoteConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "token": "${GIT_TOKEN}"})
	lockPath := filepath.Join(filepath.Dir(cfg), "loadout.lock")

	// Before any sync: nothing is served, and the diagnostic says what to run.
	before := listJSON(t, env, cfg)
	if len(before.Skills) != 0 || !strings.Contains(before.Diagnostics[0].Message+before.Diagnostics[0].Code, remote.CodeUnknown) && !strings.Contains(jsonText(before), "loadout sync") {
		t.Fatalf("before sync: %+v", before)
	}

	r := runCLIEnv(t, env, "sync", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "skills@main: nothing → ") || !strings.Contains(r.stdout, "2 added (deploy, pdf)") || !strings.Contains(r.stdout, "+ pdf sha256:") {
		t.Fatalf("sync: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lock, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(lock)+r.stdout+r.stderr, g.token) {
		t.Fatalf("the token leaked:\n%s", lock)
	}
	var l remote.Lock
	if err := json.Unmarshal(lock, &l); err != nil || len(l.Sources) != 1 || len(l.Sources[0].Revision) != 40 || len(l.Sources[0].Skills) != 2 {
		t.Fatalf("lock: %v\n%s", err, lock)
	}
	pinned := l.Sources[0].Revision

	got := listJSON(t, env, cfg)
	if got.names() != "deploy,pdf" {
		t.Fatalf("after sync: %s %+v", got.names(), got.Diagnostics)
	}
	for _, s := range got.Skills {
		// Each skill's own folder, not the last one scanned.
		if s.Source.Kind != "git" || s.Source.Revision != pinned || s.Source.Ref != "main" || s.Source.Provenance != "skills/"+s.Name || strings.Contains(s.Source.Root, g.token) {
			t.Errorf("%s: source %+v", s.Name, s.Source)
		}
	}

	// Nothing moved: --check passes.
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--check"); r.code != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Fatalf("check, unchanged: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The remote moves: --check fails and says what would change; the
	// catalog still serves the pin.
	g.commit("second", map[string]string{
		"skills/pdf/SKILL.md":    skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v2"),
		"skills/lint/SKILL.md":   skillMD("lint", "Lint the code. Use when asked to lint.", "v1"),
		"skills/deploy/SKILL.md": "",
	})
	g.push()
	r = runCLIEnv(t, env, "sync", "--config", cfg, "--check")
	if r.code != 1 || !strings.Contains(r.stdout, "would move") || !strings.Contains(r.stdout, "1 added (lint)") ||
		!strings.Contains(r.stdout, "1 removed (deploy)") || !strings.Contains(r.stdout, "1 changed (pdf)") {
		t.Fatalf("check, moved: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(lock) {
		t.Fatal("sync --check moved the pin")
	}
	if got := listJSON(t, env, cfg); got.names() != "deploy,pdf" {
		t.Fatalf("the catalog followed the branch, not the pin: %s", got.names())
	}

	// A wrong token: the sync fails, says why, and keeps the pin.
	g.token = "another"
	bad := func(k string) string {
		if k == "GIT_TOKEN" {
			return "tok-wrong-456"
		}
		return ""
	}
	r = runCLIEnv(t, bad, "sync", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stdout, "sync failed") || !strings.Contains(r.stdout, "last good snapshot") || strings.Contains(r.stdout+r.stderr, "tok-wrong-456") {
		t.Fatalf("bad token: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	g.token = "tok-s3cret-123"

	// sync moves the pin; the catalog follows.
	r = runCLIEnv(t, env, "sync", "--config", cfg, "--json")
	var res struct {
		Sources []struct {
			ID, From, To string
			Moved        bool
			Added        []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || len(res.Sources) != 1 || !res.Sources[0].Moved || res.Sources[0].From != pinned {
		t.Fatalf("sync --json: %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if got := listJSON(t, env, cfg); got.names() != "lint,pdf" {
		t.Fatalf("after the second sync: %s", got.names())
	}

	// The pinned snapshot can be copied into the store, with its
	// provenance.
	r = runCLIEnv(t, env, "import", "--config", cfg, "remote:skills@main/pdf")
	if r.code != 0 || !strings.Contains(r.stdout, "created") || !strings.Contains(r.stdout, "git "+g.url()+"@main "+res.Sources[0].To+" skills/pdf") {
		t.Fatalf("import remote: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLIEnv(t, env, "import", "--config", cfg, "remote:nosuch"); r.code == 0 || !strings.Contains(r.stdout, "skills@main") {
		t.Fatalf("import of an unknown source: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Upstream commits a secret: the safety checks refuse the snapshot, the
	// pin stays, and the skills served are the last good ones.
	lockBefore, _ := os.ReadFile(lockPath)
	g.commit("oops", map[string]string{"skills/lint/SKILL.md": skillMD("lint", "Lint the code. Use when asked to lint.", "key: AKIA"+"Q7WERTYUIOPASDFG")})
	g.push()
	r = runCLIEnv(t, env, "sync", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stdout, "refused by the safety checks") || !strings.Contains(r.stdout, "lint: safety-secret-aws") || strings.Contains(r.stdout, "Q7WERTYUIOPASDFG") {
		t.Fatalf("a snapshot with a secret: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(lockBefore) {
		t.Error("a refused snapshot moved the pin")
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeRemoteSources: serve pins a new git source at start, serves its
// skills with their provenance, moves on POST /v1/sources/{id}/sync (as a
// webhook would) and keeps the last good snapshot when the remote is gone;
// a second server follows the first one's well-known index.
func TestServeRemoteSources(t *testing.T) {
	g := newGitRepo(t, map[string]string{
		"skills/pdf/SKILL.md":           skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1"),
		"skills/pdf/scripts/fill.sh":    "#!/bin/sh\necho fill\n",
		"skills/deploy/SKILL.md":        skillMD("deploy", "Deploy the service. Use when asked to deploy.", "v1"),
		"skills/deploy/references/a.md": "notes",
	})
	cfg := writeRemoteConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": "team"})
	a := startServe(t, "--config", cfg)

	// Pinned at start, and served with the source's URL and revision.
	lock, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "loadout.lock"))
	if err != nil {
		t.Fatalf("serve did not pin the new source: %v\n%s", err, a.log())
	}
	code, body := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/pdf", "", nil)
	if code != 200 || !strings.Contains(body, `kind=\"git\"`) || !strings.Contains(body, `revision=\"`) || !strings.Contains(body, "scripts/fill.sh") {
		t.Fatalf("load: %d %s", code, body)
	}
	// Each skill's envelope names its own folder.
	for _, name := range []string{"pdf", "deploy"} {
		if _, body := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/"+name, "", nil); !strings.Contains(body, `provenance=\"skills/`+name+`\"`) {
			t.Errorf("%s: the envelope does not name its folder: %s", name, body)
		}
	}
	code, body = httpDo(t, "GET", a.base+"/v1/sources", "", nil)
	if code != 200 || !strings.Contains(body, `"id":"team"`) || !strings.Contains(body, `"skills":2`) {
		t.Fatalf("sources: %d %s", code, body)
	}

	// Remote skills are read-only, and the refusal says what to do.
	code, body = httpDo(t, "PUT", a.base+"/v1/skills/pdf/files/notes.md", "", strings.NewReader("x"), "Content-Type", "application/octet-stream")
	if code != 403 || !strings.Contains(body, "read_only") || !strings.Contains(body, "loadout sync") {
		t.Errorf("a write to a remote skill: %d %s", code, body)
	}

	// A push, then the webhook: the new skill is served, the lock moves.
	g.commit("add lint", map[string]string{"skills/lint/SKILL.md": skillMD("lint", "Lint the code. Use when asked to lint.", "v1")})
	g.push()
	code, body = httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil)
	if code != 200 || !strings.Contains(body, `"moved":true`) || !strings.Contains(body, `"added":["lint"]`) {
		t.Fatalf("sync: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "the new skill served", func() bool {
		c, _ := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/lint", "", nil)
		return c == 200
	})
	if after, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "loadout.lock")); string(after) == string(lock) {
		t.Error("the webhook sync did not move the pin in the lock")
	}
	// Receipts say where the loaded skill came from.
	httpDo(t, "GET", a.base+"/v1/agents/coder/skills/lint", "", nil)
	eventually(t, 5*time.Second, "a receipt with the origin", func() bool {
		_, body := httpDo(t, "GET", a.base+"/v1/receipts?skill=lint", "", nil)
		return strings.Contains(body, `"source":"git"`) && strings.Contains(body, g.url()+"@main ") && strings.Contains(body, ` skills/lint"`)
	})

	// A second server follows the first one's index: one loadout serves
	// another, every archive checked against its digest.
	cfg2 := writeRemoteConfig(t, map[string]any{"index": a.base + "/.well-known/agent-skills/index.json", "id": "upstream"})
	b := startServe(t, "--config", cfg2)
	code, body = httpDo(t, "GET", b.base+"/v1/agents/coder/skills/pdf", "", nil)
	if code != 200 || !strings.Contains(body, `kind=\"index\"`) || !strings.Contains(body, `revision=\"sha256:`) || !strings.Contains(body, "scripts/fill.sh") {
		t.Fatalf("the second server: %d %s\n%s", code, body, b.log())
	}
	if c, _ := httpDo(t, "GET", b.base+"/v1/agents/coder/skills/lint", "", nil); c != 200 {
		t.Errorf("the second server lacks lint: %d", c)
	}

	// The remote goes away: the sync fails, the last good snapshot is
	// still served, and the failure is visible.
	g.srv.Close()
	code, body = httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil)
	if code != 200 || !strings.Contains(body, `"code":"remote-network"`) || !strings.Contains(body, `"moved":false`) {
		t.Fatalf("sync of a remote that is gone: %d %s", code, body)
	}
	if c, _ := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/lint", "", nil); c != 200 {
		t.Errorf("the last good snapshot is not served: %d", c)
	}
	if _, body := httpDo(t, "GET", a.base+"/v1/sources", "", nil); !strings.Contains(body, `"error":"`) {
		t.Errorf("the failure is not in /v1/sources: %s", body)
	}
}

// runCLIEnv is runCLI with an environment.
func runCLIEnv(t *testing.T, getenv func(string) string, args ...string) result {
	t.Helper()
	var out, errb strings.Builder
	e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: getenv}
	code := run(t.Context(), e, args)
	return result{code, out.String(), errb.String()}
}

// TestScheduledSync: a source with "every" is synced on that schedule; a
// push shows up in the catalog, and subscribers hear of it as of any live
// change.
func TestScheduledSync(t *testing.T) {
	g := newGitRepo(t, map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1")})
	defer func(d time.Duration) { minSyncEvery = d }(minSyncEvery)
	minSyncEvery = time.Millisecond
	dir := t.TempDir()
	f := &config.File{Path: filepath.Join(dir, "loadout.json"), Agents: []catalog.AgentSpec{{AgentID: "coder",
		Skills: []catalog.SourceSpec{{Git: g.url(), Ref: "main", Paths: []string{"skills"}, Every: "1m"}}}}}
	m, _, err := openRemotes(t.Context(), func(string) string { return "" }, f, filepath.Join(dir, "loadout.db"), source.Options{KeepBodies: true})
	if err != nil || m == nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(t.Context(), f.Agents, catalog.Options{Remotes: remoteProviders(m)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: slog.New(slog.DiscardHandler)})
	defer svc.Close()
	changes, stop := svc.Subscribe()
	defer stop()
	rs := &remoteState{}
	rs.start(t.Context(), svc, m, f, slog.New(slog.DiscardHandler))
	defer rs.cancel()
	if l, _ := cat.Agent("coder"); len(l.Names()) != 1 {
		t.Fatalf("before: %v", l.Names())
	}
	// The schedule is the config's 1m; ask for it every 20ms instead.
	rs.cancel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	scheduleSyncs(ctx, svc, map[string]string{"skills@main": "20ms"}, slog.New(slog.DiscardHandler))

	g.commit("add lint", map[string]string{"skills/lint/SKILL.md": skillMD("lint", "Lint the code. Use when asked to lint.", "v1")})
	g.push()
	select {
	case <-changes:
	case <-testutil.After(t):
		t.Fatal("no change was announced after the push")
	}
	eventually(t, 5*time.Second, "lint in the catalog", func() bool {
		l, _ := svc.Catalog().Agent("coder")
		_, ok := l.Lookup("lint")
		return ok
	})
}

// TestSyncBrokenSkillGit: a commit that breaks one pinned skill's YAML
// does not move the pin nor drop the skill: `loadout sync` fails naming
// the file and line, and the catalog keeps the last good version.
func TestSyncBrokenSkillGit(t *testing.T) {
	g := newGitRepo(t, map[string]string{
		"skills/pdf/SKILL.md":    skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1"),
		"skills/deploy/SKILL.md": skillMD("deploy", "Deploy the service. Use when asked to deploy.", "v1"),
	})
	env := func(string) string { return "" }
	cfg := writeRemoteConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}})
	lockPath := filepath.Join(filepath.Dir(cfg), "loadout.lock")
	if r := runCLIEnv(t, env, "sync", "--config", cfg); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lock, _ := os.ReadFile(lockPath)
	g.commit("break pdf", map[string]string{
		"skills/pdf/SKILL.md":    "---\nname: pdf\ndescription: [unclosed\n---\nbody\n",
		"skills/deploy/SKILL.md": skillMD("deploy", "Deploy the service. Use when asked to deploy.", "v2"),
	})
	g.push()
	r := runCLIEnv(t, env, "sync", "--config", cfg)
	if r.code != 1 || strings.Contains(r.stdout, "removed") || !strings.Contains(r.stdout, "skills/pdf/SKILL.md: yaml-invalid") ||
		!strings.Contains(r.stdout, "line 3") || !strings.Contains(r.stdout, "last good") {
		t.Fatalf("sync of a broken skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(lock) {
		t.Fatal("a broken skill moved the pin")
	}
	if got := listJSON(t, env, cfg); got.names() != "deploy,pdf" {
		t.Fatalf("the catalog after a broken commit: %s", got.names())
	}
	// Deleting the folder is a removal, said as one.
	g.commit("drop pdf", map[string]string{"skills/pdf/SKILL.md": ""})
	g.push()
	if r := runCLIEnv(t, env, "sync", "--config", cfg); r.code != 0 || !strings.Contains(r.stdout, "1 removed (pdf)") {
		t.Fatalf("sync of a removal: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
