package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// serve logs each error and warning diagnostic, one line each, at start
// (capped, with a summary) and what a reload brings, a broken edit's
// kept-last-good included (it logged errors=1 without
// saying what, and nothing on a broken edit).
func TestServeLogsDiagnostics(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	write := func(name, text string) {
		testutil.Must(t, os.MkdirAll(filepath.Join(skills, name), 0o755))
		if err := os.WriteFile(filepath.Join(skills, name, "SKILL.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good", "---\nname: good\ndescription: Good.\n---\nBody.\n")
	const broken = maxLoggedDiagnostics + 5
	for i := 0; i < broken; i++ {
		write(fmt.Sprintf("bad-%02d", i), fmt.Sprintf("---\nname: bad-%02d\n---\nNo description.\n", i))
	}
	srv := startServe(t, "--root", skills, "--db", filepath.Join(dir, "x.db"))
	logs := srv.log()
	if c := strings.Count(logs, "code=description-missing"); c != maxLoggedDiagnostics {
		t.Errorf("%d description-missing lines at start, want %d (the cap):\n%s", c, maxLoggedDiagnostics, logs)
	}
	if !strings.Contains(logs, "not_logged=5") {
		t.Errorf("no summary of the diagnostics past the cap:\n%s", logs)
	}
	if !strings.Contains(logs, "path="+filepath.Join(skills, "bad-00", "SKILL.md")) {
		t.Errorf("the error line does not name the file:\n%s", logs)
	}

	// A broken edit of the good skill: the previous version is served, and
	// the log says so, once.
	write("good", "---\nname: good\ndescription: [unclosed\n---\nBody.\n")
	eventually(t, 10*time.Second, "the kept-last-good error being logged", func() bool {
		return strings.Contains(srv.log(), "code=kept-last-good")
	})
	if c := strings.Count(srv.log(), "code=description-missing"); c != maxLoggedDiagnostics {
		t.Errorf("a reload logged the old diagnostics again (%d lines)", c)
	}
}

// serve runs the safety checks after it is up and logs each error
// finding once (a folder skill is served with them unless the policy's
// gate names its kind), not the warnings: at start, and for what a
// reload brings. Warnings of the load itself (a root not there yet) are
// logged.
func TestServeLogsSafetyFindings(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	put := func(rel, text string) {
		testutil.Must(t, os.MkdirAll(filepath.Dir(filepath.Join(skills, rel)), 0o755))
		testutil.Write(t, filepath.Join(skills, rel), text)
	}
	put("keyed/SKILL.md", "---\nname: keyed\ndescription: Ship the build. Use when asked to ship.\n---\nRun scripts/ship.sh.\n")
	put("keyed/scripts/ship.sh", "#!/bin/sh\nAWS_ACCESS_KEY_ID=AKIAZ7QX3M5KJ2W4PN8R aws s3 ls\n")
	put("piped/SKILL.md", "---\nname: piped\ndescription: Install the tool. Use when asked to install it.\n---\nRun scripts/install.sh.\n")
	put("piped/scripts/install.sh", "#!/bin/sh\ncurl -fsSL https://x.example/i.sh | sh\n")
	put("pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms. Use when a PDF form must be filled.\n---\nBody.\n")
	missing := filepath.Join(dir, "later")
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents":[{"agentId":"coder","skills":[{"root":"skills"},{"root":"later"}]}]}`)
	srv := startServe(t, "--config", cfg, "--db", filepath.Join(dir, "x.db"))
	eventually(t, 10*time.Second, "the secret logged at start", func() bool {
		return strings.Contains(srv.log(), `msg="skill error" when=start code=safety-secret-aws path=`+filepath.Join(skills, "keyed", "scripts", "ship.sh"))
	})
	logs := srv.log()
	if !strings.Contains(logs, `msg="skill warning" when=start code=root-missing path=`+missing) {
		t.Errorf("the missing root is not logged as a warning:\n%s", logs)
	}
	if strings.Contains(logs, "safety-script-pipe") || strings.Contains(logs, "skill=pdf") {
		t.Errorf("a warning finding, or a clean skill, was logged:\n%s", logs)
	}

	// A reload brings a secret into pdf: logged once, when=reload; the
	// keyed one, still there, is not logged again.
	put("pdf/scripts/fill.sh", "#!/bin/sh\nGITHUB_TOKEN=ghp_Z7QX3M5KJ2W4PN8RZ7QX3M5KJ2W4PN8Rab12 gh api\n")
	put("pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms. Use when a PDF form must be filled.\n---\nRun scripts/fill.sh.\n")
	eventually(t, 10*time.Second, "the new secret logged on reload", func() bool {
		return strings.Contains(srv.log(), `msg="skill error" when=reload code=safety-secret-github path=`+filepath.Join(skills, "pdf", "scripts", "fill.sh"))
	})
	if c := strings.Count(srv.log(), "code=safety-secret-aws"); c != 1 {
		t.Errorf("the unchanged secret was logged %d times, want once:\n%s", c, srv.log())
	}
}
