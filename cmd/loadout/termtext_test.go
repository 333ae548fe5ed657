package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTermText(t *testing.T) {
	for in, want := range map[string]string{
		"deploy":                "deploy",
		"héllo wörld\ttab":      "héllo wörld\ttab",
		"a\x1b]0;pwned\x07b":    `a\x1b]0;pwned\ab`,
		"f\x1b[31mx":            `f\x1b[31mx`,
		"two\nlines\r":          `two\nlines\r`,
		"c1\u009b2J":            `c1\u009b2J`,
		"del\x7f":               `del\x7f`,
		"rtl\u202egpj.exe":      `rtl\u202egpj.exe`,
		"bad\xffutf8":           `bad\xffutf8`,
		"real\uFFFDreplacement": "real\uFFFDreplacement",
	} {
		if got := termText(in); got != want {
			t.Errorf("termText(%q) = %q, want %q", in, got, want)
		}
	}
}

// noControls fails when out holds a control character other than
// newline and tab: what would reach the terminal.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
			t.Errorf("%s: control character %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
}

// TestImportPrintsNoControls: `loadout import` printed a refused
// file's raw name, so ESC and OSC sequences reached the terminal. Every
// name is escaped, from a folder (a named pipe, a file named with ESC), a
// zip (an entry so named) and the command's own error.
func TestImportPrintsNoControls(t *testing.T) {
	dir := t.TempDir()
	sk := filepath.Join(dir, "sk")
	must(t, os.MkdirAll(sk, 0o755))
	must(t, os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte("---\nname: sk\ndescription: d\n---\nbody\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(sk, "a\x1b]0;pwned\x07b.md"), []byte("x"), 0o644))

	zp := filepath.Join(dir, "z\x1b[2J.zip")
	zf, err := os.Create(zp)
	must(t, err)
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{"zk/SKILL.md": "---\nname: zk\ndescription: d\n---\nbody\n", "zk/e\x1b]52;c;cGF5bG9hZA==\x07.md": "x"} {
		w, err := zw.Create(name)
		must(t, err)
		_, err = w.Write([]byte(body))
		must(t, err)
	}
	must(t, zw.Close())
	must(t, zf.Close())

	db := filepath.Join(dir, "s.db")
	r := runCLI(t, "import", "--db", db, sk, zp, filepath.Join(dir, "gone\x1b[1m"))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `a\x1b]0;pwned\ab.md`) || !strings.Contains(r.stdout, `z\x1b[2J.zip`) || !strings.Contains(r.stdout, `gone\x1b[1m`) {
		t.Errorf("the names are not shown escaped:\n%s", r.stdout)
	}
	noControls(t, "stdout", r.stdout)
	noControls(t, "stderr", r.stderr)

	// A command's own error (fail) too.
	r = runCLI(t, "check", "--root", filepath.Join(dir, "nope\x1b]0;x\x07"))
	noControls(t, "check stdout", r.stdout)
	noControls(t, "check stderr", r.stderr)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestListPrintsNoControls: `loadout list` prints a description and a
// folder holding ESC, OSC and bidi controls escaped, never raw.
func TestListPrintsNoControls(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sk\x1b[2Jills")
	sk := filepath.Join(root, "sk")
	must(t, os.MkdirAll(sk, 0o755))
	must(t, os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte("---\nname: sk\ndescription: \"Fills forms \\e]0;pwned\\a and \\u202Eevil. Use when asked.\"\n---\nbody\n"), 0o644))
	r := runCLI(t, "list", root)
	if r.code != 0 || !strings.Contains(r.stdout, `\x1b]0;pwned\a`) || !strings.Contains(r.stdout, `\u202e`) || !strings.Contains(r.stdout, `sk\x1b[2Jills`) {
		t.Fatalf("exit %d; the controls are not shown escaped:\n%s%s", r.code, r.stdout, r.stderr)
	}
	noControls(t, "stdout", r.stdout)
	noControls(t, "stderr", r.stderr)
}
