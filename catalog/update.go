package catalog

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// SkillProvider is a Provider that can also read one skill by name, so
// that a change to one skill (a write to the store) costs the catalog one
// read instead of a read of every skill (see RefreshStored). The store's
// provider (store.Provider) is one.
type SkillProvider interface {
	Provider
	// Skill returns the skill called name as Skills would include it, or
	// nil when Skills would not include it (there is none, or it is
	// disabled), with that skill's diagnostics. err is a failure to read;
	// the catalog then reads the whole provider again.
	Skill(ctx context.Context, name string) (*skill.Skill, []skill.Diagnostic, error)
}

// RefreshStored brings the catalog up to date after the stored skills of
// these names changed (written, deleted, enabled or disabled). When the
// store's provider is a SkillProvider, only those skills are read again;
// otherwise (or with no names, or when the last read of the store failed)
// the whole store is. Either way only the loadouts that hold the store
// are touched, and in them only the entries of those names, unless a
// change needs more (a name selected from two sources, or an agent with
// preloads): then those loadouts are built again.
func (c *Catalog) RefreshStored(ctx context.Context, names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.snap.Load()
	keep := maps.Clone(prev.results)
	changed := map[string]map[string]*skill.Skill{}
	const key = "store"
	old, ok := keep[key]
	if !ok {
		return // no agent reads the store, and there is none
	}
	sp, isSP := c.opt.Store.(SkillProvider)
	if next, ch, ok := readStored(ctx, sp, old, names); isSP && ok {
		keep[key], changed[key] = next, ch
	} else {
		delete(keep, key) // read again, and compared
	}
	c.apply(ctx, prev, keep, changed)
}

// readStored reads the skills of these names from sp and returns old with
// them replaced, and which changed. ok is false when the whole store must
// be read instead.
func readStored(ctx context.Context, sp SkillProvider, old *source.Result, names []string) (*source.Result, map[string]*skill.Skill, bool) {
	if sp == nil || len(names) == 0 {
		return nil, nil, false
	}
	for _, d := range old.Diagnostics {
		if d.Skill == "" {
			return nil, nil, false // a problem with the whole store (it could not be read)
		}
	}
	next := &source.Result{Skills: slices.Clone(old.Skills), Diagnostics: old.Diagnostics}
	changed := map[string]*skill.Skill{}
	for _, name := range names {
		if _, done := changed[name]; done {
			continue
		}
		sk, diags, err := sp.Skill(ctx, name)
		if err != nil || sk != nil && sk.Name != name {
			return nil, nil, false
		}
		at, n := -1, 0
		for i, s := range next.Skills {
			if s.Name == name {
				at, n = i, n+1
			}
		}
		if n > 1 {
			return nil, nil, false // the provider holds the name twice: build from scratch
		}
		var was *skill.Skill
		if at >= 0 {
			was = next.Skills[at]
		}
		sameDiags := slices.Equal(diags, skillDiags(old.Diagnostics, name))
		if sk == was && sameDiags {
			continue // unchanged
		}
		switch {
		case at >= 0 && sk != nil:
			next.Skills[at] = sk
		case at >= 0:
			next.Skills = slices.Delete(next.Skills, at, at+1)
		case sk != nil:
			i := sort.Search(len(next.Skills), func(i int) bool { return next.Skills[i].Name >= name })
			next.Skills = slices.Insert(next.Skills, i, sk)
		}
		if !sameDiags {
			var ds []skill.Diagnostic
			for _, d := range next.Diagnostics {
				if d.Skill != name {
					ds = append(ds, d)
				}
			}
			next.Diagnostics = append(ds, diags...)
		}
		changed[name] = sk
	}
	return next, changed, true
}

func skillDiags(ds []skill.Diagnostic, name string) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, d := range ds {
		if d.Skill == name {
			out = append(out, d)
		}
	}
	return out
}

// sourcesOf lists the sources spec reads, in the order build reads them:
// its skills entries, then the folders of its preloads by path.
func sourcesOf(spec AgentSpec) []SourceSpec {
	out := slices.Clone(spec.Skills)
	for _, p := range spec.Preload {
		if isPath(p) {
			out = append(out, SourceSpec{Root: p})
		}
	}
	return out
}

