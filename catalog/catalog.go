package catalog

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// Provider supplies skills that are not found by scanning a folder: the
// store, or one plugin. Skills come in the provider's own order, which is
// its precedence. The catalog calls it on every Reload, and on Refresh with
// no paths; a store that is also a SkillProvider is read one skill at a
// time by RefreshStored. A provider that returns the same *skill.Skill for
// a skill that did not change lets the catalog keep that skill's entries.
type Provider interface {
	Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic)

// Skills calls f.
func (f ProviderFunc) Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) { return f(ctx) }

// Options configure a Catalog.
type Options struct {
	// Store serves {"store": true} sources; nil means no store is configured.
	Store Provider
	// Plugins serve {"plugin": ID} sources, by plugin id, and PluginOrder
	// is their configured order (for the global catalog).
	Plugins     map[string]Provider
	PluginOrder []string
	// Remotes serve git and index sources, by SourceSpec.RemoteID (see
	// package remote, which keeps their pinned snapshots).
	Remotes map[string]Provider
	// Pins, when set, returns the agents' pins kept outside the config
	// (the store's, set through the API), by agent then skill; they win
	// over the config's. It is read at every change of the catalog.
	Pins func(ctx context.Context) map[string]map[string]VersionPin
	// Gate, when set, leaves out of every loadout the skills of the
	// local source kinds it names (folder, plugin) that have a safety
	// finding its policy refuses, reporting each (CodeSafetyGated).
	Gate *Gate
	// Scan bounds folder scans. Its Cache is created if nil, so reloads
	// reparse only the SKILL.md files that changed.
	Scan source.Options
	// Once says the catalog is read once and never reloaded or refreshed
	// (a command such as loadout check or list): no scan cache is made,
	// which saves about 170 bytes a skill. A Reload or Refresh still
	// works, parsing every SKILL.md again. Its only agent, when it
	// selects every skill of the same sources as the global loadout, shares
	// its entries with it (see shareGlobal).
	Once bool
	// ReleaseFiles, with Once, makes the first safety checks (Safety,
	// Report) release the file manifest of every skill they read once
	// they are done: for a command whose report is all it needs (loadout
	// check, where at 50,000 skills the manifests are 7.9 MB that would
	// otherwise outlive the only pass that reads them). The skills are
	// the catalog's own, made by its scan; a skill activated after that
	// lists no supporting files. Without Once it does nothing.
	ReleaseFiles bool
	// noShareGlobal turns shareGlobal off (tests measure what it saves).
	noShareGlobal bool
	// EnvelopeCache bounds the bytes of rendered envelopes loads keep
	// for reuse (default DefaultEnvelopeCache; negative: none are kept).
	EnvelopeCache int64
	// Budget and Format are the defaults for agents that set neither;
	// BudgetTokens likewise for agents that set no budgetTokens.
	Budget       int
	Format       string
	BudgetTokens int
}

// Catalog holds every agent's loadout. It is safe for concurrent use: each
// change builds a new immutable snapshot and swaps it in, so readers never
// see a half-built catalog and never wait. Changes (Reload, Refresh,
// RefreshStored) run one at a time, each from the snapshot the one before
// it stored, so a slower change can never put back what a newer one
// replaced.
type Catalog struct {
	specs []AgentSpec
	opt   Options
	// mu is held by every change from its first look at the current
	// snapshot until it has stored the next.
	mu   sync.Mutex
	gen  atomic.Uint64
	snap atomic.Pointer[snapshot]

	extraMu sync.Mutex
	extra   atomic.Pointer[[]skill.Diagnostic]

	safety safetyCache // Safety's findings per skill (safety.go)
	gated  gateCache   // the gate's verdicts per skill (gate.go), under mu
	envs   envCache    // the loads' rendered envelopes (envcache.go)
	share  indexShare  // the search indexes built lately (searchshare.go)

	// ctx and curPins are those of the change being applied (under mu),
	// for build (versions.go).
	ctx     context.Context
	curPins map[string]map[string]VersionPin
	blocks  atomic.Pointer[blockSet] // the kill switch's (blocks.go), stored under mu

	reports reportCache                  // the last Report (problems.go)
	sources atomic.Pointer[sourcesEntry] // the last Sources (sources.go)
}

