package catalog

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/skill"
)

// fakeStore is a SkillProvider over skills kept in memory, as store.Provider
// is over a database: Skills and Skill see the same state, and a skill not
// written again is the same value.
type fakeStore struct {
	mu     sync.Mutex
	skills map[string]*skill.Skill
	reads  int // calls of Skills
	single int // calls of Skill
}

func (f *fakeStore) Skills(context.Context) ([]*skill.Skill, []skill.Diagnostic) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	out := make([]*skill.Skill, 0, len(f.skills))
	for _, sk := range f.skills {
		out = append(out, sk)
	}
	slices.SortFunc(out, func(a, b *skill.Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (f *fakeStore) Skill(_ context.Context, name string) (*skill.Skill, []skill.Diagnostic, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.single++
	return f.skills[name], nil, nil
}

func (f *fakeStore) put(sk *skill.Skill) {
	f.mu.Lock()
	f.skills[sk.Name] = sk
	f.mu.Unlock()
}

func (f *fakeStore) remove(name string) {
	f.mu.Lock()
	delete(f.skills, name)
	f.mu.Unlock()
}

// plainStore hides Skill: a Provider that is not a SkillProvider.
type plainStore struct{ f *fakeStore }

func (p plainStore) Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
	return p.f.Skills(ctx)
}

// storedWith is a stored skill with tags and required tools, so that
// patterns, inline bodies and the tools check all have work.
func storedWith(t testing.TB, name, desc string, version int, tools ...string) *skill.Skill {
	t.Helper()
	loc := "store://" + name
	extra := ""
	if len(tools) > 0 {
		extra = "requires-tools: [" + strings.Join(tools, ", ") + "]\n"
	}
	content := "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\nDo " + name + ", version " + fmt.Sprint(version) + ".\n"
	doc, _, ok := skill.Parse([]byte(content), loc+"/SKILL.md", name)
	if !ok {
		t.Fatalf("%s does not parse", name)
	}
	b := &skill.Bundle{Content: []byte(content)}
	sk := skill.NewVirtual(doc, loc, nil, &skill.Origin{Kind: "store", Version: version}, b.Reader())
	sk.KeepBody(doc.Body)
	return sk
}

// view is everything a loadout shows, for comparing two catalogs.
type view struct {
	Entries []string
	Names   []string
	Diags   []string
	Prompt  string
	Search  []string
}

func viewOf(l *Loadout) view {
	var v view
	for _, e := range l.Entries() {
		v.Entries = append(v.Entries, fmt.Sprintf("%s src=%d listed=%v inline=%v body=%q %s v%d", e.Skill.Name, e.Source, e.Listed, e.Inline, e.inlineBody(), e.Skill.Description, e.Skill.Origin.Version))
	}
	v.Names = l.Names()
	for _, d := range l.Diagnostics() {
		v.Diags = append(v.Diags, d.String()+" agent="+d.Agent+" winner="+d.Winner+" loser="+d.Loser)
	}
	v.Prompt, _, _ = l.Prompt(PromptOptions{})
	for _, q := range []string{"stored", "edit 3", "audit log", "pdf forms", "deplo", "b1", "notes plugin", "review"} {
		v.Search = append(v.Search, fmt.Sprintf("%s: %+v", q, l.Search(q, 5)))
	}
	for _, n := range l.Names() {
		if e, ok := l.Lookup(n); !ok || e.Skill.Name != n {
			v.Diags = append(v.Diags, "lookup of "+n+" fails")
		}
	}
	return v
}

func catalogView(c *Catalog) map[string]view {
	out := map[string]view{GlobalID: viewOf(c.Global())}
	for _, l := range c.Agents() {
		out[l.Spec.AgentID] = viewOf(l)
	}
	var diags []string
	for _, d := range c.Diagnostics() {
		diags = append(diags, d.String()+" agent="+d.Agent)
	}
	out["(catalog)"] = view{Diags: diags}
	return out
}

// A change to a few stored skills patches the loadouts in place; what
// they show is exactly what building the catalog from scratch shows, for
// every kind of agent: patterns, inline, required tools, several sources,
// a name in two sources, preloads, the global catalog.
func TestRefreshStoredPatchesLikeABuild(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"deploy/SKILL.md": md("deploy", "Folder deploy."), "lint/SKILL.md": md("lint", "Lint.")})
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	r := rand.New(rand.NewPCG(5, 6))
	names := []string{"deploy", "lint", "audit", "audit-log", "pdf", "pdf-forms", "review", "notes", "b1", "b2", "b3", "c1"}
	version := 0
	mutate := func() string {
		version++
		name := names[r.IntN(len(names))]
		if r.IntN(4) == 0 {
			f.remove(name)
			return name
		}
		var tools []string
		if r.IntN(2) == 0 {
			tools = []string{"bash"}
		}
		f.put(storedWith(t, name, fmt.Sprintf("Stored %s, edit %d.", name, version), version, tools...))
		return name
	}
	for range 8 {
		mutate()
	}
	plug := []*skill.Skill{virtual(t, "plugin://acme/notes", skill.Origin{Kind: "plugin", Plugin: "acme"}, md("notes", "Plugin notes."), nil)}
	specs := []AgentSpec{
		{AgentID: "all", Skills: []SourceSpec{{Store: true}}},
		{AgentID: "picky", Skills: []SourceSpec{{Store: true, Available: []string{"audit*", "b?"}, Inline: []string{"pdf*", "b2"}}}, Tools: []string{"git"}},
		{AgentID: "mixed", Skills: []SourceSpec{{Root: dir}, {Store: true, Available: []string{"*"}}, {Plugin: "acme"}}},
		{AgentID: "plugfirst", Skills: []SourceSpec{{Plugin: "acme"}, {Store: true, Inline: []string{"c*"}}}},
		{AgentID: "twice", Skills: []SourceSpec{{Store: true, Available: []string{"a*"}}, {Store: true, Inline: []string{"b*"}}}},
		{AgentID: "preloads", Skills: []SourceSpec{{Store: true, Available: []string{"p*"}}}, Preload: []string{"review", "nope"}},
		{AgentID: "folder", Skills: []SourceSpec{{Root: dir}}},
	}
	opts := func(p Provider) Options {
		return Options{Store: p, Plugins: map[string]Provider{"acme": ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return plug, nil })}, PluginOrder: []string{"acme"}}
	}
	c, err := New(context.Background(), specs, opts(f))
	if err != nil {
		t.Fatal(err)
	}
	folder := agent(t, c, "folder")
	for step := range 200 {
		var changed []string
		for range 1 + r.IntN(3) {
			changed = append(changed, mutate())
		}
		if step%2 == 0 {
			changed = names // the unchanged ones must cost nothing either
		}
		// Index every loadout, so that the next ones patch the index.
		if step%3 != 2 {
			for _, l := range append(c.Agents(), c.Global()) {
				l.Search("x", 1)
			}
		}
		reads := f.reads
		c.RefreshStored(context.Background(), changed...)
		if f.reads != reads {
			t.Fatalf("step %d: RefreshStored read the whole store", step)
		}
		fresh, err := New(context.Background(), specs, opts(plainStore{f}))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(catalogView(fresh), catalogView(c)); diff != "" {
			t.Fatalf("step %d: the refreshed catalog differs from a fresh one (-fresh +refreshed):\n%s", step, diff)
		}
	}
	if agent(t, c, "folder") != folder {
		t.Error("an agent that does not read the store was built again")
	}
	// A refresh of names that did not change stores nothing new.
	gen := c.Generation()
	c.RefreshStored(context.Background(), names...)
	if c.Generation() != gen {
		t.Error("a refresh that changed nothing made a new snapshot")
	}
}