// apply builds the next snapshot and stores it, unless nothing changed.
// results holds the sources already read (the others are read now, and
// compared with prev's); changed says, for a source whose result changed,
// which of its skills changed, by name (the new skill, nil when gone).
// A source whose result changed but is not in changed has changed in ways
// not known, and every loadout reading it is built again. With no prev,
// everything is built.
func (c *Catalog) apply(ctx context.Context, prev *snapshot, results map[string]*source.Result, changed map[string]map[string]*skill.Skill) {
	ctx, end := obs.Start(ctx, obs.KindRefresh, OpRefresh)
	defer end(nil)
	if changed == nil {
		changed = map[string]map[string]*skill.Skill{}
	}
	c.ctx, c.curPins = ctx, c.pinsOf(ctx)
	defer func() { c.ctx = nil }()
	var order []SourceSpec
	seen := map[string]bool{}
	for _, spec := range c.specs {
		for _, src := range sourcesOf(spec) {
			if key := src.key(); !seen[key] {
				seen[key] = true
				order = append(order, src)
			}
		}
	}
	global := c.globalSpec(order)
	for _, src := range global.Skills {
		if key := src.key(); !seen[key] {
			seen[key] = true
			order = append(order, src)
		}
	}
	// Read what is not known, and find what changed.
	dirty := map[string]bool{} // sources whose result is another value than prev's
	for _, src := range order {
		key := src.key()
		res, ok := results[key]
		if !ok {
			res = c.read(ctx, src)
			results[key] = res
			if prev != nil {
				if was, ok := prev.results[key]; ok {
					if ch, ok := diffResults(was, res); ok {
						changed[key] = ch
					}
				}
			}
		}
		// A source with changes named but the same result: its skills'
		// blocks changed (SetBlocks).
		if prev == nil || prev.results[key] != res || len(changed[key]) > 0 {
			dirty[key] = true
		}
	}
	for key := range results {
		if !seen[key] {
			delete(results, key) // a source no agent reads any more
		}
	}
	if prev != nil {
		quiet := true
		for key := range dirty {
			if ch, known := changed[key]; !known || len(ch) > 0 || !slices.Equal(prev.results[key].Diagnostics, results[key].Diagnostics) {
				quiet = false
				break
			}
		}
		for agent, pins := range c.curPins {
			if !samePins(pins, prev.pins[agent]) {
				quiet = false
			}
		}
		for agent := range prev.pins {
			if _, ok := c.curPins[agent]; !ok {
				quiet = false
			}
		}
		if quiet {
			return // nothing changed: keep the snapshot (and its caches)
		}
	}
	fetch := func(src SourceSpec) *source.Result {
		if r, ok := results[src.key()]; ok {
			return r
		}
		// Only a source read above can be asked for; read it anyway
		// rather than fail.
		r := c.read(ctx, src)
		results[src.key()] = r
		return r
	}
	next := &snapshot{agents: map[string]*Loadout{}, results: results, pins: c.curPins}
	loadout := func(spec AgentSpec, was *Loadout) *Loadout {
		if was == nil {
			return c.build(spec, fetch)
		}
		if prev != nil && (len(c.curPins[spec.AgentID]) > 0 || len(prev.pins[spec.AgentID]) > 0) {
			// A pinned agent's store skills are not the source's: built
			// again, never patched.
			if !samePins(c.curPins[spec.AgentID], prev.pins[spec.AgentID]) || dirty["store"] {
				return c.build(spec, fetch)
			}
		}
		touched := false
		for _, src := range sourcesOf(spec) {
			if dirty[src.key()] {
				touched = true
				break
			}
		}
		if !touched {
			return was
		}
		if l, ok := c.patch(was, fetch, dirty, changed); ok {
			return l
		}
		return c.build(spec, fetch)
	}
	for i, spec := range c.specs {
		var was *Loadout
		if prev != nil {
			was = prev.order[i]
		}
		l := loadout(spec, was)
		next.agents[spec.AgentID] = l
		next.order = append(next.order, l)
	}
	var was *Loadout
	if prev != nil {
		was = prev.global
	}
	if l, ok := c.shareGlobal(next.order, global); ok {
		next.global = l
	} else {
		next.global = loadout(global, was)
	}
	for _, src := range order {
		next.diags = appendShared(next.diags, results[src.key()].Diagnostics)
	}
	for _, l := range next.order {
		next.diags = append(next.diags, l.agentDiags...)
	}
	next.diags = append(next.diags, next.global.agentDiags...)
	c.snap.Store(next)
	c.gen.Add(1)
}

