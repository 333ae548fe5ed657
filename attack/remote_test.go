package attack

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacks on remote sources across processes: a running serve and the
// `loadout sync` of a person or a cron job share one lock file and one
// snapshot cache. Each repository is a real one, made with the git binary
// and read from its folder.

// gitRemote is a repository: a working copy that commits and a bare
// clone that loadout reads.
type gitRemote struct {
	t          *testing.T
	work, bare string
}

func newGitRemote(t *testing.T, files map[string]string) *gitRemote {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must not skip the remote-source attacks: install git (%v)", err)
		}
		t.Skipf("no git binary (%v): the attack makes its repositories with it", err)
	}
	root := t.TempDir()
	g := &gitRemote{t: t, work: filepath.Join(root, "work"), bare: filepath.Join(root, "skills.git")}
	if err := os.MkdirAll(g.work, 0o755); err != nil {
		t.Fatal(err)
	}
	g.git(g.work, "init", "-q", "-b", "main")
	g.commit("first", files)
	g.git(root, "clone", "-q", "--bare", g.work, g.bare)
	return g
}

func (g *gitRemote) git(dir string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (path → content) and commits them.
func (g *gitRemote) commit(msg string, files map[string]string) {
	g.t.Helper()
	WriteFiles(g.t, g.work, files)
	g.git(g.work, "add", "-A")
	g.git(g.work, "commit", "-q", "-m", msg)
}

// push commits files and pushes them to the bare repository; it returns
// the new commit.
func (g *gitRemote) push(msg string, files map[string]string) string {
	g.t.Helper()
	g.commit(msg, files)
	g.git(g.work, "push", "-q", g.bare, "main")
	return g.git(g.work, "rev-parse", "HEAD")
}

func pdfSkill(body string) map[string]string {
	return map[string]string{
		"skills/pdf/SKILL.md":  "---\nname: pdf\ndescription: Fill PDF forms. Use when a PDF form must be filled.\n---\n" + body + "\n",
		"skills/pdf/ref.md":    "ref " + body + "\n",
		"skills/xlsx/SKILL.md": "---\nname: xlsx\ndescription: Edit spreadsheets. Use when a spreadsheet must be edited.\n---\nxlsx\n",
	}
}

// remoteConfig is a config whose one agent reads the repository as source
// "team"; the snapshot cache is in the server's folder (cache), or at
// the paths extra gives ("lock", "cache": absolute).
func remoteConfig(g *gitRemote, extra map[string]string) string {
	remote := map[string]string{"cache": "cache"}
	for k, v := range extra {
		remote[k] = v
	}
	cfg := map[string]any{
		"agents": []any{map[string]any{"agentId": "coder", "skills": []any{
			map[string]any{"git": g.bare, "ref": "main", "paths": []string{"skills"}, "id": "team"}}}},
		"remote": remote,
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

// lockRevision is the revision loadout.lock pins source team at.
func lockRevision(t *testing.T, path string) string {
	t.Helper()
	var l struct {
		Sources []struct{ ID, Revision string }
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range l.Sources {
		if s.ID == "team" {
			return s.Revision
		}
	}
	t.Fatalf("%s pins no source team:\n%s", path, data)
	return ""
}

// readRef is read_skill_file of pdf's ref.md: its status and body.
func readRef(t *testing.T, s *Server) (int, string) {
	t.Helper()
	code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/pdf/files/ref.md?raw=1", "", "")
	return code, body
}

// TestAttackSyncBesideServe: `loadout sync` run twice beside a running
// serve. serve follows the lock the CLI moved (on the file's change, on
// POST /v1/reload and on SIGHUP), and no sync removes the snapshot serve
// still serves: read_skill_file answers 200 throughout, and /v1/sources
// names the revision served.
func TestAttackSyncBesideServe(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		for _, mode := range []string{"watch", "reload", "SIGHUP"} {
			t.Run(mode, func(t *testing.T) {
				g := newGitRemote(t, pdfSkill("v1"))
				o := Options{Engine: engine, Config: remoteConfig(g, nil)}
				if mode != "watch" {
					o.Args = []string{"--no-watch"}
				}
				s := Start(t, o)
				lock := filepath.Join(s.Dir, "loadout.lock")
				if code, body := readRef(t, s); code != 200 || !strings.Contains(body, "ref v1") {
					t.Fatalf("start: %d %s\n%s", code, body, s.Log())
				}
				var rev string
				for _, v := range []string{"v2", "v3"} {
					rev = g.push(v, pdfSkill(v))
					if out, errOut, code := s.CLI(t, "sync"); code != 0 || !strings.Contains(out, "1 changed (pdf)") {
						t.Fatalf("sync to %s: %d\n%s%s", v, code, out, errOut)
					}
					if lockRevision(t, lock) != rev {
						t.Fatalf("the CLI did not move the pin to %s", rev)
					}
					// Whatever serve serves is still there to read.
					if code, body := readRef(t, s); code != 200 || !strings.HasPrefix(body, "ref v") {
						t.Fatalf("after the sync to %s, read_skill_file: %d %s", v, code, body)
					}
				}
				switch mode {
				case "reload":
					if code, _, body := s.Do(t, "POST", "/v1/reload", "", ""); code != 200 {
						t.Fatalf("reload: %d %s", code, body)
					}
				case "SIGHUP":
					if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
						t.Fatal(err)
					}
				}
				eventually(t, 10*time.Second, "serve follows the lock to v3", func() bool {
					code, body := readRef(t, s)
					return code == 200 && strings.Contains(body, "ref v3")
				})
				_, _, src := s.Do(t, "GET", "/v1/sources", "", "")
				if !strings.Contains(src, `"revision":"`+rev+`"`) || strings.Contains(src, `"error"`) || !strings.Contains(src, `"skills":2`) {
					t.Errorf("/v1/sources after following: %s", src)
				}
				_, _, env := s.Do(t, "GET", "/v1/agents/coder/skills/pdf", "", "")
				if !strings.Contains(env, rev) || !strings.Contains(env, `provenance=\"skills/pdf\"`) {
					t.Errorf("the envelope after following: %s", env)
				}
				s.Healthy(t)
			})
		}
	})
}

// TestAttackTamperedSnapshot: a snapshot file in the cache edited in place
// (same size) is never pinned: `loadout sync` at the same revision leaves
// the lock as it was, and a second server on the same lock and cache
// serves what the repository holds, not the edit.
func TestAttackTamperedSnapshot(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		g := newGitRemote(t, pdfSkill("v1"))
		a := Start(t, Options{Engine: engine, Config: remoteConfig(g, nil)})
		lock := filepath.Join(a.Dir, "loadout.lock")
		before, err := os.ReadFile(lock)
		if err != nil {
			t.Fatalf("serve did not pin the source: %v\n%s", err, a.Log())
		}
		files, _ := filepath.Glob(filepath.Join(a.Dir, "cache", "team", "*", "skills", "pdf", "SKILL.md"))
		if len(files) != 1 {
			t.Fatalf("snapshot files: %v", files)
		}
		data, _ := os.ReadFile(files[0])
		edited := strings.Replace(string(data), "\nv1\n", "\nEV\n", 1)
		if len(edited) != len(data) || edited == string(data) {
			t.Fatalf("edit: %q", data)
		}
		if err := os.WriteFile(files[0], []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}

		out, errOut, code := a.CLI(t, "sync")
		if code != 0 || !strings.Contains(out, "unchanged") {
			t.Fatalf("sync over the edited snapshot: %d\n%s%s", code, out, errOut)
		}
		if after, _ := os.ReadFile(lock); string(after) != string(before) {
			t.Fatalf("the edited snapshot was pinned:\n%s\nwas\n%s", after, before)
		}
		if out, errOut, code := a.CLI(t, "sync", "--check"); code != 0 {
			t.Fatalf("sync --check after the edit: %d\n%s%s", code, out, errOut)
		}

		// Another server on the same lock and cache: what the repository
		// holds.
		b := Start(t, Options{Engine: engine, Config: remoteConfig(g, map[string]string{"lock": lock, "cache": filepath.Join(a.Dir, "cache")})})
		_, _, body := b.Do(t, "GET", "/v1/agents/coder/skills/pdf", "", "")
		if !strings.Contains(body, "v1") || strings.Contains(body, "EV") {
			t.Fatalf("the second server serves the edit: %s\n%s", body, b.Log())
		}
		if after, _ := os.ReadFile(lock); string(after) != string(before) {
			t.Fatal("the second server moved the pin")
		}
	})
}

