package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/skill"
)

// walkSkill lists the skill folder dir as loadSkill does, with every
// entry of its top folder given the type unknown when unknown is set (as
// a file system without d_type lists them: the walk then lstat's each).
func walkSkill(t *testing.T, dir string, unknown bool) (files []string, dirs []string, diags []string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{}
	opt.defaults()
	d, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if unknown {
		for i := range d.entries {
			d.entries[i].typ = typUnknown
		}
	}
	m := manifest{scan: &scan{opt: opt, origin: &skill.Origin{}}, skillReal: real, name: "s"}
	m.walk(d, real, "", 0, nil, &chain{real: real}, "SKILL.md")
	if m.root != nil {
		m.root.Close()
	}
	for _, f := range m.files {
		files = append(files, f.Path)
	}
	for _, dg := range m.diags {
		diags = append(diags, dg.Code+" "+filepath.Base(dg.Path))
	}
	return files, m.dirs, diags
}

// A skill's subfolders are opened relative to the folder listing them,
// links followed as before: a linked folder that stays inside the skill
// is listed through the link, one that leaves it is refused, and a loop
// is not followed. Listed with every entry's type unknown, the walk
// lstat's each entry and finds the same manifest and the same refusals.
func TestWalkSubfoldersAndUnknownTypes(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	tree(t, outside, map[string]string{"secret/key.txt": "do not serve"})
	tree(t, root, map[string]string{
		"s/SKILL.md":          md("s", "S."),
		"s/refs/guide.md":     "guide",
		"s/refs/deep/more.md": "more",
		"s/docs":              "-> refs",
		"s/leak":              "-> " + filepath.Join(outside, "secret"),
		"s/leak.txt":          "-> " + filepath.Join(outside, "secret", "key.txt"),
		"s/refs/deep/up":      "-> ../..",
		"s/scripts/run.sh":    "#!/bin/sh\n",
		"s/empty/":            "",
		"s/notes.md":          "notes",
	})
	dir := filepath.Join(root, "s")
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"docs/deep/more.md", "docs/guide.md", "notes.md", "refs/deep/more.md", "refs/guide.md", "scripts/run.sh"}
	wantDiags := []string{skill.CodeSymlinkLoop + " up", skill.CodeSymlinkEscapes + " leak", skill.CodeSymlinkEscapes + " leak.txt", skill.CodeSymlinkLoop + " up"}
	for _, unknown := range []bool{false, true} {
		files, dirs, diags := walkSkill(t, dir, unknown)
		if diff := cmp.Diff(wantFiles, files); diff != "" {
			t.Errorf("unknown types %v: files (-want +got):\n%s", unknown, diff)
		}
		if diff := cmp.Diff([]string{"empty"}, dirs); diff != "" {
			t.Errorf("unknown types %v: empty folders (-want +got):\n%s", unknown, diff)
		}
		if diff := cmp.Diff(wantDiags, diags); diff != "" {
			t.Errorf("unknown types %v: diagnostics (-want +got):\n%s", unknown, diff)
		}
	}
}