// With a provider that cannot read one skill, and after a change made by
// another process (Refresh with no paths), the whole store is read and
// compared: only the loadouts of what changed are touched.
func TestRefreshWholeStore(t *testing.T) {
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	for i := range 50 {
		f.put(storedWith(t, fmt.Sprintf("s%02d", i), "S.", 1))
	}
	specs := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true, Available: []string{"s0*"}}}}, {AgentID: "b", Skills: []SourceSpec{{Store: true, Available: []string{"s1*"}}}}}
	for _, p := range []Provider{plainStore{f}, f} {
		c, err := New(context.Background(), specs, Options{Store: p})
		if err != nil {
			t.Fatal(err)
		}
		a, b := agent(t, c, "a"), agent(t, c, "b")
		f.put(storedWith(t, "s05", "S, edited.", 2))
		if p == f {
			c.Refresh(context.Background(), nil)
		} else {
			c.RefreshStored(context.Background(), "s05")
		}
		if e, _ := agent(t, c, "a").Lookup("s05"); e.Skill.Description != "S, edited." {
			t.Errorf("%T: the edit is not served", p)
		}
		if agent(t, c, "a") == a || agent(t, c, "b") != b {
			t.Errorf("%T: want a patched and b kept", p)
		}
		// Patched, not built again: the other entries are the same.
		for _, e := range agent(t, c, "a").Entries() {
			if e2, _ := a.Lookup(e.Skill.Name); (e2 == e) != (e.Skill.Name != "s05") {
				t.Errorf("%T: entry %s: kept %v", p, e.Skill.Name, e2 == e)
			}
		}
		// Nothing changed: the same snapshot.
		gen := c.Generation()
		c.Refresh(context.Background(), nil)
		if c.Generation() != gen {
			t.Errorf("%T: a refresh that changed nothing made a new snapshot", p)
		}
	}
}

