package store

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/loadout/loadout/skill"
)

// Provider serves a store's enabled skills to a catalog. It has the methods
// of catalog.Provider and catalog.SkillProvider (the store does not import
// the catalog): Skills for every skill, Skill for one, so that a write to
// one skill costs the catalog one read. It keeps the skills it built, so
// reading the whole store again parses only the skills whose version
// changed and returns the very same values for the others, which is how
// the catalog sees what changed. It is safe for concurrent use.
//
// The skills hold no bodies (see SkillOf): a load reads the SKILL.md of
// the skill's version through a cache of EntryCacheBytes shared by every
// skill of the Provider.
type Provider struct {
	// EntryCacheBytes bounds the SKILL.md texts kept for loads, in bytes:
	// 0 is DefaultEntryCacheBytes, a negative value keeps none (every load
	// reads the store). Set it before the first Skills or Skill.
	EntryCacheBytes int64

	s       Store
	once    sync.Once
	entries *entryCache
	mu      sync.Mutex
	built   map[string]built
}

// built is a skill as Provider built it from one record.
type built struct {
	version            int
	digest             string
	updated            time.Time
	source, provenance string
	sk                 *skill.Skill
	diags              []skill.Diagnostic
}

// NewProvider serves s's skills.
func NewProvider(s Store) *Provider { return &Provider{s: s, built: map[string]built{}} }

// MaxStampedReads bounds the skills Provider.Skills reads one by one, after
// the stamps of a Stamper say they changed; when more changed, it reads
// the whole store at once.
const MaxStampedReads = 256

// Skills returns every enabled skill, as Skills does. A failure to read the
// store is an error diagnostic (and no skills). Once it has read the store,
// a Stamper's stamps tell it which skills changed since, and only those
// are read again (up to MaxStampedReads of them).
func (p *Provider) Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
	p.mu.Lock()
	prev := p.built
	p.mu.Unlock()
	if st, ok := p.s.(Stamper); ok && len(prev) > 0 {
		if out, diags, ok := p.stamped(ctx, st, prev); ok {
			return out, diags
		}
	}
	next := map[string]built{}
	var names []string
	each := func(rec *Record) error {
		if rec.Enabled {
			next[rec.Name] = p.build(prev, rec)
			names = append(names, rec.Name)
		}
		return nil
	}
	var err error
	if w, ok := p.s.(Walker); ok {
		// One record's content at a time, not the whole store's.
		err = w.Walk(ctx, each)
	} else {
		var recs []*Record
		if recs, err = p.s.List(ctx); err == nil {
			for _, rec := range recs {
				each(rec)
			}
		}
	}
	if err != nil {
		return nil, []skill.Diagnostic{{Severity: skill.Error, Code: skill.CodeReadError, Field: "store",
			Message: fmt.Sprintf("cannot read the store: %v; stored skills are left out until it can be read", err)}}
	}
	// By name, bytewise, whatever the order the store gave.
	sort.Strings(names)
	var out []*skill.Skill
	var diags []skill.Diagnostic
	for _, name := range names {
		b := next[name]
		if b.sk != nil {
			out = append(out, b.sk)
		}
		diags = append(diags, b.diags...)
	}
	p.mu.Lock()
	p.built = next
	p.mu.Unlock()
	return out, diags
}

// stamped is Skills through the stamps: the skills whose stamp is the one
// they were built from are kept, the others read one by one. ok is false
// when the whole store should be read instead.
func (p *Provider) stamped(ctx context.Context, st Stamper, prev map[string]built) ([]*skill.Skill, []skill.Diagnostic, bool) {
	stamps, err := st.Stamps(ctx)
	if err != nil {
		return nil, nil, false
	}
	sort.Slice(stamps, func(i, j int) bool { return stamps[i].Name < stamps[j].Name })
	next := make(map[string]built, len(stamps))
	var stale []string
	for _, s := range stamps {
		if !s.Enabled {
			continue
		}
		if b, ok := prev[s.Name]; ok && b.version == s.Version && b.digest == s.Digest && b.updated.Equal(s.UpdatedAt) &&
			b.source == s.Source && b.provenance == s.Provenance {
			next[s.Name] = b
			continue
		}
		if stale = append(stale, s.Name); len(stale) > MaxStampedReads {
			return nil, nil, false
		}
	}
	for _, name := range stale {
		rec, err := p.s.Get(ctx, name)
		if ErrorCode(err) == NotFound {
			continue // deleted since the stamps were read
		}
		if err != nil {
			return nil, nil, false
		}
		if rec.Enabled {
			next[name] = p.build(prev, rec)
		}
	}
	var out []*skill.Skill
	var diags []skill.Diagnostic
	for _, s := range stamps {
		if b, ok := next[s.Name]; ok {
			if b.sk != nil {
				out = append(out, b.sk)
			}
			diags = append(diags, b.diags...)
		}
	}
	p.mu.Lock()
	p.built = next
	p.mu.Unlock()
	return out, diags, true
}

// Skill returns the skill called name as Skills would include it, or nil
// when Skills would not (no such skill, or disabled), with that skill's
// diagnostics. err is a failure to read the store.
func (p *Provider) Skill(ctx context.Context, name string) (*skill.Skill, []skill.Diagnostic, error) {
	rec, err := p.s.Get(ctx, name)
	if ErrorCode(err) == NotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !rec.Enabled {
		return nil, nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.build(p.built, rec)
	p.built[rec.Name] = b
	return b.sk, b.diags, nil
}

// EntryCache returns how many SKILL.md texts the load cache holds and
// their bytes.
func (p *Provider) EntryCache() (entries int, size int64) {
	if c := p.cache(); c != nil {
		return c.stats()
	}
	return 0, 0
}

func (p *Provider) cache() *entryCache {
	p.once.Do(func() {
		n := p.EntryCacheBytes
		if n == 0 {
			n = DefaultEntryCacheBytes
		}
		p.entries = newEntryCache(n)
	})
	return p.entries
}

// build returns the skill of rec, the one in have when it was built from
// the same version.
func (p *Provider) build(have map[string]built, rec *Record) built {
	if b, ok := have[rec.Name]; ok && b.version == rec.Version && b.digest == rec.Digest && b.updated.Equal(rec.UpdatedAt) &&
		b.source == rec.Source && b.provenance == rec.Provenance {
		return b
	}
	sk, diags := skillOf(p.s, rec, p.cache())
	return built{version: rec.Version, digest: rec.Digest, updated: rec.UpdatedAt, source: rec.Source, provenance: rec.Provenance, sk: sk, diags: diags}
}