// TestAttackCrashedServerHoldsNothing: a server killed with SIGKILL leaves
// no lease behind: the next sync removes the snapshot it served, and the
// cache holds only the pinned one.
func TestAttackCrashedServerHoldsNothing(t *testing.T) {
	g := newGitRemote(t, pdfSkill("v1"))
	s := Start(t, Options{Config: remoteConfig(g, nil)})
	cache := filepath.Join(s.Dir, "cache", "team")
	served, _ := filepath.Glob(filepath.Join(cache, "*", "skills"))
	if len(served) != 1 {
		t.Fatalf("snapshots: %v", served)
	}
	g.push("v2", pdfSkill("v2"))
	// While serve runs, the CLI keeps its snapshot.
	if out, errOut, code := s.CLI(t, "sync"); code != 0 {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	// serve follows the lock to v2, and keeps v1 leased for loads that
	// began before the swap.
	eventually(t, 10*time.Second, "serve follows to v2", func() bool {
		code, body := readRef(t, s)
		return code == 200 && strings.Contains(body, "ref v2")
	})
	if _, err := os.Stat(served[0]); err != nil {
		t.Fatalf("the snapshot serve held was removed: %v", err)
	}
	s.Cmd.Process.Kill()
	s.Cmd.Wait()
	rev := g.push("v3", pdfSkill("v3"))
	if out, errOut, code := s.CLI(t, "sync"); code != 0 {
		t.Fatalf("sync after the crash: %d\n%s%s", code, out, errOut)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "[^.]*")) // .leases aside
	if len(left) != 1 || !strings.HasPrefix(filepath.Base(left[0]), rev) {
		t.Fatalf("after a crashed server, the cache holds %v; want only %s's snapshot", left, rev)
	}
}