type snapshot struct {
	// results are each source's last read, by SourceSpec.key.
	results map[string]*source.Result
	agents  map[string]*Loadout
	order   []*Loadout
	global  *Loadout
	diags   []skill.Diagnostic
	// pins are the agents' version pins the loadouts were built with.
	pins map[string]map[string]VersionPin
}

// GlobalID is the id of the catalog of every configured source.
const GlobalID = "*"

// New validates the agent specs and scans their sources. It fails only for
// specs that are wrong (a missing agentId, a malformed pattern, a duplicate
// id); problems with skills are diagnostics.
func New(ctx context.Context, agents []AgentSpec, opt Options) (*Catalog, error) {
	seen := map[string]bool{}
	for i := range agents {
		if err := agents[i].Validate(); err != nil {
			return nil, err
		}
		if seen[agents[i].AgentID] {
			return nil, &SpecError{Agent: agents[i].AgentID, Field: "agentId", Msg: "is used by two agents: agent ids must be unique"}
		}
		seen[agents[i].AgentID] = true
	}
	if opt.Scan.Cache == nil && !opt.Once {
		opt.Scan.Cache = source.NewCache()
	}
	c := &Catalog{specs: agents, opt: opt}
	c.envs.max = opt.EnvelopeCache
	if c.envs.max == 0 {
		c.envs.max = DefaultEnvelopeCache
	}
	c.Reload(ctx)
	return c, nil
}

// Generation counts the snapshots the catalog has stored: it moves when a
// change changed something, and only then.
func (c *Catalog) Generation() uint64 { return c.gen.Load() }

// Reload rescans every source and rebuilds every loadout. Unchanged
// SKILL.md files are not parsed again.
func (c *Catalog) Reload(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(ctx, nil, map[string]*source.Result{}, nil)
}

// Refresh brings the catalog up to date after the files at paths changed
// (what a file watcher reports). An edit inside a skill folder reads that
// skill again and nothing else; any other change under a root (a skill
// folder added or removed, an ignore file edited) rescans that root, with
// unchanged SKILL.md files taken from the cache. Other sources, and roots
// no path falls under, are reused as they are. With no paths, the store
// and the plugins are read again instead (after a change another process
// made to the store, say); only the loadouts of the skills that changed
// are touched.
func (c *Catalog) Refresh(ctx context.Context, paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.snap.Load()
	keep := maps.Clone(prev.results)
	changed := map[string]map[string]*skill.Skill{}
	if len(paths) == 0 {
		for key := range keep {
			if !strings.HasPrefix(key, "root:") {
				delete(keep, key) // read again, and compared
			}
		}
	}
	for _, p := range paths {
		for key, res := range keep {
			root, ok := strings.CutPrefix(key, "root:")
			if !ok || p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
				continue
			}
			if next, sk, ok := c.refreshSkill(ctx, root, res, p); ok {
				if next == res {
					continue // read again, unchanged
				}
				keep[key] = next
				if changed[key] == nil {
					changed[key] = map[string]*skill.Skill{}
				}
				changed[key][sk.Name] = sk
			} else {
				delete(keep, key) // rescan this root
				delete(changed, key)
			}
		}
	}
	c.apply(ctx, prev, keep, changed)
}

// refreshSkill handles a change at path inside one of res's skill folders
// by reading that skill again. ok is false when the change is not inside a
// skill, or changes which skills exist: the root must be rescanned.
func (c *Catalog) refreshSkill(ctx context.Context, root string, res *source.Result, path string) (*source.Result, *skill.Skill, bool) {
	for i, dir := range res.Dirs {
		if path != dir && !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			continue
		}
		sk, diags := source.ReloadSkill(ctx, root, dir, c.opt.Scan)
		if sk == nil || sk.Name != res.Skills[i].Name || sk != res.Skills[i] && c.gateRefuses(sk) {
			// Removed or renamed: collisions may change. Refused by the
			// gate: the rescan leaves it out and reports it.
			return nil, nil, false
		}
		next := &source.Result{Skills: append([]*skill.Skill(nil), res.Skills...), Dirs: res.Dirs}
		next.Skills[i] = sk
		// Replace this skill's diagnostics, keep the others.
		for _, d := range res.Diagnostics {
			if d.Skill == res.Skills[i].Name && (d.Path == dir || strings.HasPrefix(d.Path, dir+string(filepath.Separator))) {
				continue
			}
			next.Diagnostics = append(next.Diagnostics, d)
		}
		next.Diagnostics = append(next.Diagnostics, diags...)
		if sk == res.Skills[i] && slices.Equal(next.Diagnostics, res.Diagnostics) {
			// The scan cache gave back the same Skill: nothing changed.
			return res, sk, true
		}
		return next, sk, true
	}
	return nil, nil, false
}

