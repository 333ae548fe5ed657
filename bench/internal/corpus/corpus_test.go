package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRead(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	write(t, filepath.Join(first, "a", "pdf-fill", "SKILL.md"),
		"---\nname: pdf-fill\ndescription: Fill PDF forms.\nmetadata:\n  category: documents\n---\nBody.\n")
	write(t, filepath.Join(first, "b", "csv-clean", "SKILL.md"),
		"---\nname: csv-clean\ndescription: >-\n  Clean CSV\n  files.\ncategory: data\n---\n")
	// The same name later in the walk: the first one wins.
	write(t, filepath.Join(first, "c", "pdf-fill", "SKILL.md"),
		"---\nname: pdf-fill\ndescription: A later copy.\n---\n")
	// No description: skipped.
	write(t, filepath.Join(first, "d", "empty", "SKILL.md"), "---\nname: empty\n---\nBody.\n")
	// Not a skill file, and folders never entered.
	write(t, filepath.Join(first, "d", "notes", "README.md"), "---\nname: notes\ndescription: Not a skill.\n---\n")
	write(t, filepath.Join(first, "node_modules", "pkg", "SKILL.md"), "---\nname: from-modules\ndescription: Vendored.\n---\n")
	write(t, filepath.Join(first, ".git", "x", "SKILL.md"), "---\nname: from-git\ndescription: In .git.\n---\n")
	// The second folder comes after the first, even though "a" < "b".
	write(t, filepath.Join(second, "a", "csv-clean", "SKILL.md"), "---\nname: csv-clean\ndescription: Second copy.\n---\n")
	write(t, filepath.Join(second, "z", "chart-draw", "SKILL.md"), "---\nname: chart-draw\ndescription: Draw charts.\n---\n")

	pool, st, err := Read([]string{first, second})
	if err != nil {
		t.Fatal(err)
	}
	want := []Skill{
		{"pdf-fill", "Fill PDF forms.", "documents", filepath.Join(first, "a", "pdf-fill", "SKILL.md")},
		{"csv-clean", "Clean CSV files.", "data", filepath.Join(first, "b", "csv-clean", "SKILL.md")},
		{"chart-draw", "Draw charts.", "", filepath.Join(second, "z", "chart-draw", "SKILL.md")},
	}
	if !reflect.DeepEqual(pool, want) {
		t.Errorf("pool:\n got %+v\nwant %+v", pool, want)
	}
	if wantSt := (Stats{Files: 6, Skipped: 1, Duplicate: 2}); st != wantSt {
		t.Errorf("stats: got %+v, want %+v", st, wantSt)
	}

	if _, _, err := Read([]string{filepath.Join(first, "missing")}); err == nil {
		t.Error("a missing folder: no error")
	}
	if _, _, err := Read([]string{filepath.Join(first, "a", "pdf-fill", "SKILL.md")}); err == nil {
		t.Error("a file instead of a folder: no error")
	}
}
