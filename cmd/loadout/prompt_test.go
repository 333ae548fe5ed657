package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// The prompt command refuses budgets it cannot honour, and at a thousand
// skills its stderr holds the diagnostics and one count, not a line per
// skill (--verbose gives those).
func TestPromptBudgetAndSummary(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 1000; i++ {
		name := fmt.Sprintf("skill-%04d", i)
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: Use when doing thing "+name+".\n---\nBody.\n")
	}
	for _, b := range []string{"-5", "-2"} {
		r := runCLI(t, "prompt", "--root", dir, "--budget", b)
		if r.code == 0 || !strings.Contains(r.stderr, "--budget "+b+": give a number of characters, or -1 for no limit") || r.stdout != "" {
			t.Errorf("--budget %s: %d %q", b, r.code, r.stderr)
		}
	}
	r := runCLI(t, "prompt", "--root", dir, "--budget", "50")
	if r.code == 0 || !strings.Contains(r.stderr, "--budget 50 is too small") || r.stdout != "" {
		t.Errorf("--budget 50: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "prompt", "--root", dir)
	if r.code != 0 {
		t.Fatalf("prompt: %d %s", r.code, r.stderr)
	}
	// At 1,000 skills and the default budget every skill keeps at least
	// its name, most of them in a group line or by name only.
	if n := strings.Count(r.stderr, "\n"); n > 10 || !strings.Contains(r.stderr, "listed by name only") || strings.Contains(r.stderr, "skill skill-0500:") {
		t.Errorf("%d lines on stderr at 1,000 skills:\n%.2000s", n, r.stderr)
	}
	r = runCLI(t, "prompt", "--root", dir, "--verbose")
	if !strings.Contains(r.stderr, "skill skill-0500: listed by name only, from") && !strings.Contains(r.stderr, "skill skill-0500: counted in domain ") {
		t.Errorf("--verbose does not name each skill's tier:\n%.1000s", r.stderr)
	}
}

// Counts read right in the singular.
func TestPluralsInSummaries(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "one"), 0o755))
	testutil.Write(t, filepath.Join(dir, "one", "SKILL.md"), "---\nname: one\ndescription: Use when one.\n---\nOne.\n")
	if r := runCLI(t, "check", dir); !strings.Contains(r.stdout, "1 skill, 0 errors, 0 warnings") {
		t.Errorf("check: %q", r.stdout)
	}
	if r := runCLI(t, "list", dir); strings.Contains(r.stdout, "1 skills") {
		t.Errorf("list: %q", r.stdout)
	}
	if r := runCLI(t, "import", "--db", filepath.Join(t.TempDir(), "x.db"), dir); !strings.Contains(r.stdout, "1 skill imported") {
		t.Errorf("import: %q %q", r.stdout, r.stderr)
	}
}
