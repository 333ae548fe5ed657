package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openaiLayout writes a repository laid out like openai/skills: every skill
// under skills/.curated and skills/.system, which discovery skips as dot
// folders; .git is not named.
func openaiLayout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"skills/.curated/pdf", "skills/.curated/docx", "skills/.system/installer", "skills/.git/objects"} {
		must(t, os.MkdirAll(filepath.Join(dir, p), 0o755))
	}
	for _, n := range []string{".curated/pdf", ".curated/docx", ".system/installer"} {
		name := filepath.Base(n)
		must(t, os.WriteFile(filepath.Join(dir, "skills", n, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Use when working with "+name+" files.\n---\nbody\n"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(dir, "skills/.git/objects/SKILL.md"), []byte("not a skill"), 0o644))
	return dir
}

// TestCheckFailsOnNothing: on a repository whose skills are all
// under dot folders, check printed "0 skills" and exited 0, and prompt
// printed nothing and exited 0. Now check fails naming the dot folders and
// how to include them; naming them as roots passes.
func TestCheckFailsOnNothing(t *testing.T) {
	dir := openaiLayout(t)
	skills := filepath.Join(dir, "skills")
	r := runCLI(t, "check", skills)
	if r.code != 1 || !strings.Contains(r.stdout, "error root-empty: "+skills) || !strings.Contains(r.stdout, ".curated, .system hold SKILL.md files") ||
		!strings.Contains(r.stdout, "--root "+filepath.Join(skills, ".curated")+" --root "+filepath.Join(skills, ".system")) || strings.Contains(r.stdout, ".git") {
		t.Errorf("check of dot folders: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "check", "--json", skills)
	var out struct {
		Skills, Errors int
		Diagnostics    []struct{ Code, Path string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 1 || out.Errors != 1 || out.Diagnostics[0].Code != "root-empty" || out.Diagnostics[0].Path != skills {
		t.Errorf("check --json: exit %d, %+v (%v)", r.code, out, err)
	}
	r = runCLI(t, "check", "--fail-on", "error", filepath.Join(skills, ".curated"), filepath.Join(skills, ".system"))
	if r.code != 0 || !strings.Contains(r.stdout, "3 skills, 0 errors") {
		t.Errorf("check of the dot folders as roots: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A folder with no skill at all, and none hidden: the plain message.
	empty := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(empty, "docs"), 0o755))
	r = runCLI(t, "check", empty)
	if r.code != 1 || !strings.Contains(r.stdout, "no skill found below this folder (a skill is a folder holding SKILL.md)") {
		t.Errorf("check of an empty folder: exit %d\n%s", r.code, r.stdout)
	}

	// prompt: nothing on stdout, why on stderr, exit 2.
	r = runCLI(t, "prompt", skills)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "root-empty") || !strings.Contains(r.stderr, "has no skills: the prompt would be empty") {
		t.Errorf("prompt of dot folders: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "prompt", filepath.Join(skills, ".curated"))
	if r.code != 0 || !strings.Contains(r.stdout, "<name>pdf</name>") {
		t.Errorf("prompt of a dot folder as a root: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCheckConfigRoots: a config's root that does not exist fails check
// (it was a warning), and so does one that yields nothing; a root with
// skills beside them does not hide them.
func TestCheckConfigRoots(t *testing.T) {
	dir := openaiLayout(t)
	cfg := filepath.Join(dir, "loadout.json")
	must(t, os.WriteFile(cfg, []byte(`{"agents":[{"agentId":"coder","skills":[{"root":"skills/.curated"},{"root":"nothere"},{"root":"skills"}]}]}`), 0o644))
	r := runCLI(t, "check", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stdout, "error root-missing: "+filepath.Join(dir, "nothere")) ||
		!strings.Contains(r.stdout, "error root-empty: "+filepath.Join(dir, "skills")) || !strings.Contains(r.stdout, "2 skills, 2 errors") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCheckMissingStoreIsEmpty: "store": "loadout.db" written
// down made check exit 2 before the first serve, while leaving the key out
// worked. A store not created yet is empty however it is named, and
// nothing creates it.
func TestCheckMissingStoreIsEmpty(t *testing.T) {
	dir := openaiLayout(t)
	for _, c := range []struct{ name, cfg string }{
		{"named", `{"store":"loadout.db","agents":[{"agentId":"coder","skills":[{"root":"skills/.curated"},{"store":true}]}]}`},
		{"default", `{"agents":[{"agentId":"coder","skills":[{"root":"skills/.curated"},{"store":true}]}]}`},
	} {
		cfg := filepath.Join(dir, c.name+".json")
		must(t, os.WriteFile(cfg, []byte(c.cfg), 0o644))
		for _, args := range [][]string{{"check", "--config", cfg}, {"list", "--config", cfg}, {"prompt", "--config", cfg, "--agent", "coder"}} {
			r := runCLI(t, args...)
			if r.code != 0 || !strings.Contains(r.stderr, "loadout.db (not created yet: no stored skills)") {
				t.Errorf("%s: %v: exit %d\n%s%s", c.name, args, r.code, r.stdout, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "loadout.db")); err == nil {
			t.Fatalf("%s: a read created the store", c.name)
		}
	}
	// Only a store, and it is empty: nothing was checked, which fails.
	r := runCLI(t, "check", "--db", filepath.Join(dir, "none.db"))
	if r.code != 1 || !strings.Contains(r.stdout, "error no-skills") {
		t.Errorf("check of an empty store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestTokenCreateHint: the hint names the store the server uses, so the
// token is made where the server reads it.
func TestTokenCreateHint(t *testing.T) {
	wd, _ := os.Getwd()
	for dsn, want := range map[string]string{
		filepath.Join(wd, "data", "loadout.db"): "loadout token create --scope admin --db data/loadout.db",
		"/srv/loadout/loadout.db":               "loadout token create --scope admin --db /srv/loadout/loadout.db",
		"/srv/my skills/loadout.db":             "loadout token create --scope admin --db '/srv/my skills/loadout.db'",
		"/srv/it's/loadout.db":                  `loadout token create --scope admin --db '/srv/it'\''s/loadout.db'`,
		"postgres://u:secret@db:5432/loadout":   `loadout token create --scope admin --db 'postgres://u:***@db:5432/loadout'`, // * would glob
		"/srv/\x1b]0;x\x07/loadout.db":          `loadout token create --scope admin --db '/srv/\x1b]0;x\a/loadout.db'`,
	} {
		if got := tokenCreateHint(dsn, "--scope admin"); got != want {
			t.Errorf("tokenCreateHint(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestServeHintNamesStore: serve refusing a non-loopback address without
// tokens names its own store in the command it suggests.
func TestServeHintNamesStore(t *testing.T) {
	dir := openaiLayout(t)
	db := filepath.Join(dir, "elsewhere", "served.db")
	must(t, os.MkdirAll(filepath.Dir(db), 0o755))
	// The real binary: serve's background work (the folder watch) logs
	// while it refuses, which an in-process run would race on its buffer.
	r := binCLI(t, "serve", "--addr", "0.0.0.0:0", "--db", db, filepath.Join(dir, "skills/.curated"))
	if r.code != 2 || !strings.Contains(r.stderr, "loadout token create --scope admin --db "+db) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}
