package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/bench/gen"
)

// TestScanNoFiles: with NoFiles (loadout prompt) a skill keeps no file
// manifest, and everything else is as without it: the same skills, names,
// descriptions, locations, empty folders, stamps and diagnostics, kept in
// chunks (TypedMeta) or not.
func TestScanNoFiles(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Tree(dir, 40, 1); err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{"files/SKILL.md": md("files", "Has files."), "files/scripts/x.sh": "echo", "files/references/r.md": "r"})
	if err := os.Mkdir(filepath.Join(dir, "files", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, typed := range []bool{false, true} {
		with := ScanFolder(context.Background(), dir, Options{TypedMeta: typed})
		without := ScanFolder(context.Background(), dir, Options{TypedMeta: typed, NoFiles: true})
		if diff := cmp.Diff(with.Diagnostics, without.Diagnostics); diff != "" {
			t.Errorf("typed %v: diagnostics differ:\n%s", typed, diff)
		}
		if len(with.Skills) != len(without.Skills) || len(with.Skills) < 41 {
			t.Fatalf("typed %v: %d skills with files, %d without", typed, len(with.Skills), len(without.Skills))
		}
		hadFiles := 0
		for i, w := range with.Skills {
			n := without.Skills[i]
			if len(w.Files) > 0 {
				hadFiles++
			}
			if n.Files != nil {
				t.Errorf("typed %v: %s keeps %d files with NoFiles", typed, n.Name, len(n.Files))
			}
			if w.Name != n.Name || w.Description != n.Description || w.Location != n.Location || w.Dir != n.Dir || w.Stamp != n.Stamp ||
				!cmp.Equal(w.Dirs, n.Dirs) || w.Meta.Category != n.Meta.Category || w.Hidden() != n.Hidden() {
				t.Errorf("typed %v: %s differs beyond its files:\n%+v\n%+v", typed, w.Name, w, n)
			}
		}
		if hadFiles == 0 {
			t.Fatalf("typed %v: no skill had files: the test checks nothing", typed)
		}
	}
}

// TestCacheNoFilesIsNotReused: a cached skill scanned without its
// manifest is never served to a scan that wants it, and the other way.
func TestCacheNoFilesIsNotReused(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a/SKILL.md": md("a", "A."), "a/scripts/x.sh": "echo"})
	c := NewCache()
	bare := scanT(t, dir, Options{Cache: c, NoFiles: true})
	if bare.Skills[0].Files != nil {
		t.Fatalf("NoFiles scan kept files %v", bare.Skills[0].Files)
	}
	full := scanT(t, dir, Options{Cache: c})
	if full.Skills[0] == bare.Skills[0] || len(full.Skills[0].Files) != 1 {
		t.Fatalf("a scan with files was given the cached skill without them: files %v", full.Skills[0].Files)
	}
	again := scanT(t, dir, Options{Cache: c, NoFiles: true})
	if again.Skills[0].Files != nil {
		t.Fatalf("a NoFiles scan was given the cached skill with files %v", again.Skills[0].Files)
	}
}