// Roots lists the folders the catalog scans, for a watcher.
func (c *Catalog) Roots() []string {
	var roots []string
	for key := range c.snap.Load().results {
		if r, ok := strings.CutPrefix(key, "root:"); ok {
			roots = append(roots, r)
		}
	}
	sort.Strings(roots)
	return roots
}

// RootSkills is how many skills each scanned folder yielded (before any
// name is shadowed by another source), by root, for `loadout check`,
// which fails a root that yields none.
func (c *Catalog) RootSkills() map[string]int {
	out := map[string]int{}
	for key, res := range c.snap.Load().results {
		if r, ok := strings.CutPrefix(key, "root:"); ok && res != nil {
			out[r] = len(res.Skills)
		}
	}
	return out
}

// globalSpec is the global catalog: every folder any agent names (in order
// of first appearance), then the store, then every configured plugin in
// config order. Everything is available and nothing inline; the first
// source wins a name, and every shadowed skill is reported.
func (c *Catalog) globalSpec(seen []SourceSpec) AgentSpec {
	g := AgentSpec{AgentID: GlobalID, DisplayName: "All skills"}
	for _, s := range seen {
		switch {
		case s.Root != "":
			g.Skills = append(g.Skills, SourceSpec{Root: s.Root})
		case s.Remote():
			g.Skills = append(g.Skills, SourceSpec{Git: s.Git, Index: s.Index, OCI: s.OCI, Tag: s.Tag, Digest: s.Digest, Tags: s.Tags, Ref: s.Ref, Paths: s.Paths, ID: s.RemoteID()})
		}
	}
	if c.opt.Store != nil {
		g.Skills = append(g.Skills, SourceSpec{Store: true})
	}
	for _, id := range c.opt.PluginOrder {
		g.Skills = append(g.Skills, SourceSpec{Plugin: id})
	}
	return g
}

// read reads one source.
func (c *Catalog) read(ctx context.Context, spec SourceSpec) (res *source.Result) {
	if obs.Enabled() {
		var end func(error)
		ctx, end = obs.Start(ctx, obs.KindRefresh, sourceKind(spec))
		defer func() { end(nil) }()
	}
	return c.readSource(ctx, spec)
}

func (c *Catalog) readSource(ctx context.Context, spec SourceSpec) *source.Result {
	switch {
	case spec.Store:
		if c.opt.Store == nil {
			return &source.Result{Diagnostics: []skill.Diagnostic{{Severity: skill.Error, Code: CodeNoStore, Field: "store",
				Message: `a {"store": true} source is configured but there is no store: set "store" in the config, --db or LOADOUT_DB`}}}
		}
		sk, d := c.opt.Store.Skills(ctx)
		return &source.Result{Skills: sk, Diagnostics: d}
	case spec.Plugin != "":
		p, ok := c.opt.Plugins[spec.Plugin]
		if !ok {
			return &source.Result{Diagnostics: []skill.Diagnostic{{Severity: skill.Error, Code: CodeNoPlugin, Field: "plugin",
				Message: fmt.Sprintf("no plugin with id %q is loaded: add its folder to \"plugins\" in the config (loaded: %s)", spec.Plugin, strings.Join(c.opt.PluginOrder, ", "))}}}
		}
		sk, d := p.Skills(ctx)
		return c.gate(spec.key(), "plugin", &source.Result{Skills: sk, Diagnostics: d})
	case spec.Remote():
		p, ok := c.opt.Remotes[spec.RemoteID()]
		if !ok {
			return &source.Result{Diagnostics: []skill.Diagnostic{{Severity: skill.Error, Code: CodeNoRemote, Field: "git",
				Message: fmt.Sprintf("remote source %s is not open: its skills are read by `loadout serve` and the catalog commands, which keep its snapshot pinned in loadout.lock", spec.RemoteID())}}}
		}
		sk, d := p.Skills(ctx)
		return &source.Result{Skills: sk, Diagnostics: d}
	}
	return c.gate(spec.key(), "folder", source.ScanFolder(ctx, absRoot(spec.Root), c.opt.Scan))
}

