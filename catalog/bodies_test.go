package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// A server's catalog keeps bodies in a body file (serve does): a load
// serves the body scanned, an edit once refreshed, and a broken edit the
// last good body, read back from the file, inline skills included.
func TestBodiesInFileServeLastGood(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy.\n---\nVersion one of deploy.\n",
		"lint/SKILL.md":   "---\nname: lint\ndescription: Lint.\n---\nLint body one.\n",
	})
	bf, err := skill.NewBodyFile(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir, Inline: []string{"lint"}, Available: []string{"deploy"}}}}},
		Options{Scan: source.Options{KeepBodies: true, Bodies: bf}})
	if err != nil {
		t.Fatal(err)
	}
	load := func(name string) string {
		t.Helper()
		l := agent(t, c, "a")
		r := l.Load(name)
		if r.Status != StatusOK {
			t.Fatalf("load %s: %s %s", name, r.Status, r.Text)
		}
		return r.Text
	}
	if got := load("deploy"); !strings.Contains(got, "Version one of deploy.") {
		t.Errorf("first load: %s", got)
	}
	if bf.Size() == 0 {
		t.Fatal("the bodies are not in the body file")
	}
	p := filepath.Join(dir, "deploy", "SKILL.md")
	testutil.Write(t, p, "---\nname: deploy\ndescription: Deploy safely.\n---\nVersion two of deploy.\n")
	c.Refresh(context.Background(), []string{p})
	if got := load("deploy"); !strings.Contains(got, "Version two of deploy.") {
		t.Errorf("after the edit: %s", got)
	}
	testutil.Write(t, p, "---\nname: deploy\ndescription: [broken\n---\nVersion three.\n")
	c.Refresh(context.Background(), []string{p})
	if got := load("deploy"); !strings.Contains(got, "Version two of deploy.") || strings.Contains(got, "Version three") {
		t.Errorf("a broken edit does not serve the last good body: %s", got)
	}
	if !hasCode(c.Diagnostics(), skill.CodeKeptLastGood) {
		t.Errorf("no kept-last-good diagnostic: %v", diagCodes(c.Diagnostics()))
	}
	// An inline skill's body, broken in turn, stays in the prompt.
	lp := filepath.Join(dir, "lint", "SKILL.md")
	testutil.Write(t, lp, "---\nname: lint\ndescription: [broken\n---\nLint body two.\n")
	c.Refresh(context.Background(), []string{lp})
	e, _ := agent(t, c, "a").Lookup("lint")
	if e == nil || !e.Inline || e.inlineBody() != "Lint body one." {
		t.Errorf("inline body after a broken edit: %+v", e)
	}
}

func hasCode(ds []skill.Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// A catalog read once (loadout check, list, prompt) keeps no scan cache,
// and a Reload of it still sees an edit.
func TestOnceKeepsNoScanCache(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy one.\n---\nBody.\n",
	})
	ctx := context.Background()
	specs := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}
	once, err := New(ctx, specs, Options{Once: true})
	if err != nil {
		t.Fatal(err)
	}
	if once.opt.Scan.Cache != nil {
		t.Fatal("a catalog read once made a scan cache")
	}
	kept, err := New(ctx, specs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kept.opt.Scan.Cache == nil {
		t.Fatal("a catalog without Once has no scan cache: reloads would parse every SKILL.md again")
	}
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy two, a longer description.\n---\nBody.\n",
	})
	once.Reload(ctx)
	l, _ := once.Agent("a")
	e, ok := l.Lookup("deploy")
	if !ok || e.Skill.Description != "Deploy two, a longer description." {
		t.Fatalf("after Reload: %+v, %v", e, ok)
	}
}

// TestOnceSharesGlobal: a catalog read once whose only agent selects every
// skill of its sources (loadout check and list with --root) holds one set
// of entries, shared by the agent's loadout and the global one, rather
// than two; what either says is what it said with two. An agent with
// patterns, or with a diagnostic of its own, still gets a global loadout
// of its own.
func TestOnceSharesGlobal(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	const n = 2000
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		files[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Skill number " + name + ".\n---\nBody.\n"
	}
	files["broken/SKILL.md"] = "---\nname: broken\n---\nno description\n"
	write(t, dir, files)
	ctx := context.Background()
	all := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}
	some := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir, Available: []string{"skill-1*"}}}}}
	// retained is the live heap the catalog of specs holds.
	retained := func(specs []AgentSpec, opt Options) (*Catalog, int64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := New(ctx, specs, opt)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return c, int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	New(ctx, all, Options{Once: true}) // warm the pools
	shared, sharedBytes := retained(all, Options{Once: true})
	a, _ := shared.Agent("a")
	g := shared.Global()
	if len(a.Entries()) != n || len(g.Entries()) != n || &a.Entries()[0] != &g.Entries()[0] {
		t.Fatalf("the global loadout of a catalog read once does not share the only agent's entries (%d, %d)", len(a.Entries()), len(g.Entries()))
	}
	// The same catalog built twice over (no Once) says the same things.
	kept, _ := retained(all, Options{})
	if diff := cmp.Diff(kept.Diagnostics(), shared.Diagnostics()); diff != "" {
		t.Errorf("diagnostics differ when the global loadout is shared (-built +shared):\n%s", diff)
	}
	if !slices.Equal(kept.Global().Names(), g.Names()) || g.Spec.AgentID != GlobalID || g.Spec.Budget != kept.Global().Spec.Budget {
		t.Errorf("shared global loadout: %d names, spec %+v", len(g.Names()), g.Spec)
	}
	// Without sharing (noShareGlobal), a catalog of these 2,000 skills
	// holds about 190 bytes more per skill (measured): a second Entry,
	// map slot and name. A quarter of that is well beyond noise.
	apart, apartBytes := retained(all, Options{Once: true, noShareGlobal: true})
	if a, _ := apart.Agent("a"); &a.Entries()[0] == &apart.Global().Entries()[0] {
		t.Fatal("noShareGlobal did not build the global loadout apart")
	}
	t.Logf("shared %d B, apart %d B: %.0f B per skill saved", sharedBytes, apartBytes, float64(apartBytes-sharedBytes)/n)
	if saved := float64(apartBytes-sharedBytes) / n; saved < 50 {
		t.Errorf("sharing the global loadout saved %.0f bytes per skill, want at least 50", saved)
	}
	runtime.KeepAlive(shared)
	runtime.KeepAlive(apart)
	// An agent that selects some skills only: the global loadout is its own.
	c, _ := retained(some, Options{Once: true})
	if len(c.Global().Entries()) != n {
		t.Errorf("global loadout of an agent with patterns: %d entries, want %d", len(c.Global().Entries()), n)
	}
}
