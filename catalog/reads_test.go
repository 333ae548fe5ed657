//go:build unix

package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// Four 100-byte reads of a 1 GiB file read 400 bytes, not the file.
func TestRangedReadReadsOnlyTheRange(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"big/SKILL.md": md("big", "Big.")})
	testutil.Sparse(t, filepath.Join(dir, "big", "data.bin"), testutil.GiB)
	write(t, dir, map[string]string{"big/tail.txt": strings.Repeat("x", 2000)})
	c, err := New(t.Context(), []AgentSpec{{AgentID: "x", Skills: []SourceSpec{{Root: dir}}}}, Options{Scan: source.Options{MaxFileSize: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	l := agent(t, c, "x")
	n := testutil.Allocated(func() {
		for _, off := range []int64{0, 1 << 20, 512 << 20, testutil.GiB - 100} {
			r := l.ReadFile("big", "data.bin", ReadOptions{Offset: off, Length: 100})
			if r.Status != StatusOK || len(r.Data) != 100 || r.Size != testutil.GiB || r.Offset != off {
				t.Fatalf("offset %d: %s %s (%d bytes of %d)", off, r.Status, r.Message, len(r.Data), r.Size)
			}
		}
	})
	if n > 16<<20 {
		t.Errorf("four 100-byte reads allocated %d bytes", n)
	}
	// Without a range: refused before a byte is read, naming the file,
	// its size and the cap.
	n = testutil.Allocated(func() {
		r := l.ReadFile("big", "data.bin", ReadOptions{Max: 2 * testutil.GiB})
		if r.Status != StatusTooLarge || r.Code != skill.CodeTooLarge || r.Size != testutil.GiB ||
			!strings.Contains(r.Message, "data.bin") || !strings.Contains(r.Message, "1073741824") || !strings.Contains(r.Message, "1000") {
			t.Errorf("whole read of 1 GiB: %+v", r)
		}
	})
	if n > 1<<20 {
		t.Errorf("the refused read allocated %d bytes", n)
	}
	// The cap is limits.maxFileSize: a 2,000-byte file is over 1,000 whole,
	// and readable in ranges.
	if r := l.ReadFile("big", "tail.txt", ReadOptions{}); r.Status != StatusTooLarge {
		t.Errorf("whole read over maxFileSize: %+v", r)
	}
	if r := l.ReadFile("big", "tail.txt", ReadOptions{Offset: 1000, Length: 1000}); r.Status != StatusOK || len(r.Data) != 1000 || r.More {
		t.Errorf("ranged read over maxFileSize: %s %s", r.Status, r.Message)
	}
	// OpenFile, the streaming read, is refused the same way.
	if r, f := l.OpenFile("big", "data.bin", 0); r.Status != StatusTooLarge || f != nil {
		t.Errorf("OpenFile of 1 GiB: %+v", r)
	}
	sk := l.byName["big"].Skill
	if _, err := sk.ReadFile("data.bin"); err == nil {
		t.Error("Skill.ReadFile of 1 GiB succeeded")
	}
	if _, err := sk.BundleWithin(skill.Limits{}); err == nil {
		t.Error("BundleWithin of a 1 GiB skill succeeded")
	}
}

// A FIFO swapped in for a listed file after the scan is refused at once,
// through every read: it is never opened for a blocking read.
func TestFIFOSwappedInIsRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"pipe/SKILL.md": md("pipe", "Pipe."), "pipe/notes.md": "notes\n"})
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}})
	l := agent(t, c, "x")
	p := filepath.Join(dir, "pipe", "notes.md")
	testutil.Must(t, os.Remove(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	var r FileResult
	testutil.Within(t, "ReadFile of a FIFO", func() { r = l.ReadFile("pipe", "notes.md", ReadOptions{}) })
	if r.Status != StatusRefused || r.Code != skill.CodeNotRegular || !strings.Contains(r.Message, "notes.md") {
		t.Errorf("ranged read: %+v", r)
	}
	testutil.Within(t, "OpenFile of a FIFO", func() { r, _ = l.OpenFile("pipe", "notes.md", 0) })
	if r.Status != StatusRefused || r.Code != skill.CodeNotRegular {
		t.Errorf("OpenFile: %+v", r)
	}
	sk := l.byName["pipe"].Skill
	testutil.Within(t, "Bundle with a FIFO", func() {
		if _, err := sk.Bundle(); err == nil {
			t.Error("Bundle read a FIFO")
		}
	})
	// And a rescan does not hang on it either (it is not listed).
	testutil.Within(t, "Reload with a FIFO", func() { c.Reload(t.Context()) })
	if _, ok := agent(t, c, "x").byName["pipe"].Skill.File("notes.md"); ok {
		t.Error("a FIFO is listed as a file")
	}
}

// A skill folder swapped for a link to another folder after the scan is
// not followed: nothing is served from it until it is scanned again.
func TestSwappedSkillFolderIsRefused(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"deploy/SKILL.md": md("deploy", "Deploy."), "deploy/notes.md": "public"})
	write(t, other, map[string]string{"SKILL.md": md("deploy", "Deploy."), "notes.md": "SECRET"})
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}})
	l := agent(t, c, "x")
	if r := l.ReadFile("deploy", "notes.md", ReadOptions{}); r.Content != "public" {
		t.Fatalf("before the swap: %+v", r)
	}
	folder := filepath.Join(dir, "deploy")
	if err := os.Rename(folder, folder+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, folder); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{"notes.md", "SKILL.md"} {
		r := l.ReadFile("deploy", p, ReadOptions{})
		if r.Status != StatusChanged || r.Code != skill.CodeFolderChanged || strings.Contains(r.Content, "SECRET") {
			t.Errorf("%s after the swap: %+v", p, r)
		}
	}
	sk := l.byName["deploy"].Skill
	if b, err := sk.Bundle(); err == nil {
		t.Errorf("Bundle of a swapped folder: %q", b.Files[0].Data)
	}
	// A rescan serves the folder the path now leads to, as a new skill.
	c.Reload(t.Context())
	if r := agent(t, c, "x").ReadFile("deploy", "notes.md", ReadOptions{}); r.Status != StatusOK {
		t.Errorf("after a rescan: %+v", r)
	}
}

// A file whose size is not the manifest's is not what the scan saw.
func TestChangedFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"s/SKILL.md": md("s", "S."), "s/a.md": "short"})
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}})
	l := agent(t, c, "x")
	write(t, dir, map[string]string{"s/a.md": "much longer now"})
	r := l.ReadFile("s", "a.md", ReadOptions{})
	if r.Status != StatusChanged || r.Code != skill.CodeFileChanged || !strings.Contains(r.Message, "a.md") {
		t.Errorf("changed file: %+v", r)
	}
	c.Reload(t.Context())
	if r := agent(t, c, "x").ReadFile("s", "a.md", ReadOptions{}); r.Content != "much longer now" {
		t.Errorf("after a rescan: %+v", r)
	}
}