func absRoot(root string) string {
	p := source.ExpandHome(root)
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// Agent returns an agent's loadout; GlobalID returns the global catalog.
func (c *Catalog) Agent(id string) (*Loadout, bool) {
	s := c.snap.Load()
	if id == GlobalID {
		return s.global, true
	}
	l, ok := s.agents[id]
	return l, ok
}

// Agents returns every agent's loadout in config order.
func (c *Catalog) Agents() []*Loadout { return c.snap.Load().order }

// Global returns the catalog of every configured source.
func (c *Catalog) Global() *Loadout { return c.snap.Load().global }

// AgentIDs lists the configured agent ids in order.
func (c *Catalog) AgentIDs() []string {
	var ids []string
	for _, l := range c.snap.Load().order {
		ids = append(ids, l.Spec.AgentID)
	}
	return ids
}

// Diagnostics returns every diagnostic: those added with AddDiagnostics,
// each source's once, then each agent's selection diagnostics.
func (c *Catalog) Diagnostics() []skill.Diagnostic {
	var out []skill.Diagnostic
	if x := c.extra.Load(); x != nil {
		out = append(out, *x...)
	}
	return append(out, c.snap.Load().diags...)
}

// Added returns the diagnostics recorded with AddDiagnostics.
func (c *Catalog) Added() []skill.Diagnostic {
	if x := c.extra.Load(); x != nil {
		return *x
	}
	return nil
}

// AddDiagnostics records problems found outside the catalog's sources
// (loading plugin manifests, opening the store) so they are reported with
// the rest. They survive reloads.
func (c *Catalog) AddDiagnostics(d []skill.Diagnostic) {
	if len(d) == 0 {
		return
	}
	c.extraMu.Lock()
	defer c.extraMu.Unlock()
	var all []skill.Diagnostic
	if x := c.extra.Load(); x != nil {
		all = append(all, *x...)
	}
	all = append(all, d...)
	c.extra.Store(&all)
}

// Entry is a skill as one agent has it. A catalog holds one per skill
// per agent (the global catalog included), so what few entries need is
// in x, allocated for those only.
type Entry struct {
	Skill *skill.Skill
	// Source is the index of the agent's skills entry the skill came from,
	// or -1 for a skill preloaded by path.
	Source int
	// Listed: in the reference listing. Inline: full body in the prompt.
	Listed, Inline bool
	// preloaded: added by the agent's preload list, after its sources.
	preloaded bool
	// The envelope, kept once rendered when nothing it holds can change
	// (the body is kept), as long as the catalog's envelope cache has
	// room for it; envUsed marks it loaded since the cache's clock hand
	// last passed (envcache.go).
	envUsed atomic.Bool
	env     atomic.Pointer[string]
	x       *entryExtra
}

// entryExtra is what only some entries have: an inline body, and the
// agent's diagnostics about the entry, by when build makes them:
// selection (inline-overlap, then same-name-sources when it is shadowed),
// the inline body, required tools.
type entryExtra struct {
	body               string
	selDiags           []skill.Diagnostic
	bodyDiag, toolDiag *skill.Diagnostic
}

// extra returns e.x, made on first use (while the entry is built).
func (e *Entry) extra() *entryExtra {
	if e.x == nil {
		e.x = &entryExtra{}
	}
	return e.x
}

// inlineBody is the body an inline entry puts in the prompt.
func (e *Entry) inlineBody() string {
	if e.x == nil {
		return ""
	}
	return e.x.body
}

// hasDiags reports whether the entry has diagnostics of its own.
func (e *Entry) hasDiags() bool {
	return e.x != nil && (len(e.x.selDiags) > 0 || e.x.bodyDiag != nil || e.x.toolDiag != nil)
}

// Loadout is one agent's set of skills. It is immutable.
type Loadout struct {
	Spec AgentSpec
	// entries in prompt order: sources in config order, names sorted
	// within a source, preloads by path last. Every selected skill,
	// including ones shadowed by an earlier source of the same name.
	entries []*Entry
	byName  map[string]*Entry
	names   []string
	// diagnostics: the scans of this agent's roots plus its own.
	scanDiags  []skill.Diagnostic
	agentDiags []skill.Diagnostic
	// The parts agentDiags is assembled from (see assemble), besides the
	// entries' own: each source's name collisions, and the preloads'.
	srcDiags     [][]skill.Diagnostic
	preloadDiags []skill.Diagnostic
	// shadowed are the names selected more than once (from two sources,
	// or twice from one); a change to one of them rebuilds the loadout.
	shadowed map[string]bool
	// blocked are the skills a block leaves out, by name (blocks.go); a
	// change to one of them rebuilds the loadout.
	blocked map[string]BlockedSkill

	envs *envCache // the catalog's

	searchOnce sync.Once
	search     atomic.Pointer[searchIndex]
	// dom are the listing's domains (prompt.go).
	domOnce sync.Once
	dom     *render.Domains
	// base, when set, is the index to patch rather than build (see
	// indexBase); the first search takes it.
	base *indexBase
	// share is the catalog's: a loadout of the same skills takes another's
	// index rather than build its own (searchshare.go).
	share *indexShare
}

// Entries returns every selected skill in prompt order.
func (l *Loadout) Entries() []*Entry { return l.entries }

// Names returns the names the agent can load, sorted.
func (l *Loadout) Names() []string { return l.names }

// Lookup finds the skill the agent gets for a name: the first source in
// config order wins.
func (l *Loadout) Lookup(name string) (*Entry, bool) {
	e, ok := l.byName[name]
	return e, ok
}

// Diagnostics returns the diagnostics of the agent's sources and of its
// selection.
func (l *Loadout) Diagnostics() []skill.Diagnostic {
	out := make([]skill.Diagnostic, 0, len(l.scanDiags)+len(l.agentDiags))
	out = append(out, l.scanDiags...)
	return append(out, l.agentDiags...)
}

// listingDefaults fills the listing settings spec leaves unset (budget,
// format, token budget) with the catalog's.
func (c *Catalog) listingDefaults(spec *AgentSpec) {
	if spec.Budget == 0 {
		spec.Budget = c.opt.Budget
	}
	if spec.Format == "" {
		spec.Format = c.opt.Format
	}
	if spec.BudgetTokens == 0 {
		spec.BudgetTokens = c.opt.BudgetTokens
	}
}

func (c *Catalog) build(spec AgentSpec, fetch func(SourceSpec) *source.Result) *Loadout {
	l := &Loadout{Spec: spec, byName: map[string]*Entry{}, srcDiags: make([][]skill.Diagnostic, len(spec.Skills)), envs: &c.envs, share: &c.share}
	c.listingDefaults(&l.Spec)
	seenRoot := map[string]bool{}
	// add registers e; a name selected before is reported and returned.
	// byName holds the entry of the source that first selected each name.
	add := func(e *Entry) *skill.Diagnostic {
		if b := c.blockOf(spec, e.Source, e.Skill); b != nil {
			l.noteBlocked(e.Skill, b, e.Source)
			return nil
		}
		l.entries = append(l.entries, e)
		name := e.Skill.Name
		if first, ok := l.byName[name]; ok {
			l.shadow(name)
			return &skill.Diagnostic{Severity: skill.Warning, Code: CodeSameNameSources, Skill: name, Path: e.Skill.Location, Agent: spec.AgentID,
				Message: fmt.Sprintf("skill %q is selected from more than one source; both are in the prompt, and %s wins activation by name", name, first.Skill.Location),
				Winner:  first.Skill.Location, Loser: e.Skill.Location}
		}
		l.byName[name] = e
		return nil
	}
	for i, src := range spec.Skills {
		key := src.key()
		res := fetch(src)
		if !seenRoot[key] {
			seenRoot[key] = true
			// Shared with the source's result while it is the only
			// source (appendShared): at 50,000 skills with one finding
			// each at load, every copy was 3.6 MB.
			l.scanDiags = appendShared(l.scanDiags, res.Diagnostics)
		}
		if len(l.entries) == 0 && len(l.byName) == 0 {
			// Sized for the first source (most agents have one): a map
			// and a list grown by doubling to 50,000 skills hold the
			// last two sizes at once.
			l.byName = make(map[string]*Entry, len(res.Skills))
			l.entries = make([]*Entry, 0, len(res.Skills))
		}
		skills := append([]*skill.Skill(nil), res.Skills...)
		if src.Store {
			var pd []skill.Diagnostic
			skills, pd = c.pinned(spec.AgentID, skills)
			l.srcDiags[i] = append(l.srcDiags[i], pd...)
		}
		if !sort.SliceIsSorted(skills, func(a, b int) bool { return skills[a].Name < skills[b].Name }) {
			sort.SliceStable(skills, func(a, b int) bool { return skills[a].Name < skills[b].Name })
		}
		// A source may hold a name twice (a plugin, or two roots of a
		// store); only the first is selected, and the rest is reported.
		skills = dedupeNames(skills, func(winner, loser *skill.Skill) {
			l.shadow(winner.Name)
			l.srcDiags[i] = append(l.srcDiags[i], skill.Diagnostic{Severity: skill.Warning, Code: skill.CodeNameCollision, Skill: winner.Name, Path: loser.Location, Agent: spec.AgentID,
				Message: fmt.Sprintf("%s holds two skills named %q; the first is used", src, winner.Name), Winner: winner.Location, Loser: loser.Location})
		})
		for _, sk := range skills {
			e := c.entry(spec, i, sk)
			if e == nil {
				continue
			}
			if d := add(e); d != nil {
				e.extra().selDiags = append(e.extra().selDiags, *d)
			}
		}
	}
	c.preload(l, fetch, func(e *Entry) {
		e.preloaded = true
		if d := add(e); d != nil {
			l.preloadDiags = append(l.preloadDiags, *d)
		}
	}, func(d skill.Diagnostic) {
		d.Agent = spec.AgentID
		l.preloadDiags = append(l.preloadDiags, d)
	})
	for _, e := range l.entries {
		c.finish(spec, e)
	}
	l.names = make([]string, 0, len(l.byName))
	for name := range l.byName {
		l.names = append(l.names, name)
	}
	sort.Strings(l.names)
	l.assemble()
	return l
}

// shareGlobal makes the global loadout out of the only agent's, when the
// catalog is read once (Options.Once: check, list, prompt) and the agent
// selects every skill of the same sources in the same order with nothing
// of its own (no patterns, preloads, tools, collisions, nor any entry
// diagnostic): the global loadout would then hold entries equal to the
// agent's, one by one, and the same name map and list. It shares them
// rather than hold a second copy: at 50,000 skills about 5 MB, a tenth
// of what check and list keep (the --root agent of those commands is such
// an agent). A Reload shares again or builds; entries are never changed
// once built (patch makes new lists), so sharing them is safe. ok is false
// when the global loadout must be built.
func (c *Catalog) shareGlobal(agents []*Loadout, g AgentSpec) (*Loadout, bool) {
	if !c.opt.Once || c.opt.noShareGlobal || len(agents) != 1 {
		return nil, false
	}
	a := agents[0]
	if len(a.Spec.Preload) > 0 || len(g.Preload) > 0 || g.Tools != nil || len(a.Spec.Skills) != len(g.Skills) ||
		a.shadowed != nil || len(a.preloadDiags) > 0 || len(a.agentDiags) > 0 {
		return nil, false
	}
	for i, src := range a.Spec.Skills {
		all := src.Available == nil && src.Inline == nil || src.Inline == nil && slices.Equal(src.Available, []string{"*"})
		if !all || src.key() != g.Skills[i].key() || len(a.srcDiags[i]) > 0 || g.Skills[i].Available != nil || g.Skills[i].Inline != nil {
			return nil, false
		}
	}
	for _, e := range a.entries {
		if e.x != nil || e.preloaded || e.Inline || !e.Listed {
			return nil, false
		}
	}
	l := &Loadout{Spec: g, entries: a.entries, byName: a.byName, names: a.names, scanDiags: a.scanDiags, blocked: a.blocked,
		srcDiags: make([][]skill.Diagnostic, len(g.Skills)), envs: &c.envs, share: &c.share}
	c.listingDefaults(&l.Spec)
	l.assemble()
	return l, true
}

// entry is the entry source i of spec makes of sk, or nil when its
// patterns do not select it. Its selection diagnostics are set; finish
// does the rest.
func (c *Catalog) entry(spec AgentSpec, i int, sk *skill.Skill) *Entry {
	src := spec.Skills[i]
	avail, inline := src.Available, src.Inline
	if avail == nil && inline == nil {
		avail = []string{"*"}
	}
	inAvail, inInline := matchAny(avail, sk.Name), matchAny(inline, sk.Name)
	if !inAvail && !inInline {
		return nil
	}
	e := &Entry{Skill: sk, Source: i, Inline: inInline, Listed: !inInline}
	if inAvail && inInline {
		e.extra().selDiags = append(e.extra().selDiags, skill.Diagnostic{Severity: skill.Warning, Code: CodeInlineOverlap, Skill: sk.Name, Path: sk.Location, Agent: spec.AgentID,
			Field:   fmt.Sprintf("skills[%d]", i),
			Message: fmt.Sprintf("skill %q matches both available and inline patterns of skills[%d]; inline wins", sk.Name, i)})
	}
	return e
}

// finish reads an inline entry's body, and checks the tools its skill
// requires against the agent's.
func (c *Catalog) finish(spec AgentSpec, e *Entry) {
	if e.Inline {
		body, err := e.Skill.Body()
		if err != nil {
			e.extra().bodyDiag = &skill.Diagnostic{Severity: skill.Error, Code: skill.CodeReadError, Skill: e.Skill.Name, Path: e.Skill.Location, Agent: spec.AgentID,
				Message: fmt.Sprintf("cannot read the body of inline skill %q: %v; it is left out of the prompt", e.Skill.Name, err)}
			e.Inline = false
		} else {
			e.extra().body = strings.TrimSpace(body)
		}
	}
	if spec.Tools == nil {
		return
	}
	var missing []string
	for _, t := range e.Skill.Meta.RequiresTools {
		if !slices.Contains(spec.Tools, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		e.extra().toolDiag = &skill.Diagnostic{Severity: skill.Warning, Code: CodeToolsMissing, Skill: e.Skill.Name, Path: e.Skill.Location, Field: "requires-tools", Agent: spec.AgentID,
			Message: fmt.Sprintf("skill %q requires tools the agent does not list: %s; add them to the agent's tools or expect the skill to fail", e.Skill.Name, strings.Join(missing, ", "))}
	}
}

// shadow records that name is selected more than once.
func (l *Loadout) shadow(name string) {
	if l.shadowed == nil {
		l.shadowed = map[string]bool{}
	}
	l.shadowed[name] = true
}

// assemble puts the agent's diagnostics together in the order build makes
// them: for each source, its collisions and then its entries' selection
// diagnostics; the preloads'; the inline bodies'; the required tools'.
func (l *Loadout) assemble() {
	var out []skill.Diagnostic
	pos := 0
	for i := range l.Spec.Skills {
		out = append(out, l.srcDiags[i]...)
		for ; pos < len(l.entries) && !l.entries[pos].preloaded && l.entries[pos].Source == i; pos++ {
			if x := l.entries[pos].x; x != nil {
				out = append(out, x.selDiags...)
			}
		}
	}
	out = append(out, l.preloadDiags...)
	for _, e := range l.entries {
		if e.x != nil && e.x.bodyDiag != nil {
			out = append(out, *e.x.bodyDiag)
		}
	}
	for _, e := range l.entries {
		if e.x != nil && e.x.toolDiag != nil {
			out = append(out, *e.x.toolDiag)
		}
	}
	l.agentDiags = out
}

// preload adds the agent's preloaded skills as inline entries. A name is
// looked up among the skills of the agent's sources; a path (anything with
// a slash, or starting with ~ or .) is loaded as a skill folder, unless it
// is a relative path that is also the name of a skill in the sources
// (names may hold '/').
func (c *Catalog) preload(l *Loadout, fetch func(SourceSpec) *source.Result, add func(*Entry), report func(skill.Diagnostic)) {
	for i, p := range l.Spec.Preload {
		field := fmt.Sprintf("preload[%d]", i)
		if isPath(p) && !(relativeSlashPath(p) && hasSkillNamed(l, fetch, p)) {
			res := fetch(SourceSpec{Root: p})
			real, _ := filepath.EvalSymlinks(absRoot(p))
			var found *skill.Skill
			for _, sk := range res.Skills {
				if sk.Dir == real {
					found = sk
				}
			}
			if found == nil {
				for _, d := range res.Diagnostics {
					report(d)
				}
				report(skill.Diagnostic{Severity: skill.Error, Code: CodePreloadMissing, Field: field, Path: absRoot(p),
					Message: fmt.Sprintf("preload %q is not a loadable skill folder (a folder holding SKILL.md with a description)", p)})
				continue
			}
			if e, ok := l.byName[found.Name]; ok && e.Skill.Dir == found.Dir {
				e.Inline, e.Listed = true, false
				continue
			}
			add(&Entry{Skill: found, Source: -1, Inline: true})
			continue
		}
		if e, ok := l.byName[p]; ok {
			e.Inline, e.Listed = true, false
			continue
		}
		// Not selected by any pattern: look in the agent's sources.
		var found *Entry
		for si, src := range l.Spec.Skills {
			for _, sk := range fetch(src).Skills {
				if sk.Name == p {
					found = &Entry{Skill: sk, Source: si, Inline: true}
					break
				}
			}
			if found != nil {
				break
			}
		}
		if found == nil {
			report(skill.Diagnostic{Severity: skill.Error, Code: CodePreloadMissing, Field: field, Skill: p,
				Message: fmt.Sprintf("preload %q names no skill in the agent's sources%s", p, suggestText(closest(p, allNames(l, fetch))))})
			continue
		}
		add(found)
	}
}

func allNames(l *Loadout, fetch func(SourceSpec) *source.Result) []string {
	var names []string
	for _, src := range l.Spec.Skills {
		for _, sk := range fetch(src).Skills {
			names = append(names, sk.Name)
		}
	}
	return names
}

func suggestText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, ", ") + "?"
}

