package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// runIn runs a command in-process from dir, with the given environment
// (everything else unset).
func runIn(t *testing.T, dir string, vars map[string]string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(k string) string { return vars[k] }}
	code := run(context.Background(), e, args)
	return result{code, out.String(), errb.String()}
}

// entries lists what a folder holds, to prove a command created nothing.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// errorLine returns the error line of a failed command: the one line on
// stderr that starts with "loadout: " and is not the config/store line.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "loadout: ") && !strings.HasPrefix(l, "loadout: config ") {
			out = append(out, l)
		}
	}
	return out
}

// Every catalog command, with every combination of --config, --root and
// --agent (and none of them), succeeds or fails with one error line; none
// panics (prompt --root DIR --agent X dereferenced a nil
// config).
func TestCatalogCommandsNeverPanic(t *testing.T) {
	ex := examplesDir(t)
	cfg := filepath.Join(ex, "loadout.json")
	root := filepath.Join(ex, "skills")
	before := entries(t, ex)
	cmds := [][]string{
		{"check"}, {"list"}, {"prompt"}, {"load", "deploy"}, {"read", "deploy", "SKILL.md"},
	}
	for _, c := range cmds {
		for mask := 0; mask < 8; mask++ {
			args := append([]string(nil), c...)
			if mask&1 != 0 {
				args = append(args, "--config", cfg)
			}
			if mask&2 != 0 {
				args = append(args, "--root", root)
			}
			if mask&4 != 0 && c[0] != "check" {
				args = append(args, "--agent", "coder")
			}
			for _, agent := range []string{"", "nosuch"} {
				a := args
				if agent != "" {
					if c[0] == "check" {
						continue
					}
					a = append(append([]string(nil), args...), "--agent", agent)
				}
				t.Run(strings.Join(a, " "), func(t *testing.T) {
					var r result
					func() {
						defer func() {
							if p := recover(); p != nil {
								t.Fatalf("loadout %q panicked: %v", a, p)
							}
						}()
						r = runIn(t, t.TempDir(), nil, a...)
					}()
					switch r.code {
					case 0:
					case 1:
						// load/read of a skill the agent lacks, check with errors.
					default:
						if errs := errorLines(r.stderr); len(errs) != 1 {
							t.Errorf("loadout %q: exit %d, want one error line, got:\n%s", a, r.code, r.stderr)
						}
					}
				})
			}
		}
	}
	if after := entries(t, ex); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("commands created files in examples: %v, was %v", after, before)
	}
}

