package webui

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// TestFileTree: a manifest becomes folders (first) and files, each sorted
// by name, nested by path.
func TestFileTree(t *testing.T) {
	files := []skill.File{{Path: "z.md"}, {Path: "scripts/run.sh", Executable: true}, {Path: "a/b/c.txt"}, {Path: "a/a.txt"}, {Path: "b.png", Binary: true}}
	var b strings.Builder
	var walk func(ns []*fileNode, depth int)
	walk = func(ns []*fileNode, depth int) {
		for _, n := range ns {
			b.WriteString(strings.Repeat("  ", depth) + n.Name)
			if n.Dir {
				b.WriteString("/\n")
				walk(n.Children, depth+1)
				continue
			}
			if !n.Editable {
				b.WriteString(" ro")
			}
			b.WriteString(" " + n.Path + "\n")
		}
	}
	walk(fileTree(files, false), 0)
	want := "a/\n  b/\n    c.txt ro a/b/c.txt\n  a.txt ro a/a.txt\nscripts/\n  run.sh ro scripts/run.sh\nb.png ro b.png\nz.md ro z.md\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", b.String(), want)
	}
	if n := fileTree(nil, true); len(n) != 0 {
		t.Errorf("empty manifest: %v", n)
	}
}