// relativeSlashPath reports whether p, which isPath, could also be a skill
// name: names may hold '/' (ui-toolkit/web), so only a path that starts
// with /, ~ or . is a path for certain.
func relativeSlashPath(p string) bool {
	return !filepath.IsAbs(p) && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, ".")
}

// hasSkillNamed reports whether one of the agent's sources has a skill
// named name; a preload such as "ui-toolkit/web" is then that skill, not a
// folder path.
func hasSkillNamed(l *Loadout, fetch func(SourceSpec) *source.Result, name string) bool {
	if _, ok := l.byName[name]; ok {
		return true
	}
	for _, src := range l.Spec.Skills {
		for _, sk := range fetch(src).Skills {
			if sk.Name == name {
				return true
			}
		}
	}
	return false
}

func isPath(p string) bool {
	return strings.ContainsRune(p, '/') || strings.HasPrefix(p, "~") || strings.HasPrefix(p, ".") || strings.ContainsRune(p, os.PathSeparator)
}

// Diagnostic codes of the catalog.
const (
	CodeInlineOverlap   = "inline-overlap"
	CodeSameNameSources = "same-name-sources"
	CodeToolsMissing    = "requires-tools-missing"
	CodePreloadMissing  = "preload-missing"
	CodeBudgetShortened = "budget-shortened"
	CodeBudgetOmitted   = "budget-omitted"
	CodeBudgetNameOnly  = "budget-name-only"
	CodeBudgetTooSmall  = "budget-too-small"
	CodeNoStore         = "store-missing"
	CodeNoPlugin        = "plugin-missing"
	CodeNoRemote        = "remote-missing"
)

