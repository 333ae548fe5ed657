package source

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

func newBodyFile(t *testing.T) *skill.BodyFile {
	t.Helper()
	b, err := skill.NewBodyFile(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// With Options.Bodies, bodies are kept in the body file, not in memory,
// and a broken edit still serves the last good body: read back from the
// file, not from the edited SKILL.md.
func TestBodiesInFileKeepLastGood(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"g/s/SKILL.md": md("s", "First.")})
	bf := newBodyFile(t)
	opt := Options{Cache: NewCache(), KeepBodies: true, Bodies: bf}
	r := scanT(t, dir, opt)
	if len(r.Skills) != 1 {
		t.Fatalf("scan: %v", names(r))
	}
	sk := r.Skills[0]
	if !sk.HasBody() || bf.Size() == 0 {
		t.Fatalf("body not kept in the file: has %v, file %d bytes", sk.HasBody(), bf.Size())
	}
	e, _ := opt.Cache.lastGood(filepath.Join(dir, "g", "s", "SKILL.md"))
	if e.doc == nil || e.doc.Body != "" || !e.body.Kept() {
		t.Fatalf("the cache holds the body in memory: %+v", e)
	}
	// A good edit not yet rescanned: the skill still serves the version
	// it was scanned at, its body consistent with its metadata.
	skPath := filepath.Join(dir, "g", "s", "SKILL.md")
	testutil.Write(t, skPath, "---\nname: s\ndescription: Second.\n---\nsecond body\n")
	if body, err := sk.Body(); err != nil || body != "# s\nbody\n" {
		t.Errorf("body before the rescan: %q %v", body, err)
	}
	sk2, diags := ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt)
	if sk2 == nil || len(diags) != 0 {
		t.Fatalf("reload: %v", diags)
	}
	if body, _ := sk2.Body(); body != "second body\n" {
		t.Errorf("body after the edit: %q", body)
	}
	// A broken edit: the last good version, body included, from the file.
	testutil.Write(t, skPath, "---\nname: s\ndescription: [broken\n---\nbroken body\n")
	sk3, diags := ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt)
	if sk3 == nil || sk3.Description != "Second." || len(diags) != 1 || diags[0].Code != skill.CodeKeptLastGood {
		t.Fatalf("broken edit: %+v %v", sk3, diags)
	}
	if body, err := sk3.Body(); err != nil || body != "second body\n" {
		t.Errorf("body of the last good version: %q %v", body, err)
	}
	// An unchanged file rescanned is not written to the file again.
	size := bf.Size()
	r = scanT(t, dir, opt)
	if bf.Size() != size || len(r.Skills) != 1 {
		t.Errorf("a rescan wrote unchanged bodies again: %d -> %d bytes", size, bf.Size())
	}
}

// The heap a scan leaves behind does not grow with the bodies when they
// are kept in the body file: 200 skills of 16 KB bodies keep under 1 MB
// (in memory they would keep over 3 MB).
func TestBodiesInFileRetainedHeap(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	body := strings.Repeat("Some instructions for the model. ", 500) // 16.5 KB
	for i := range 200 {
		n := "s" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		files[n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: A skill.\n---\n" + body
	}
	tree(t, dir, files)
	retained := func(opt Options) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := scanT(t, dir, opt)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(r.Skills) != 200 {
			t.Fatalf("scan found %d skills", len(r.Skills))
		}
		if b, _ := r.Skills[0].Body(); b != body {
			t.Fatalf("body: %d bytes", len(b))
		}
		runtime.KeepAlive(r)
		runtime.KeepAlive(opt.Cache)
		return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
	}
	inMemory := retained(Options{Cache: NewCache(), KeepBodies: true})
	inFile := retained(Options{Cache: NewCache(), KeepBodies: true, Bodies: newBodyFile(t)})
	t.Logf("retained: bodies in memory %d KB, in the body file %d KB", inMemory>>10, inFile>>10)
	if inFile > 1<<20 {
		t.Errorf("a scan with bodies in the file retains %d KB, over 1 MB", inFile>>10)
	}
}