// Commands that only read never create a store (item 6), and every command
// names the store it uses on stderr (item 3).
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	ex := examplesDir(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"versions", "--db", missing, "x"},
		{"receipts", "--db", missing},
		{"token", "list", "--db", missing},
		{"token", "revoke", "--db", missing, "tok"},
		{"restore", "--db", missing, "x", "1"},
		{"export", "--db", missing, "x", "--out", filepath.Join(dir, "x.json")},
	} {
		r := runIn(t, dir, nil, args...)
		if r.code == 0 || len(errorLines(r.stderr)) != 1 || !strings.Contains(r.stderr, "does not exist") {
			t.Errorf("loadout %q: exit %d, want one line saying the store does not exist:\n%s", args, r.code, r.stderr)
		}
		if got := entries(t, dir); len(got) != 0 {
			t.Fatalf("loadout %q created %v", args, got)
		}
	}
	// An unknown URL scheme is an error naming the forms, not a folder.
	for _, args := range [][]string{
		{"versions", "--db", "mysql://x", "x"},
		{"token", "create", "--db", "mysql://x", "--scope", "admin"},
		{"import", "--db", "mysql://x", dir},
		{"list", "--db", "mysql://x"},
	} {
		r := runIn(t, dir, nil, args...)
		if r.code != 2 || len(errorLines(r.stderr)) != 1 || !strings.Contains(r.stderr, "postgres://") || !strings.Contains(r.stderr, "SQLite file") {
			t.Errorf("loadout %q: exit %d, want one line naming the supported stores:\n%s", args, r.code, r.stderr)
		}
		if got := entries(t, dir); len(got) != 0 {
			t.Fatalf("loadout %q created %v", args, got)
		}
	}
	r := runIn(t, dir, map[string]string{"LOADOUT_DB": "mysql://x"}, "token", "list")
	if r.code != 2 || !strings.Contains(r.stderr, "$LOADOUT_DB") {
		t.Errorf("LOADOUT_DB=mysql://x: exit %d: %s", r.code, r.stderr)
	}

	// check and list over a {"store": true} source read nothing into being.
	// The store is empty: check fails as it checked nothing (no-skills)
	// and prompt as its prompt would be empty; list lists none.
	proj := t.TempDir()
	testutil.Write(t, filepath.Join(proj, "loadout.json"), `{"agents":[{"agentId":"a","skills":[{"store":true}]}]}`)
	exits := map[string]int{"check": 1, "prompt": 2}
	for _, args := range [][]string{{"check"}, {"list"}, {"list", "--agent", "a"}, {"prompt", "--agent", "a"}} {
		r := runIn(t, proj, nil, args...)
		if r.code != exits[args[0]] {
			t.Errorf("loadout %q: exit %d, want %d:\n%s", args, r.code, exits[args[0]], r.stderr)
		}
		if !strings.Contains(r.stderr, "loadout: config "+filepath.Join(proj, "loadout.json")+", store "+filepath.Join(proj, "loadout.db")) {
			t.Errorf("loadout %q does not say which config and store:\n%s", args, r.stderr)
		}
		if got := entries(t, proj); len(got) != 1 {
			t.Fatalf("loadout %q created %v", args, got)
		}
	}
	// plugins too, with a plugin folder configured.
	testutil.Write(t, filepath.Join(proj, "loadout.json"), `{"agents":[],"plugins":["`+filepath.Join(ex, "plugins", "acme-ops")+`"]}`)
	if r := runIn(t, proj, nil, "plugins"); r.code != 0 || len(entries(t, proj)) != 1 {
		t.Errorf("plugins: exit %d, folder %v:\n%s", r.code, entries(t, proj), r.stderr)
	}

	// Writers create the store where the one rule puts it: beside the
	// config, and say so.
	r = runIn(t, proj, nil, "token", "create", "--scope", "admin")
	if r.code != 0 || !strings.Contains(r.stderr, "store "+filepath.Join(proj, "loadout.db")) {
		t.Fatalf("token create: exit %d:\n%s", r.code, r.stderr)
	}
	if r := runIn(t, proj, nil, "token", "list"); r.code != 0 || !strings.Contains(r.stdout, "admin") {
		t.Errorf("token list after create: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// serveExit runs the real binary's serve (or mcp) in dir and returns its
// exit code and stderr; it must refuse, not start.
func serveExit(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	// A serve that starts instead of refusing is stopped after a minute.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, loadoutBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	cmd.Stdin = strings.NewReader("")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, errb.String()
}

// serve and mcp never serve the examples unasked (item 4), and a --root
// that does not exist fails serve as it fails check (item 13).
func TestServeRefusesWithoutSkills(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0"},
		{"mcp"},
	} {
		code, stderr := serveExit(t, dir, args...)
		if code != 2 || len(errorLines(stderr)) != 1 || !strings.Contains(stderr, "--demo") || !strings.Contains(stderr, "--root") {
			t.Errorf("loadout %q: exit %d, want one line naming --config, --root and --demo:\n%s", args, code, stderr)
		}
	}
	code, stderr := serveExit(t, dir, "serve", "--addr", "127.0.0.1:0", "--root", filepath.Join(dir, "nonexistent"))
	if code != 2 || !strings.Contains(stderr, "--root "+filepath.Join(dir, "nonexistent")+": no such folder") {
		t.Errorf("serve --root /nonexistent: exit %d:\n%s", code, stderr)
	}
	if r := runIn(t, dir, nil, "check", "--root", filepath.Join(dir, "nonexistent")); r.code == 0 {
		t.Errorf("check --root /nonexistent: exit 0")
	}
	code, stderr = serveExit(t, dir, "serve", "--demo", "--config", "x.json")
	if code != 2 || !strings.Contains(stderr, "--demo") {
		t.Errorf("serve --demo --config: exit %d:\n%s", code, stderr)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("refused serve created %v", got)
	}
}

// serve --demo serves the built-in examples (the README's first command).
func TestServeDemo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	srv := startServe(t, "--demo", "--no-watch")
	code, body := httpDo(t, "GET", srv.base+"/v1/skills", "", nil)
	if code != 200 || !strings.Contains(body, "deploy") {
		t.Fatalf("GET /v1/skills: %d %s", code, body)
	}
}

