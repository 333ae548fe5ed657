package watch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// The signature of a polled folder changes with every change discovery
// would see (an entry added, removed, renamed, resized, touched or
// chmod'ed, the folder itself replaced by a file) and with nothing else
// (dot entries, node_modules, a read); signatureOf, the portable one,
// agrees on each.
func TestSignatureSeesChanges(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "a")
	write("b.md", "bb")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sigs := func() (uint64, uint64) {
		t.Helper()
		s, err := signature(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := signatureOf(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s, p
	}
	old := time.Now().Add(-time.Hour)
	steps := []struct {
		what    string
		do      func()
		changes bool
	}{
		{"nothing", func() {}, false},
		{"a read", func() { os.ReadFile(filepath.Join(dir, "a.md")) }, false},
		{"a dot file", func() {
			write(".hidden", "x")
			testutil.Must(t, os.Chtimes(dir, old, old)) // the folder's own time put back
		}, false},
		{"an entry added", func() { write("c.md", "c") }, true},
		{"an entry removed", func() { testutil.Must(t, os.Remove(filepath.Join(dir, "c.md"))) }, true},
		{"an entry renamed", func() { testutil.Must(t, os.Rename(filepath.Join(dir, "b.md"), filepath.Join(dir, "d.md"))) }, true},
		{"a size", func() {
			write("a.md", "aaaa")
			testutil.Must(t, os.Chtimes(dir, old, old))
		}, true},
		{"a time", func() {
			testutil.Must(t, os.Chtimes(filepath.Join(dir, "a.md"), old, old))
			testutil.Must(t, os.Chtimes(dir, old, old))
		}, true},
		{"a mode", func() {
			testutil.Must(t, os.Chmod(filepath.Join(dir, "a.md"), 0o755))
			testutil.Must(t, os.Chtimes(dir, old, old))
		}, true},
		{"a subfolder's time", func() { testutil.Must(t, os.Chtimes(filepath.Join(dir, "sub"), old, old)) }, true},
	}
	testutil.Must(t, os.Chtimes(dir, old, old))
	s0, p0 := sigs()
	for _, st := range steps {
		st.do()
		s1, p1 := sigs()
		if got := s1 != s0; got != st.changes {
			t.Errorf("%s: signature changed %v, want %v", st.what, got, st.changes)
		}
		if got := p1 != p0; got != st.changes {
			t.Errorf("%s: portable signature changed %v, want %v", st.what, got, st.changes)
		}
		s0, p0 = s1, p1
	}
	// A folder replaced by a file, or gone, is not a folder to poll.
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	write("sub", "now a file")
	for _, p := range []string{filepath.Join(dir, "sub"), filepath.Join(dir, "missing")} {
		if _, err := signature(p); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
}

// On Linux a poll allocates once per folder (the path handed to open),
// whatever the number of entries; the portable signature allocates four
// times or more an entry.
func TestSignatureAllocatesOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the portable signature allocates")
	}
	dir := t.TempDir()
	for _, n := range []string{"SKILL.md", "a.md", "b.md", "c.json", ".git"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := signature(dir); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { signature(dir) }); n > 1 {
		t.Errorf("signature allocates %.1f times a folder, want at most 1", n)
	}
}

// subfolders finds what the portable subfoldersOf finds: folders and
// links to folders, in name order, without dot folders and node_modules.
func TestSubfoldersMatchesPortable(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"b", "a", "references", ".git", "node_modules", "z/deeper"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"to-dir": "a", "to-file": "SKILL.md", "broken": "missing"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{dir, dir + "/", filepath.Join(dir, "z")} {
		got, want := listDirs(d), listDirsOf(d)
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", d, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: [%d] %v, want %v", d, i, got[i], want[i])
			}
		}
	}
	if got := listDirs(dir); len(got) != 5 || !got[3].link || got[3].path != filepath.Join(dir, "to-dir") {
		t.Errorf("subfolders: %v", got)
	}
	if got := listDirs(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("a missing folder: %v", got)
	}
}

func listDirs(dir string) []subfolder   { s, _, _ := listDir(dir, 0); return s }
func listDirsOf(dir string) []subfolder { s, _, _ := listDirOf(dir, 0); return s }
