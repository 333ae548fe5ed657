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
	at      map[atKey]built // SkillAt's, by name and version
}

type atKey struct {
	name    string
	version int
}

// built is a skill as Provider built it from one record.
type built struct {
	// version, published, withdrawn, digest and updated are the row's
	// (its latest version), whatever version sk serves.
	version, published int
	withdrawn          bool
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
	var drafted []*Record
	each := func(rec *Record) error {
		if !rec.Enabled {
			return nil
		}
		if b, ok := prev[rec.Name]; ok && b.same(rec.Version, rec.Published, rec.Withdrawn, rec.Digest, rec.UpdatedAt, rec.Source, rec.Provenance) {
			next[rec.Name] = b
		} else if served(rec) {
			// The published version is read after the walk: a read
			// inside it would need a second connection.
			r := *rec
			r.Content = nil
			drafted = append(drafted, &r)
			return nil
		} else {
			next[rec.Name] = p.build(ctx, prev, rec)
		}
		names = append(names, rec.Name)
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
	for _, rec := range drafted {
		if err != nil {
			break
		}
		next[rec.Name] = p.build(ctx, prev, rec)
		names = append(names, rec.Name)
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
		if b, ok := prev[s.Name]; ok && b.same(s.Version, s.Published, s.Withdrawn, s.Digest, s.UpdatedAt, s.Source, s.Provenance) {
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
			next[name] = p.build(ctx, prev, rec)
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
	b := p.build(ctx, p.built, rec)
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

// same reports whether b was built from a row in this state.
func (b built) same(version, published int, withdrawn bool, digest string, updated time.Time, source, provenance string) bool {
	return b.version == version && b.published == published && b.withdrawn == withdrawn && b.digest == digest &&
		b.updated.Equal(updated) && b.source == source && b.provenance == provenance
}

// served reports whether rec's row serves another version than its latest
// (a draft awaits review), or none (nothing published yet, or withdrawn).
func served(rec *Record) bool {
	return rec.Published != rec.Version && rec.Published > 0 && !rec.Withdrawn
}

// build returns the skill of rec, the one in have when it was built from
// the same row. Agents are served the published version: when a draft is
// newer, its record is read at that version. A withdrawn skill, or one
// with nothing published, is served to no one (sk nil).
func (p *Provider) build(ctx context.Context, have map[string]built, rec *Record) built {
	if b, ok := have[rec.Name]; ok && b.same(rec.Version, rec.Published, rec.Withdrawn, rec.Digest, rec.UpdatedAt, rec.Source, rec.Provenance) {
		return b
	}
	b := built{version: rec.Version, published: rec.Published, withdrawn: rec.Withdrawn, digest: rec.Digest,
		updated: rec.UpdatedAt, source: rec.Source, provenance: rec.Provenance}
	if rec.Withdrawn || rec.Published == 0 && rec.Version > 0 && hasPublished(p.s) {
		return b
	}
	pub := rec
	if served(rec) {
		_, r, err := p.s.Bundle(ctx, rec.Name, rec.Published)
		if err != nil {
			b.diags = []skill.Diagnostic{{Severity: skill.Error, Code: skill.CodeReadError, Skill: rec.Name, Field: "store",
				Message: fmt.Sprintf("cannot read the published version %d of %q: %v", rec.Published, rec.Name, err)}}
			return b
		}
		pub = r
	}
	b.sk, b.diags = skillOf(p.s, pub, p.cache())
	return b
}

// hasPublished reports whether s keeps a published version (Drafts); in
// a store that does not, Published is always 0 and the latest version is
// served.
func hasPublished(s Store) bool {
	_, ok := s.(Drafts)
	return ok
}

// SkillAt returns the skill called name at an exact version (0: the
// latest), for an agent pinned to it (catalog.VersionProvider). A
// withdrawn skill is served, so existing pins keep working; a disabled
// one, or a version that does not exist, is not (nil). The skill is built
// once per version and digest, so the catalog sees the same value while
// the pin holds.
func (p *Provider) SkillAt(ctx context.Context, name string, version int) (*skill.Skill, []skill.Diagnostic, error) {
	var rec *Record
	var err error
	if version == 0 {
		rec, err = p.s.Get(ctx, name)
	} else {
		_, rec, err = p.s.Bundle(ctx, name, version)
	}
	if ErrorCode(err) == NotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !rec.Enabled {
		return nil, nil, nil
	}
	k := atKey{rec.Name, rec.Version}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.at[k]; ok && b.digest == rec.Digest {
		return b.sk, b.diags, nil
	}
	sk, diags := skillOf(p.s, rec, p.cache())
	if p.at == nil || len(p.at) >= maxPinned {
		p.at = map[atKey]built{}
	}
	p.at[k] = built{digest: rec.Digest, sk: sk, diags: diags}
	return sk, diags, nil
}

// maxPinned bounds the skills SkillAt keeps; past it, it starts afresh.
const maxPinned = 4096
