package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// indexCost builds l's search index and returns the heap it keeps and
// the bytes its build allocated, per skill.
func indexCost(l *Loadout) (kept, made float64) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	l.WarmSearch()
	runtime.GC()
	runtime.ReadMemStats(&b)
	n := float64(len(l.Names()))
	runtime.KeepAlive(l)
	return float64(int64(b.HeapAlloc)-int64(a.HeapAlloc)) / n, float64(b.TotalAlloc-a.TotalAlloc) / n
}

// TestSearchIndexCost: building the search index of generated skills
// makes little garbage. It made 4.2 KB a skill (two maps a document, and
// postings grown an append at a time), which at 50,000 skills was most of
// serve's memory peak as it warmed up; the two-pass build makes about
// 1.1 KB. What it keeps is logged (about 500 B a skill).
func TestSearchIndexCost(t *testing.T) {
	l, _ := searchGenTree(t, 4000)
	kept, made := indexCost(l)
	t.Logf("kept %.0f B a skill, made %.0f B a skill", kept, made)
	if made > 1600 {
		t.Errorf("building the index allocated %.0f B a skill; want at most 1,600", made)
	}
}

// shareTree is a folder of n skills, s00 to s(n-1).
func shareTree(t *testing.T, n int) string {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		files[name+"/SKILL.md"] = md(name, fmt.Sprintf("Tidies table %d of the ledger. Use when asked to tidy.", i))
	}
	write(t, dir, files)
	return dir
}

// TestSearchIndexShared: an agent that selects every skill and the
// global loadout share one index (twin), before and after a change, and
// answer as an index of their own would; an agent of fewer skills has
// its own.
func TestSearchIndexShared(t *testing.T) {
	dir := shareTree(t, 12)
	specs := []AgentSpec{{AgentID: "all", Skills: []SourceSpec{{Root: dir}}},
		{AgentID: "some", Skills: []SourceSpec{{Root: dir, Available: []string{"s0*"}}}}}
	c := newCat(t, specs...)
	queries := []string{"tidy table 3", "ledger", "s07", "s1", "tabl"}
	check := func(step string) {
		all, some := agent(t, c, "all"), agent(t, c, "some")
		all.WarmSearch()
		some.WarmSearch()
		c.Global().WarmSearch()
		if c.Global().search.Load() != all.search.Load() {
			t.Errorf("%s: the global loadout built its own index, not the one of the agent of the same skills", step)
		}
		if some.search.Load() == all.search.Load() {
			t.Errorf("%s: the agent of fewer skills took the index of all of them", step)
		}
		fresh := newCat(t, specs...) // each index built on its own
		for _, q := range queries {
			for _, id := range []string{"all", "some"} {
				if got, want := agent(t, c, id).Search(q, 5), agent(t, fresh, id).Search(q, 5); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s %q:\nshared %+v\nown    %+v", step, id, q, got, want)
				}
			}
			if got, want := c.Global().Search(q, 5), fresh.Global().Search(q, 5); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, global %q:\nshared %+v\nown    %+v", step, q, got, want)
			}
		}
	}
	check("start")
	p := filepath.Join(dir, "s03", "SKILL.md")
	testutil.Must(t, os.WriteFile(p, []byte(md("s03", "Sorts the ledger's receipts.")), 0o644))
	c.Refresh(context.Background(), []string{p})
	if agent(t, c, "all").base == nil {
		t.Fatal("after the edit the loadout does not start from the previous index")
	}
	check("after an edit")
}

// TestSearchIndexShareBound: the catalog remembers the last maxShared
// loadouts whose index was built. A loadout of the same skills as the
// one built maxShared builds ago takes its index; one past that builds
// its own (and answers the same).
func TestSearchIndexShareBound(t *testing.T) {
	dir := shareTree(t, maxShared+1)
	for _, n := range []int{maxShared, maxShared + 1} {
		var specs []AgentSpec
		for i := range n {
			specs = append(specs, AgentSpec{AgentID: fmt.Sprintf("a%02d", i), Skills: []SourceSpec{{Root: dir, Available: []string{fmt.Sprintf("s%02d", i)}}}})
		}
		specs = append(specs, AgentSpec{AgentID: "twin", Skills: []SourceSpec{{Root: dir, Available: []string{"s00"}}}})
		c := newCat(t, specs...)
		for i := range n {
			agent(t, c, fmt.Sprintf("a%02d", i)).WarmSearch()
		}
		twin, first := agent(t, c, "twin"), agent(t, c, "a00")
		twin.WarmSearch()
		if shared := twin.search.Load() == first.search.Load(); shared != (n <= maxShared) {
			t.Errorf("%d loadouts built before: shared %v, want %v", n, shared, n <= maxShared)
		}
		if got, want := twin.Search("tidy table 0", 3), first.Search("tidy table 0", 3); !reflect.DeepEqual(got, want) || len(got) != 1 {
			t.Errorf("%d loadouts built before: twin %+v, a00 %+v", n, got, want)
		}
	}
}
