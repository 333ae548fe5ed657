package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// lockFixture is a real git repository served over HTTP with one skill,
// pdf, and a config whose agent coder reads it as source "team".
func lockFixture(t *testing.T) (g *gitRepo, cfg, lock string) {
	t.Helper()
	g = newGitRepo(t, map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1")})
	cfg = writeRemoteConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": "team"})
	return g, cfg, filepath.Join(filepath.Dir(cfg), "loadout.lock")
}

// pushLint commits and pushes a second skill, lint, and moves the pin to
// it with `loadout sync` run as another process would (in this one: its
// own manager, its own lock read).
func pushLint(t *testing.T, g *gitRepo, cfg string) {
	t.Helper()
	g.commit("add lint", map[string]string{"skills/lint/SKILL.md": skillMD("lint", "Lint the code. Use when asked to lint.", "v1")})
	g.push()
	if r := runCLIEnv(t, func(string) string { return "" }, "sync", "--config", cfg); r.code != 0 || !strings.Contains(r.stdout, "1 added (lint)") {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func served(t *testing.T, base, name string) bool {
	t.Helper()
	code, _ := httpDo(t, "GET", base+"/v1/agents/coder/skills/"+name, "", nil)
	return code == 200
}

// TestServeFollowsLockFile: when `loadout sync` in another process moves a
// pin, a running server serves the snapshot the lock names now, on the
// lock file's change, and logs which source moved; a lock that does not
// read keeps what is served and says so.
func TestServeFollowsLockFile(t *testing.T) {
	g, cfg, lock := lockFixture(t)
	a := startServe(t, "--config", cfg)
	if !served(t, a.base, "pdf") || served(t, a.base, "lint") {
		t.Fatalf("before the sync: pdf must be served, lint not\n%s", a.log())
	}
	pushLint(t, g, cfg)
	eventually(t, 10*time.Second, "lint served after another process moved the lock", func() bool { return served(t, a.base, "lint") })
	eventually(t, 5*time.Second, "the follow logged", func() bool {
		l := a.log()
		return strings.Contains(l, `msg="lock file followed" why="lock file changed" source=team`) && strings.Contains(l, "skills=2")
	})
	if strings.Contains(a.log(), "lock file not followed") {
		t.Errorf("a good lock logged as not followed:\n%s", a.log())
	}

	// A lock that does not parse: what is served stays, one warning says why.
	testutil.Write(t, lock, "{not json")
	eventually(t, 10*time.Second, "the unreadable lock logged", func() bool {
		l := a.log()
		return strings.Contains(l, `msg="lock file not followed: the snapshots served are kept" code=remote-lock`) && strings.Contains(l, "loadout.lock")
	})
	if !served(t, a.base, "pdf") || !served(t, a.base, "lint") {
		t.Errorf("an unreadable lock dropped skills\n%s", a.log())
	}
}

// TestServeNoWatchFollowsLockOnReload: with --no-watch the lock file is
// not watched (a moved pin is not served on its own), POST /v1/reload
// follows it; and a source sync that finds the pin already where another
// process moved it reads the pinned snapshot into the catalog.
func TestServeNoWatchFollowsLockOnReload(t *testing.T) {
	t.Run("reload", func(t *testing.T) {
		g, cfg, _ := lockFixture(t)
		a := startServe(t, "--config", cfg, "--no-watch")
		pushLint(t, g, cfg)
		// Four times the watch's debounce: a watching server has followed by now.
		time.Sleep(4 * configDebounce)
		if served(t, a.base, "lint") || strings.Contains(a.log(), "lock file followed") {
			t.Fatalf("a --no-watch server followed the lock file on its own\n%s", a.log())
		}
		if code, body := httpDo(t, "POST", a.base+"/v1/reload", "", nil); code != 200 {
			t.Fatalf("POST /v1/reload: %d %s", code, body)
		}
		if !served(t, a.base, "lint") || !served(t, a.base, "pdf") {
			t.Fatalf("after POST /v1/reload: lint and pdf must be served\n%s", a.log())
		}
		if l := a.log(); !strings.Contains(l, `msg="lock file followed" why="POST /v1/reload" source=team`) {
			t.Errorf("the follow on reload is not logged:\n%s", l)
		}
	})
	t.Run("sync at the pin", func(t *testing.T) {
		g, cfg, _ := lockFixture(t)
		a := startServe(t, "--config", cfg, "--no-watch")
		// A sync that finds nothing new reads nothing again.
		if code, body := httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil); code != 200 || !strings.Contains(body, `"moved":false`) {
			t.Fatalf("sync, unchanged: %d %s", code, body)
		}
		pushLint(t, g, cfg)
		code, body := httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil)
		if code != 200 || !strings.Contains(body, `"moved":false`) {
			t.Fatalf("sync at the pin another process moved: %d %s", code, body)
		}
		eventually(t, 5*time.Second, "lint served after the sync at its pin", func() bool { return served(t, a.base, "lint") })
		l := a.log()
		if n := strings.Count(l, "served at its pin"); n != 1 || !strings.Contains(l, `why="remote sync: team served at its pin"`) {
			t.Errorf("want one refresh, for the sync that found the pin moved, got %d:\n%s", n, l)
		}
	})
}
