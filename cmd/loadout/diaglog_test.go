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
// kept-last-good included (issue 8, item 8: it logged errors=1 without
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