// TestAttackStaleSourceState: a source whose pin cannot be opened at start
// is shown as failing, with no skills, in /v1/sources and
// /v1/diagnostics; once `loadout sync` fixes the pin, both say so without
// a restart. remote-synced describes the last sync, naming the source
// once.
func TestAttackStaleSourceState(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		g := newGitRemote(t, pdfSkill("v1"))
		lockDir := t.TempDir()
		lock := filepath.Join(lockDir, "loadout.lock")
		// A lock that pins a commit the repository does not have.
		WriteFiles(t, lockDir, map[string]string{"loadout.lock": `{"lockVersion": 1, "sources": [{"id": "team", "kind": "git", "url": "` + g.bare +
			`", "ref": "main", "paths": ["skills"], "revision": "00000000000000000000000000000000000000aa", "digest": "sha256:00", "skills": {"pdf": "sha256:00", "xlsx": "sha256:00"}, "synced": "2026-01-01T00:00:00Z"}]}`})
		s := Start(t, Options{Engine: engine, Config: remoteConfig(g, map[string]string{"lock": lock})})
		_, _, src := s.Do(t, "GET", "/v1/sources", "", "")
		if !strings.Contains(src, `"error":"`) || !strings.Contains(src, `"skills":0`) {
			t.Fatalf("a source that failed to open is shown healthy: %s\n%s", src, s.Log())
		}
		_, _, diags := s.Do(t, "GET", "/v1/diagnostics", "", "")
		if !strings.Contains(diags, `"code":"remote-ref"`) {
			t.Fatalf("/v1/diagnostics lacks the failure: %s", diags)
		}

		if out, errOut, code := s.CLI(t, "sync"); code != 0 {
			t.Fatalf("sync: %d\n%s%s", code, out, errOut)
		}
		// /v1/sources reads the source's state, /v1/diagnostics the
		// catalog, which reads it again just after: both, within a bound.
		eventually(t, 10*time.Second, "serve follows the fixed pin, and the start-up error goes", func() bool {
			_, _, src := s.Do(t, "GET", "/v1/sources", "", "")
			_, _, diags := s.Do(t, "GET", "/v1/diagnostics", "", "")
			return !strings.Contains(src, `"error"`) && strings.Contains(src, `"skills":2`) && !strings.Contains(diags, "remote-ref")
		})
		if code, body := readRef(t, s); code != 200 || !strings.Contains(body, "ref v1") {
			t.Fatalf("after the fix: %d %s", code, body)
		}

		// Two syncs through serve: remote-synced is the last one's.
		var revs []string
		for _, v := range []string{"v2", "v3"} {
			revs = append(revs, g.push(v, pdfSkill(v)))
			if code, _, body := s.Do(t, "POST", "/v1/sources/team/sync", "", ""); code != 200 || !strings.Contains(body, `"moved":true`) {
				t.Fatalf("sync %s: %d %s", v, code, body)
			}
		}
		var d struct {
			Diagnostics []struct{ Code, Message string }
		}
		eventually(t, 5*time.Second, "remote-synced describes the last sync", func() bool {
			_, _, body := s.Do(t, "GET", "/v1/diagnostics", "", "")
			d.Diagnostics = nil
			json.Unmarshal([]byte(body), &d)
			var synced []string
			for _, x := range d.Diagnostics {
				if x.Code == "remote-synced" {
					synced = append(synced, x.Message)
				}
			}
			return len(synced) == 1 && strings.Contains(synced[0], revs[0][:12]+" → "+revs[1][:12]) && strings.Count(synced[0], "team") == 1
		})
	})
}
