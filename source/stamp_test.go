package source_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

func stampOf(t *testing.T, root string) [16]byte {
	t.Helper()
	res := source.ScanFolder(context.Background(), root, source.Options{})
	if len(res.Skills) != 1 {
		t.Fatalf("%d skills, diagnostics %v", len(res.Skills), res.Diagnostics)
	}
	return res.Skills[0].Stamp
}

// A skill's Stamp is zero while a file is fresh, and moves with any
// change to what its files hold or where they are; a rescan of an
// unchanged folder keeps it.
func TestStamp(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "deploy")
	testutil.Mkdir(t, filepath.Join(dir, "scripts"))
	testutil.Mkdir(t, filepath.Join(dir, "empty"))
	testutil.Write(t, filepath.Join(dir, "SKILL.md"), "---\nname: deploy\ndescription: Deploys. Use when asked to deploy.\n---\nRun scripts/run.sh.\n")
	testutil.Write(t, filepath.Join(dir, "scripts/run.sh"), "echo hi\n")
	testutil.Write(t, filepath.Join(dir, "notes.md"), "notes\n")
	if s := stampOf(t, root); s != [16]byte{} {
		t.Fatal("a skill written a moment ago has a stamp")
	}
	settle := func() { time.Sleep(skill.StampSettle + 100*time.Millisecond) }
	settle()
	s0 := stampOf(t, root)
	if s0 == [16]byte{} {
		t.Fatalf("no stamp %s after the last change", skill.StampSettle)
	}
	if stampOf(t, root) != s0 {
		t.Fatal("a rescan of an unchanged folder moved the stamp")
	}
	seen := map[[16]byte]string{s0: "start"}
	changes := []struct {
		name string
		do   func()
	}{
		{"chmod a file", func() { testutil.Must(t, os.Chmod(filepath.Join(dir, "scripts/run.sh"), 0o755)) }},
		{"rewrite a file with its time put back", func() {
			p := filepath.Join(dir, "notes.md")
			fi, err := os.Stat(p)
			testutil.Must(t, err)
			testutil.Write(t, p, "NOTES\n")
			testutil.Must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}},
		{"rewrite SKILL.md with its time put back", func() {
			p := filepath.Join(dir, "SKILL.md")
			fi, err := os.Stat(p)
			testutil.Must(t, err)
			b, err := os.ReadFile(p)
			testutil.Must(t, err)
			b[len(b)-2] = '!'
			testutil.Must(t, os.WriteFile(p, b, 0o644))
			testutil.Must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}},
		{"rename a file", func() {
			testutil.Must(t, os.Rename(filepath.Join(dir, "notes.md"), filepath.Join(dir, "notes2.md")))
		}},
		{"fill the empty folder", func() { testutil.Write(t, filepath.Join(dir, "empty/x.txt"), "x") }},
	}
	for _, c := range changes {
		c.do()
		if s := stampOf(t, root); s != [16]byte{} {
			t.Fatalf("%s: stamped at once", c.name)
		}
		settle()
		s := stampOf(t, root)
		if s == [16]byte{} {
			t.Fatalf("%s: no stamp after settling", c.name)
		}
		if prev, ok := seen[s]; ok {
			t.Fatalf("%s: the stamp is the one after %q", c.name, prev)
		}
		seen[s] = c.name
	}
}