// Concurrent changes never lose one: many goroutines edit skill files and
// stored skills and call Refresh, Reload and RefreshStored at once; at the
// end the catalog serves what was written last. (Before the writers were
// serialised, a refresh that read a file before the last edit could store
// its snapshot after the refresh that read the edit, and the old text came
// back.)
func TestConcurrentRefreshKeepsTheLastWrite(t *testing.T) {
	dir := t.TempDir()
	const writers, rounds = 6, 40
	for g := range writers {
		write(t, dir, map[string]string{fmt.Sprintf("s%d/SKILL.md", g): md(fmt.Sprintf("s%d", g), "Start.")})
	}
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	for g := range writers {
		f.put(storedWith(t, fmt.Sprintf("t%d", g), "Start.", 0))
	}
	// Other skills, so that a reload takes a while and changes overlap.
	for i := range 200 {
		write(t, dir, map[string]string{fmt.Sprintf("other/o%03d/SKILL.md", i): md(fmt.Sprintf("o%03d", i), "Other.")})
		f.put(storedWith(t, fmt.Sprintf("u%03d", i), "Other.", 1))
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}, {Store: true}}}}, Options{Store: f})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	last := make([]string, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			name, stored := fmt.Sprintf("s%d", g), fmt.Sprintf("t%d", g)
			path := filepath.Join(dir, name, "SKILL.md")
			for i := range rounds {
				// The size changes with every edit, so the parse cache
				// (size, mtime, inode) always sees it.
				desc := fmt.Sprintf("Edit %d by %d%s.", i, g, strings.Repeat("!", i))
				if err := os.WriteFile(path, []byte(md(name, desc)), 0o644); err != nil {
					t.Error(err)
					return
				}
				f.put(storedWith(t, stored, desc, i+1))
				last[g] = desc
				switch r.IntN(4) {
				case 0:
					c.Reload(ctx)
				case 1:
					c.RefreshStored(ctx, stored)
					c.Refresh(ctx, []string{path})
				default:
					c.Refresh(ctx, []string{path})
					c.Refresh(ctx, nil)
				}
				// Once its refresh has returned, a writer sees its write,
				// until it writes again: nobody else writes these skills.
				l := agent(t, c, "a")
				for _, n := range []string{name, stored} {
					if e, ok := l.Lookup(n); !ok || e.Skill.Description != desc {
						t.Errorf("%s after its refresh: the catalog serves %q, want %q", n, e.Skill.Description, desc)
						return
					}
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	l := agent(t, c, "a")
	for g := range writers {
		for _, name := range []string{fmt.Sprintf("s%d", g), fmt.Sprintf("t%d", g)} {
			e, ok := l.Lookup(name)
			if !ok || e.Skill.Description != last[g] {
				t.Errorf("%s: the catalog serves %q, but the last write was %q", name, e.Skill.Description, last[g])
			}
		}
	}
}

// gatedStore is a store whose next full read waits, once armed, until
// released: a slow read, to make two changes overlap on purpose.
type gatedStore struct {
	*fakeStore
	mu      sync.Mutex
	armed   bool
	reading chan struct{} // closed when the gated read has started
	release chan struct{}
}

func (g *gatedStore) Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
	g.mu.Lock()
	armed := g.armed
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(g.reading)
		<-g.release
	}
	return g.fakeStore.Skills(ctx)
}