// diffResults says which skills differ between two reads of one source, by
// name: the new skill, or nil when it is gone. Unchanged skills are the
// same values (store.Provider and the folder cache keep them). ok is false
// when a name is held twice, which the entries of a loadout cannot be
// patched for.
func diffResults(was, now *source.Result) (map[string]*skill.Skill, bool) {
	byName := func(r *source.Result) (map[string]*skill.Skill, bool) {
		m := make(map[string]*skill.Skill, len(r.Skills))
		for _, sk := range r.Skills {
			if _, dup := m[sk.Name]; dup {
				return nil, false
			}
			m[sk.Name] = sk
		}
		return m, true
	}
	a, ok := byName(was)
	if !ok {
		return nil, false
	}
	b, ok := byName(now)
	if !ok {
		return nil, false
	}
	ch := map[string]*skill.Skill{}
	for name, sk := range a {
		if b[name] != sk {
			ch[name] = b[name]
		}
	}
	for name, sk := range b {
		if _, ok := a[name]; !ok {
			ch[name] = sk
		}
	}
	return ch, true
}

// patch makes the loadout was would become after the changes: only the
// entries of the changed names are made again, the others are kept, and
// the work is a copy of the entry and name lists (plus a search per
// changed name). ok is false when the change needs the loadout built
// again: a source read twice by the agent, a change not known by name,
// preloads, or a changed name the agent selects from more than one source.
// A change that selects nothing here returns was itself.
func (c *Catalog) patch(was *Loadout, fetch func(SourceSpec) *source.Result, dirty map[string]bool, changed map[string]map[string]*skill.Skill) (*Loadout, bool) {
	spec := was.Spec
	if len(spec.Preload) > 0 {
		return nil, false
	}
	// Which of the agent's sources changed, and how.
	type srcChange struct {
		i     int
		names []string // sorted
		ch    map[string]*skill.Skill
	}
	var srcs []srcChange
	keys := map[string]bool{}
	var all []string
	for i, src := range spec.Skills {
		key := src.key()
		if keys[key] {
			return nil, false
		}
		keys[key] = true
		if !dirty[key] {
			continue
		}
		ch, known := changed[key]
		if !known {
			return nil, false
		}
		sc := srcChange{i: i, ch: ch}
		for name := range ch {
			if was.shadowed[name] {
				return nil, false
			}
			if b, ok := was.blocked[name]; ok && b.source != i {
				return nil, false // blocked in another of the agent's sources
			}
			sc.names = append(sc.names, name)
		}
		sort.Strings(sc.names)
		all = append(all, sc.names...)
		srcs = append(srcs, sc)
	}
	sort.Strings(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return nil, false // changed in two of the agent's sources
		}
	}
	l := &Loadout{Spec: spec, srcDiags: was.srcDiags, preloadDiags: was.preloadDiags, shadowed: was.shadowed, blocked: was.blocked, envs: was.envs, share: was.share}
	l.entries = make([]*Entry, 0, len(was.entries)+len(all))
	var removed, made []*Entry
	// The blocked skills: those of the changed names are as the blocks
	// say now (blocks.go).
	unblocked, blockedNow := 0, map[string]BlockedSkill{}
	for _, name := range all {
		if _, ok := was.blocked[name]; ok {
			unblocked++
		}
	}
	// Entries come by source, and by name within a source.
	bySource := func(from, i int, after bool) int {
		return from + sort.Search(len(was.entries)-from, func(j int) bool {
			if after {
				return was.entries[from+j].Source > i
			}
			return was.entries[from+j].Source >= i
		})
	}
	pos := 0
	for _, sc := range srcs {
		start := bySource(pos, sc.i, false)
		l.entries = append(l.entries, was.entries[pos:start]...)
		end := bySource(start, sc.i, true)
		seg := was.entries[start:end]
		at := 0
		for _, name := range sc.names {
			j := at + sort.Search(len(seg)-at, func(x int) bool { return seg[at+x].Skill.Name >= name })
			l.entries = append(l.entries, seg[at:j]...)
			at = j
			if at < len(seg) && seg[at].Skill.Name == name {
				if was.byName[name] != seg[at] {
					return nil, false
				}
				removed = append(removed, seg[at])
				at++
			} else if _, ok := was.byName[name]; ok {
				return nil, false // selected from another source
			}
			if sk := sc.ch[name]; sk != nil {
				if e := c.entry(spec, sc.i, sk); e != nil {
					if b := c.blockOf(spec, sc.i, sk); b != nil {
						blockedNow[name] = BlockedSkill{Skill: sk, Block: *b, source: sc.i}
						continue
					}
					c.finish(spec, e)
					l.entries = append(l.entries, e)
					made = append(made, e)
				}
			}
		}
		l.entries = append(l.entries, seg[at:]...)
		pos = end
	}
	l.entries = append(l.entries, was.entries[pos:]...)
	seenRoot := map[string]bool{}
	for _, src := range spec.Skills {
		if key := src.key(); !seenRoot[key] {
			seenRoot[key] = true
			l.scanDiags = appendShared(l.scanDiags, fetch(src).Diagnostics)
		}
	}
	if unblocked > 0 || len(blockedNow) > 0 {
		l.blocked = make(map[string]BlockedSkill, len(was.blocked)+len(blockedNow))
		maps.Copy(l.blocked, was.blocked)
		for _, name := range all {
			delete(l.blocked, name)
		}
		maps.Copy(l.blocked, blockedNow)
	} else if len(removed) == 0 && len(made) == 0 && sameDiags(l.scanDiags, was.scanDiags) {
		return was, true // none of the changes is selected here
	}
	l.byName = maps.Clone(was.byName)
	for _, e := range removed {
		delete(l.byName, e.Skill.Name)
	}
	for _, e := range made {
		l.byName[e.Skill.Name] = e
	}
	// The sorted names: the old ones less the changed, and the changed
	// that are selected now.
	l.names = make([]string, 0, len(was.names)+len(made))
	at := 0
	for _, name := range all {
		j := at + sort.Search(len(was.names)-at, func(x int) bool { return was.names[at+x] >= name })
		l.names = append(l.names, was.names[at:j]...)
		at = j
		if at < len(was.names) && was.names[at] == name {
			at++
		}
		if _, ok := l.byName[name]; ok {
			l.names = append(l.names, name)
		}
	}
	l.names = append(l.names, was.names[at:]...)
	if ix := was.search.Load(); ix != nil {
		l.base = &indexBase{ix: ix, removed: removed, made: made}
	}
	// The agent's diagnostics stay as they were unless an entry that
	// comes or goes has some.
	l.agentDiags = was.agentDiags
	for _, e := range slices.Concat(removed, made) {
		if e.hasDiags() {
			l.assemble()
			break
		}
	}
	return l, true
}

// appendShared is append(to, ds...), except that an empty to shares ds
// (capped, so a later append copies): a source's scan diagnostics are
// immutable, and at 10,000 stored skills with findings each patch of
// each agent copied thousands of them.
func appendShared(to, ds []skill.Diagnostic) []skill.Diagnostic {
	if len(to) == 0 {
		return ds[:len(ds):len(ds)]
	}
	return append(to, ds...)
}

// sameDiags is slices.Equal, at once when both share their elements.
func sameDiags(a, b []skill.Diagnostic) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}
