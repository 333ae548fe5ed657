package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func next(t *testing.T, w *Watcher) []string {
	t.Helper()
	select {
	case b := <-w.Events():
		return b
	case <-time.After(3 * time.Second):
		t.Fatal("no change reported within 3 s")
	}
	return nil
}

func contains(batch []string, suffix string) bool {
	for _, p := range batch {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

func TestWatch(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "refs"), 0o755)
	os.MkdirAll(filepath.Join(root, ".git", "x"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "SKILL.md"), []byte("x"), 0o644)
	w, err := New([]string{root}, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Watched() != 3 { // root, a, a/refs; not .git
		t.Errorf("watching %d folders", w.Watched())
	}

	os.WriteFile(filepath.Join(root, "a", "SKILL.md"), []byte("y"), 0o644)
	os.WriteFile(filepath.Join(root, "a", "refs", "r.md"), []byte("r"), 0o644)
	b := next(t, w)
	if !contains(b, filepath.Join("a", "SKILL.md")) || !contains(b, filepath.Join("refs", "r.md")) {
		t.Errorf("batch: %v", b)
	}

	// A folder created later is watched too.
	os.MkdirAll(filepath.Join(root, "new", "deep"), 0o755)
	next(t, w)
	time.Sleep(100 * time.Millisecond)
	os.WriteFile(filepath.Join(root, "new", "deep", "SKILL.md"), []byte("z"), 0o644)
	deadline := time.After(3 * time.Second)
	for {
		select {
		case b := <-w.Events():
			if contains(b, filepath.Join("deep", "SKILL.md")) {
				return
			}
		case <-deadline:
			t.Fatal("a change in a folder created after start was not reported")
		}
	}
}