// A reload that read a skill folder before an edit, and is slow to finish,
// must not replace the snapshot of the refresh that read the edit: the
// library user saw the new text, then the old one.
func TestOverlappingReloadAndRefresh(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"deploy/SKILL.md": md("deploy", "Version one.")})
	g := &gatedStore{fakeStore: &fakeStore{skills: map[string]*skill.Skill{}}, reading: make(chan struct{}), release: make(chan struct{})}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}, {Store: true}}}}, Options{Store: g})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
	reloaded := make(chan struct{})
	go func() { defer close(reloaded); c.Reload(ctx) }() // reads the folder (version one), then waits in the store
	<-g.reading
	path := filepath.Join(dir, "deploy", "SKILL.md")
	if err := os.WriteFile(path, []byte(md("deploy", "Version two, longer.")), 0o644); err != nil {
		t.Fatal(err)
	}
	refreshed := make(chan struct{})
	go func() { defer close(refreshed); c.Refresh(ctx, []string{path}) }()
	// Let the refresh finish first if it can (it could, before changes
	// were serialised); if it waits for the reload, release the reload.
	select {
	case <-refreshed:
	case <-time.After(100 * time.Millisecond):
	}
	close(g.release)
	<-reloaded
	<-refreshed
	if e, _ := agent(t, c, "a").Lookup("deploy"); e == nil || e.Skill.Description != "Version two, longer." {
		t.Errorf("after both changes the catalog serves %q; the file says %q", e.Skill.Description, "Version two, longer.")
	}
}

// storedCatalog10k is a catalog over 10,000 stored skills with three
// agents (one with every skill, two with patterns and inline skills) and
// the global catalog, as the service benchmarks use.
func storedCatalog10k(b *testing.B) (*Catalog, *fakeStore, []string) {
	words := strings.Fields("deploy review pdf form data cache build test lint docs release notes backend frontend query index search report chart table import export audit")
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	var names []string
	for i := range 10_000 {
		n := fmt.Sprintf("%s-%s-%05d", words[i%len(words)], words[(i/7)%len(words)], i)
		names = append(names, n)
		f.put(storedWith(b, n, fmt.Sprintf("Use when working on %s %s tasks.", words[(i/3)%len(words)], words[(i/11)%len(words)]), 1))
	}
	c, err := New(context.Background(), []AgentSpec{
		{AgentID: "dev", Skills: []SourceSpec{{Store: true}}},
		{AgentID: "ops", Skills: []SourceSpec{{Store: true, Available: []string{"deploy-*", "audit-*"}, Inline: []string{"deploy-review-*"}}}},
		{AgentID: "docs", Skills: []SourceSpec{{Store: true, Available: []string{"docs-*", "report-*"}}}},
	}, Options{Store: f})
	if err != nil {
		b.Fatal(err)
	}
	return c, f, names
}

// BenchmarkRefreshStored10k is the catalog's part of a write to one stored
// skill among 10,000: read it again, patch the loadouts that hold it.
func BenchmarkRefreshStored10k(b *testing.B) {
	c, f, names := storedCatalog10k(b)
	ctx := context.Background()
	// Two versions of 64 skills, in turn: every write changes its skill.
	skills := make([]*skill.Skill, 128)
	for i := range skills {
		n := names[((i%64)*7919)%len(names)]
		skills[i] = storedWith(b, n, fmt.Sprintf("Edited %s, %d.", n, i/64), 2+i)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		sk := skills[i%len(skills)]
		f.put(sk)
		c.RefreshStored(ctx, sk.Name)
		i++
	}
	if e, _ := c.Global().Lookup(skills[(i-1)%len(skills)].Name); e.Skill != skills[(i-1)%len(skills)] {
		b.Fatal("the last write is not served")
	}
}

// BenchmarkRebuild10k is what every write cost before: every loadout built
// again from the store's skills (not counting the read of the store).
func BenchmarkRebuild10k(b *testing.B) {
	c, f, _ := storedCatalog10k(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.mu.Lock()
		res := maps.Clone(c.snap.Load().results)
		c.apply(ctx, nil, res, nil)
		c.mu.Unlock()
	}
	_ = f
}

// BenchmarkSearchAfterWrite10k is a search right after a write: the first
// search of a patched loadout indexes it again.
func BenchmarkSearchAfterWrite10k(b *testing.B) {
	c, f, names := storedCatalog10k(b)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		n := names[(i*7919)%len(names)]
		f.put(storedWith(b, n, fmt.Sprintf("Edited %s, %d.", n, i), 2+i))
		c.RefreshStored(ctx, n)
		l, _ := c.Agent("dev")
		if hs := l.Search("release notes", 10); len(hs) == 0 {
			b.Fatal("no hits")
		}
		i++
	}
}