// A folder argument is --root for serve, mcp, check, list and prompt
// (item 1: it was ignored, and check DIR in a folder holding loadout.json
// checked the config instead); other commands refuse an extra argument
// in one line.
func TestFolderArgument(t *testing.T) {
	loadoutBinary(t) // built before runIn moves to another folder
	proj := t.TempDir()
	testutil.Write(t, filepath.Join(proj, "loadout.json"), `{"agents":[{"agentId":"a","skills":[{"root":"good"}]}]}`)
	testutil.Must(t, os.MkdirAll(filepath.Join(proj, "good", "fine"), 0o755))
	testutil.Write(t, filepath.Join(proj, "good", "fine", "SKILL.md"), "---\nname: fine\ndescription: Fine.\n---\nBody.\n")
	testutil.Must(t, os.MkdirAll(filepath.Join(proj, "broken", "bad"), 0o755))
	testutil.Write(t, filepath.Join(proj, "broken", "bad", "SKILL.md"), "---\nname: bad\n---\nNo description.\n")

	if r := runIn(t, proj, nil, "check", "broken"); r.code != 1 || !strings.Contains(r.stdout, "description-missing") {
		t.Errorf("check broken: exit %d, want 1 with the broken skill's error:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, proj, nil, "check", "good"); r.code != 0 {
		t.Errorf("check good: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, proj, nil, "list", "broken"); r.code != 0 || strings.Contains(r.stdout, "fine") {
		t.Errorf("list broken lists the config's skills: exit %d:\n%s", r.code, r.stdout)
	}
	if r := runIn(t, proj, nil, "prompt", "good"); r.code != 0 || !strings.Contains(r.stdout, "fine") {
		t.Errorf("prompt good: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, proj, nil, "check", "--help"); !strings.Contains(r.stderr, "FOLDER argument is the same as --root") {
		t.Errorf("check --help does not say a FOLDER is --root:\n%s", r.stderr)
	}
	for _, args := range [][]string{
		{"load", "fine", "extra"}, {"read", "fine"}, {"plugins", "extra"}, {"receipts", "extra"},
		{"token", "list", "extra"}, {"versions"}, {"export", "a", "b", "--out", "-"},
	} {
		r := runIn(t, proj, nil, args...)
		if r.code != 2 || len(errorLines(r.stderr)) != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("loadout %q: exit %d, want one error line:\n%s", args, r.code, r.stderr)
		}
	}
	// serve FOLDER serves that folder, not the config next to it.
	srv := startServe(t, filepath.Join(proj, "broken"), "--db", filepath.Join(t.TempDir(), "x.db"), "--no-watch")
	code, body := httpDo(t, "GET", srv.base+"/v1/skills", "", nil)
	if code != 200 || strings.Contains(body, `"fine"`) {
		t.Errorf("serve FOLDER: %d %s", code, body)
	}
	code, stderr := serveExit(t, proj, "mcp", filepath.Join(proj, "nonexistent"))
	if code != 2 || !strings.Contains(stderr, "no such folder") {
		t.Errorf("mcp FOLDER that does not exist: exit %d:\n%s", code, stderr)
	}
}

// enable and disable refuse a plugin key no configured plugin has, and
// write nothing (item 5: they exited 0 and stored an override).
func TestEnableUnknownPluginKey(t *testing.T) {
	ex := examplesDir(t)
	proj := t.TempDir()
	testutil.Write(t, filepath.Join(proj, "loadout.json"), `{"agents":[],"plugins":["`+filepath.Join(ex, "plugins", "acme-ops")+`"]}`)
	bare := t.TempDir()
	for _, c := range []struct {
		dir  string
		args []string
	}{
		{proj, []string{"enable", "plugin:nosuch/thing"}},
		{proj, []string{"disable", "plugin:"}},
		{proj, []string{"disable", "plugin:acme-ops/nosuch"}},
		{bare, []string{"enable", "plugin:acme-ops/oncall-handoff"}},
	} {
		r := runIn(t, c.dir, nil, c.args...)
		if r.code != 1 || len(errorLines(r.stderr)) != 1 {
			t.Errorf("loadout %q: exit %d, want 1 with one error line:\n%s", c.args, r.code, r.stderr)
		}
		if got := entries(t, c.dir); len(got) > 1 {
			t.Errorf("loadout %q created %v", c.args, got)
		}
	}
	if r := runIn(t, proj, nil, "enable", "plugin:acme-ops/oncall-handoff"); r.code != 0 {
		t.Errorf("enable a real plugin skill: exit %d:\n%s", r.code, r.stderr)
	}
}

// export names its config and store on stderr whether the skill came from
// the store or the configured folders.
func TestExportSaysWhichStore(t *testing.T) {
	ex := examplesDir(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	if r := runIn(t, dir, nil, "import", "--db", db, filepath.Join(ex, "skills", "deploy")); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	r := runIn(t, dir, nil, "export", "--db", db, "deploy", "--out", "-")
	if r.code != 0 || strings.Count(r.stderr, "loadout: config none, store "+db) != 1 {
		t.Errorf("export from the store: exit %d:\n%s", r.code, r.stderr)
	}
	r = runIn(t, dir, nil, "export", "--config", filepath.Join(ex, "loadout.json"), "--db", db, "code-review", "--out", "-")
	if r.code != 0 || strings.Count(r.stderr, "loadout: config ") != 1 {
		t.Errorf("export from the configured folders: exit %d:\n%s", r.code, r.stderr)
	}
}

// A store that cannot be reached is one error line, without the password
// (pgx's error lists each address it tried on a line of its own).
func TestStoreErrorIsOneLine(t *testing.T) {
	r := runIn(t, t.TempDir(), nil, "list", "--db", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || strings.Contains(r.stderr, "secret") {
		t.Errorf("exit %d, want one line without the password:\n%s", r.code, r.stderr)
	}
}