// dedupeNames keeps the first skill of each name (the input is sorted by
// name, stably) and calls lost for the others.
func dedupeNames(skills []*skill.Skill, lost func(winner, loser *skill.Skill)) []*skill.Skill {
	out := skills[:0]
	for _, sk := range skills {
		if n := len(out); n > 0 && out[n-1].Name == sk.Name {
			lost(out[n-1], sk)
			continue
		}
		out = append(out, sk)
	}
	return out
}

// Reconfigure replaces the agent specs and the catalog's options (a config
// file reloaded while serving) and rebuilds every loadout from them. The
// specs are checked as New checks them, and on an error nothing changes.
// The scan cache is kept (when opt has none), so unchanged SKILL.md files
// are not parsed again; diagnostics recorded with AddDiagnostics are kept.
func (c *Catalog) Reconfigure(ctx context.Context, agents []AgentSpec, opt Options) error {
	seen := map[string]bool{}
	for i := range agents {
		if err := agents[i].Validate(); err != nil {
			return err
		}
		if seen[agents[i].AgentID] {
			return &SpecError{Agent: agents[i].AgentID, Field: "agentId", Msg: "is used by two agents: agent ids must be unique"}
		}
		seen[agents[i].AgentID] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if opt.Scan.Cache == nil {
		opt.Scan.Cache = c.opt.Scan.Cache
	}
	if opt.Scan.Bodies == nil {
		opt.Scan.Bodies = c.opt.Scan.Bodies
	}
	c.specs, c.opt = agents, opt
	c.apply(ctx, nil, map[string]*source.Result{}, nil)
	return nil
}
