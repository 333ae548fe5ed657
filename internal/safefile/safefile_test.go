//go:build unix

package safefile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

func code(err error) string {
	if se, ok := skill.AsServeError(err); ok {
		return se.Code
	}
	return ""
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	testutil.Write(t, filepath.Join(dir, "a.txt"), "hello")
	id := Stat(dir)
	if id == (ID{}) {
		t.Fatal("no identity for a folder")
	}
	f, fi, err := Open(dir, id, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := Content(f, fi)
	defer c.Close()
	data, _ := io.ReadAll(io.NewSectionReader(c, 0, c.Size()))
	if string(data) != "hello" || c.Size() != 5 {
		t.Fatalf("read %q (size %d)", data, c.Size())
	}
	// A file that grows after the open is read only up to the size seen.
	testutil.Write(t, filepath.Join(dir, "a.txt"), "hello, world")
	buf := make([]byte, 64)
	if n, err := c.ReadAt(buf, 0); n != 5 || err != io.EOF {
		t.Errorf("ReadAt after growth: %d %v", n, err)
	}
	if _, _, err := Open(dir, id, "missing"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestOpenRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	var err error
	testutil.Within(t, "Open of a FIFO", func() { _, _, err = Open(dir, Stat(dir), "pipe") })
	if code(err) != skill.CodeNotRegular {
		t.Fatalf("FIFO: %v", err)
	}
	testutil.Within(t, "Open of a folder", func() { _, _, err = Open(dir, Stat(dir), ".") })
	if code(err) != skill.CodeNotRegular {
		t.Fatalf("folder: %v", err)
	}
}

func TestOpenRefusesASwappedFolder(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "skill")
	testutil.Must(t, os.Mkdir(dir, 0o755))
	testutil.Write(t, filepath.Join(dir, "notes.md"), "notes")
	id := Stat(dir)
	elsewhere := filepath.Join(base, "elsewhere")
	testutil.Must(t, os.Mkdir(elsewhere, 0o755))
	testutil.Write(t, filepath.Join(elsewhere, "notes.md"), "SECRET")
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Skip(err)
	}
	if _, _, err := Open(dir, id, "notes.md"); code(err) != skill.CodeFolderChanged {
		t.Fatalf("folder swapped for a link: %v", err)
	}
	// The zero identity skips the check (os.Root still confines the read).
	if f, _, err := Open(dir, ID{}, "notes.md"); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
}

func TestOpenRefusesAnEscapingLink(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	testutil.Write(t, filepath.Join(out, "secret"), "SECRET")
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(dir, "leak")); err != nil {
		t.Skip(err)
	}
	if _, _, err := Open(dir, Stat(dir), "leak"); code(err) != skill.CodeSymlinkEscapes {
		t.Fatalf("escaping link: %v", err)
	}
}
