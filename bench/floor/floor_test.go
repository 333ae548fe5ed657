package floor

import (
	"os"
	"path/filepath"
	"testing"
)

// WalkParallel reads what Walk reads, whatever the number of workers, and
// skips what Walk skips.
func TestWalkParallelMatchesWalk(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a/SKILL.md":               "---\nname: a\n---\n",
		"a/references/r.md":        "r",
		"g/b/SKILL.md":             "---\nname: b\ndescription: longer\n---\nbody\n",
		"g/b/scripts/run.sh":       "echo",
		"g/c/SKILL.md":             "c",
		".hidden/d/SKILL.md":       "hidden",
		"node_modules/e/SKILL.md":  "vendored",
		"g/c/deep/er/f/SKILL.md":   "nested",
		"g/c/deep/er/f/assets/x.j": "{}",
	}
	for p, body := range files {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantFiles, wantBytes, err := Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	if wantFiles != 4 {
		t.Fatalf("Walk read %d SKILL.md, want 4", wantFiles)
	}
	for _, w := range []int{0, 1, 3, 64} {
		n, size, err := WalkParallel(dir, w)
		if err != nil || n != wantFiles || size != wantBytes {
			t.Errorf("%d workers: %d files, %d bytes, %v; want %d, %d", w, n, size, err, wantFiles, wantBytes)
		}
	}
	if _, _, err := WalkParallel(filepath.Join(dir, "missing"), 4); err == nil {
		t.Error("a missing root gave no error")
	}
}
