package source

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/skill"
)

// retainedPerSkill scans a generated tree of n skills and returns the
// bytes the live heap grew by per skill, with the result held.
func retainedPerSkill(t *testing.T, dir string, n int, opt Options) float64 {
	live, _ := scanHeap(t, dir, n, opt)
	return live
}

// scanHeap scans a generated tree of n skills and returns, per skill, the
// bytes the live heap and the heap spans in use grew by, with the result
// held.
func scanHeap(t *testing.T, dir string, n int, opt Options) (live, inuse float64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := ScanFolder(context.Background(), dir, opt)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(r.Skills) != n || r.Errors() {
		t.Fatalf("%d skills, errors %v", len(r.Skills), r.Errors())
	}
	runtime.KeepAlive(r)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n),
		float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(n)
}

// memTree is a generated tree of 2,000 skills for the memory tests
// (skipped with -short), and its size.
func memTree(t *testing.T) (string, int) {
	if testing.Short() {
		t.Skip("generates 2,000 skills")
	}
	dir := t.TempDir()
	const n = 2000
	if err := gen.Tree(dir, n, 1); err != nil {
		t.Fatal(err)
	}
	return dir, n
}

// TestScanRetainedPerSkill bounds what a discovered skill keeps alive, on
// skills as bench/gen makes them (a SKILL.md with a few frontmatter
// fields and three supporting files). Measured here (2,000 skills, so
// the result's own maps are shared by fewer skills than at 50,000): before
// the frontmatter was compacted a skill kept about 2,330 bytes; then about
// 1,860, and 1,420 with TypedMeta; with a shared Origin and the name held
// in the location, about 1,710 and 1,240. The bounds leave about 12% for
// noise and small changes, not room to keep the frontmatter text again,
// nor an Origin for each skill.
func TestScanRetainedPerSkill(t *testing.T) {
	dir, n := memTree(t)
	ScanFolder(context.Background(), dir, Options{}) // warm the pools and the page cache
	for _, c := range []struct {
		opt   Options
		bound float64
	}{{Options{}, 1920}, {Options{TypedMeta: true}, 1400}} {
		got := retainedPerSkill(t, dir, n, c.opt)
		t.Logf("TypedMeta=%v: %.0f bytes per skill", c.opt.TypedMeta, got)
		if got > c.bound {
			t.Errorf("TypedMeta=%v: a discovered skill keeps %.0f bytes, want at most %.0f", c.opt.TypedMeta, got, c.bound)
		}
	}
}

// TestScanReadsOnlyTheHeader: without bodies, discovery reads a SKILL.md
// only up to the end of its frontmatter, into a reused buffer, so a long
// body costs neither reading nor memory; what it parses is what parsing
// the whole file gives. With bodies, the whole file is read.
func TestScanReadsOnlyTheHeader(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("A long body line, read only when the skill is loaded.\n", 150_000) // ~8 MB
	// A frontmatter longer than the first read, with CRLF line ends.
	longFront := "---\r\nname: long\r\ndescription: " + strings.Repeat("word ", 1500) + "\r\nextra: x\r\n---\r\n"
	tree(t, dir, map[string]string{
		"big/SKILL.md":  md("big", "A skill with a long body.") + body,
		"long/SKILL.md": longFront + body[:100_000],
	})
	ScanFolder(context.Background(), dir, Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := ScanFolder(context.Background(), dir, Options{})
	runtime.ReadMemStats(&after)
	if got := names(r); len(got) != 2 {
		t.Fatalf("skills %v, diagnostics %v", got, r.Diagnostics)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("the scan allocated %d bytes for an 8 MB body it does not keep, want under 1 MiB", alloc)
	}
	for _, sk := range r.Skills {
		data, err := os.ReadFile(filepath.Join(sk.Dir, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		doc, _, _ := skill.ParseHeader(data, sk.Location, sk.Name)
		if diff := cmp.Diff(&doc.Frontmatter, sk.Meta); diff != "" {
			t.Errorf("%s: frontmatter differs from parsing the whole file:\n%s", sk.Name, diff)
		}
	}
	kept := ScanFolder(context.Background(), dir, Options{KeepBodies: true})
	for _, sk := range kept.Skills {
		want := body
		if sk.Name == "long" {
			want = body[:100_000]
		}
		b, err := sk.Body()
		if err != nil || !strings.HasSuffix(b, want) {
			t.Errorf("%s: body of %d bytes, err %v", sk.Name, len(b), err)
		}
	}
}

// TestScanTypedMeta: with TypedMeta a skill's Meta has its typed fields
// and no Raw or Metadata; the skills and diagnostics are the same.
func TestScanTypedMeta(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Tree(dir, 60, 1); err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{
		"meta/SKILL.md": "---\nname: meta\ndescription: d\nmetadata:\n  version: \"2\"\n  tags: a, b\n  author: me\n---\n",
		"bad/SKILL.md":  "---\nname: Bad\ndescription: d\ntags: {a: b}\n---\n",
	})
	full := ScanFolder(context.Background(), dir, Options{})
	typed := ScanFolder(context.Background(), dir, Options{TypedMeta: true})
	if diff := cmp.Diff(full.Diagnostics, typed.Diagnostics); diff != "" {
		t.Errorf("diagnostics differ:\n%s", diff)
	}
	if diff := cmp.Diff(names(full), names(typed)); diff != "" {
		t.Fatalf("skills differ:\n%s", diff)
	}
	withRaw := 0
	for i, sk := range typed.Skills {
		if sk.Meta.Raw != nil || sk.Meta.Metadata != nil {
			t.Errorf("%s: Raw %v, Metadata %v, want nil", sk.Name, sk.Meta.Raw, sk.Meta.Metadata)
		}
		want := *full.Skills[i].Meta
		if want.Metadata != nil {
			withRaw++
		}
		want.Raw, want.Metadata = nil, nil
		if diff := cmp.Diff(&want, sk.Meta, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: typed fields differ:\n%s", sk.Name, diff)
		}
	}
	if withRaw == 0 {
		t.Error("no skill had metadata: the test checks nothing")
	}
}

// TestScanTypedMetaHoldsNoHoles bounds the heap spans a TypedMeta scan
// (check, list) keeps in use per skill, not only its live bytes: the
// skills, their frontmatter, file lists and text are held in chunks
// (skill.Batch), away from the garbage parsing makes, so once that is
// collected the spans it shared with them are not kept in use for a few
// live objects each. Measured here (2,000 skills, three runs each):
// 2,290-2,470 bytes of spans per skill when allocated one by one (1,355
// live), 1,430-1,610 in chunks (1,390-1,480 live: the workers' last
// chunks are part full); at 50,000 skills, loadout check kept 92 MB of
// spans for 70 MB live before, 73 MB after. With a shared Origin and the
// name held in the location, 1,237-1,282 bytes of spans (1,215 live); the
// bound leaves about 15% above that.
func TestScanTypedMetaHoldsNoHoles(t *testing.T) {
	dir, n := memTree(t)
	opt := Options{TypedMeta: true}
	ScanFolder(context.Background(), dir, opt) // warm the pools and the page cache
	live, inuse := scanHeap(t, dir, n, opt)
	t.Logf("%.0f bytes of spans in use per skill, %.0f live", inuse, live)
	if inuse > 1450 {
		t.Errorf("a TypedMeta scan keeps %.0f bytes of heap spans in use per skill (%.0f live), want at most 1450", inuse, live)
	}
}