// A write after a search patches the search index rather than indexing
// every skill again, and the patched index ranks exactly as a new one.
func TestSearchIndexPatched(t *testing.T) {
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	words := strings.Fields("deploy review pdf form data cache build test lint docs release notes")
	for i := range 60 {
		f.put(storedWith(t, fmt.Sprintf("%s-%s-%02d", words[i%len(words)], words[(i/5)%len(words)], i), fmt.Sprintf("Use for %s and %s.", words[(i/3)%len(words)], words[(i/7)%len(words)]), 1))
	}
	specs := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true}}}}
	c, err := New(context.Background(), specs, Options{Store: f})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"deploy", "release notes", "pdf form", "use", "lint-docs", "zebra", "uniqueword", "relea"}
	for round := range 20 {
		l := agent(t, c, "a")
		l.Search("deploy", 3) // index it
		name := fmt.Sprintf("%s-%s-%02d", words[round%len(words)], words[(round/5)%len(words)], round)
		switch round % 3 {
		case 0:
			f.put(storedWith(t, name, fmt.Sprintf("Edited: uniqueword%d and release notes.", round), 2+round))
		case 1:
			f.remove(name)
		default:
			f.put(storedWith(t, fmt.Sprintf("zebra-%02d", round), "A zebra skill for release.", 1))
			name = fmt.Sprintf("zebra-%02d", round)
		}
		c.RefreshStored(context.Background(), name)
		p := agent(t, c, "a")
		if p.base == nil {
			t.Fatalf("round %d: the patched loadout does not start from the previous index", round)
		}
		fresh, _ := New(context.Background(), specs, Options{Store: plainStore{f}})
		for _, q := range queries {
			got, want := p.Search(q, 8), agent(t, fresh, "a").Search(q, 8)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round %d, %q (-fresh +patched):\n%s", round, q, diff)
			}
		}
		ix := p.search.Load()
		descs := map[string]bool{} // a document a description: clones are one
		for _, n := range p.Names() {
			e, _ := p.Lookup(n)
			descs[e.Skill.Description] = true
		}
		if ix == nil || ix.live != len(descs) {
			t.Fatalf("round %d: index of %d live documents for %d descriptions", round, ix.live, len(descs))
		}
		if round%3 != 2 && len(ix.entries) == ix.live {
			t.Fatalf("round %d: the index was built afresh (no removed document in it)", round)
		}
	}
}

// failingOne is a store whose reads of one skill fail.
type failingOne struct{ *fakeStore }

func (f failingOne) Skill(context.Context, string) (*skill.Skill, []skill.Diagnostic, error) {
	return nil, nil, fmt.Errorf("database is locked")
}

// When a skill cannot be read alone, the whole store is read instead:
// the change is never lost.
func TestRefreshStoredFallsBack(t *testing.T) {
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	f.put(storedWith(t, "one", "One.", 1))
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true}}}}, Options{Store: failingOne{f}})
	if err != nil {
		t.Fatal(err)
	}
	f.put(storedWith(t, "one", "One, edited.", 2))
	reads := f.reads
	c.RefreshStored(context.Background(), "one")
	if f.reads != reads+1 {
		t.Errorf("the store was read whole %d times, want once", f.reads-reads)
	}
	if e, _ := agent(t, c, "a").Lookup("one"); e == nil || e.Skill.Description != "One, edited." {
		t.Errorf("served %+v", e)
	}
}

// An edit inside a skill folder patches the loadouts too, and they show
// what a catalog built afresh shows.
func TestFolderEditPatchesLikeABuild(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		write(t, dir, map[string]string{fmt.Sprintf("s%02d/SKILL.md", i): md(fmt.Sprintf("s%02d", i), "Skill.", "requires-tools: [bash]\n")})
	}
	specs := []AgentSpec{
		{AgentID: "all", Skills: []SourceSpec{{Root: dir}}},
		{AgentID: "some", Skills: []SourceSpec{{Root: dir, Available: []string{"s0*"}, Inline: []string{"s1*"}}}, Tools: []string{"git"}},
	}
	c, err := New(context.Background(), specs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		all := agent(t, c, "all")
		all.Search("skill", 1)
		name := fmt.Sprintf("s%02d", i*3)
		path := filepath.Join(dir, name, "SKILL.md")
		write(t, dir, map[string]string{name + "/SKILL.md": md(name, fmt.Sprintf("Edited %d%s.", i, strings.Repeat("!", i)), "requires-tools: [git]\n")})
		c.Refresh(context.Background(), []string{path})
		if e, _ := agent(t, c, "all").Lookup("s19"); e == nil || e != func() *Entry { x, _ := all.Lookup("s19"); return x }() {
			t.Errorf("step %d: an untouched entry was made again (not patched)", i)
		}
		fresh, err := New(context.Background(), specs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(catalogView(fresh), catalogView(c)); diff != "" {
			t.Fatalf("step %d (-fresh +refreshed):\n%s", i, diff)
		}
	}
}
