package source

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// TestScanAliasBomb: one SKILL.md dropped into a skills folder cannot take
// discovery down: it is skipped with the stable code naming the file, the
// other skills load, and the scan allocates little.
func TestScanAliasBomb(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"ok/SKILL.md":   md("ok", "Fine."),
		"bomb/SKILL.md": testutil.AliasBomb("bomb", 9, 10),
		"self/SKILL.md": "---\nname: self\ndescription: d\nz: &a [*a]\n---\n",
	})
	for _, keep := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := ScanFolder(context.Background(), root, Options{KeepBodies: keep})
		runtime.ReadMemStats(&after)
		if got := names(r); len(got) != 1 || got[0] != "ok" {
			t.Errorf("skills = %v; diags %v", got, r.Diagnostics)
		}
		found := map[string]bool{}
		for _, d := range r.Diagnostics {
			if d.Code == skill.CodeYAMLAliasLimit && d.Severity == skill.Error {
				found[filepath.Base(filepath.Dir(d.Path))] = true
			}
		}
		if !found["bomb"] || !found["self"] {
			t.Errorf("diagnostics %v, want %s for bomb/SKILL.md and self/SKILL.md", r.Diagnostics, skill.CodeYAMLAliasLimit)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("scan allocated %d bytes", n)
		}
	}
}

// TestScanRefusesBadFileNames: a file whose name holds a control or
// invisible character is not listed (it could never be read through
// CleanPath), and the warning names it quoted.
func TestScanRefusesBadFileNames(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"s/SKILL.md":                  md("s", "Fine."),
		"s/ok.md":                     "ok",
		"s/\x1b[31mred.md":            "esc",
		"s/evil\u202egnp.md":          "bidi",
		"s/zero\u200bwidth/inside.md": "zw",
		"s/refs/bell\a.md":            "bel",
	})
	r := ScanFolder(context.Background(), root, Options{})
	if len(r.Skills) != 1 {
		t.Fatalf("skills %v %v", names(r), r.Diagnostics)
	}
	var paths []string
	for _, f := range r.Skills[0].Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "ok.md" {
		t.Errorf("files = %q", paths)
	}
	n := 0
	for _, d := range r.Diagnostics {
		if d.Code != skill.CodePathChars {
			continue
		}
		n++
		if strings.ContainsAny(d.String(), "\x1b\a\u202e\u200b") {
			t.Errorf("diagnostic prints the raw character: %q", d.String())
		}
	}
	if n != 4 {
		t.Errorf("want 4 %s warnings, got %v", skill.CodePathChars, r.Diagnostics)
	}
}
