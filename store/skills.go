package store

import (
	"bytes"
	"context"
	"sync"

	"github.com/loadout/loadout/skill"
)

// Location returns the virtual location of a stored skill, "store://<name>".
func Location(name string) string { return "store://" + name }

// Skills turns the enabled stored skills into catalog skills, each at its
// published version (see Drafts). Each is a
// virtual skill at "store://<name>", with Origin{Kind: "store", Version,
// Provenance: "source: provenance"}, whose files are read through ReadFile
// at the record's version, so the bytes (and digests) a catalog snapshot
// serves never change under it, even after later updates. The body is not
// held in memory: see SkillOf. Diagnostics are the parser's warnings,
// named by skill.
func Skills(ctx context.Context, s Store) ([]*skill.Skill, []skill.Diagnostic, error) {
	recs, err := s.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []*skill.Skill
	var diags []skill.Diagnostic
	for _, rec := range recs {
		if !rec.Enabled {
			continue
		}
		if rec.Withdrawn || rec.Published == 0 && hasPublished(s) {
			continue // served to no one (see Provider.build)
		}
		if served(rec) {
			if _, rec, err = s.Bundle(ctx, rec.Name, rec.Published); err != nil {
				return nil, nil, err
			}
		}
		sk, ds := SkillOf(s, rec)
		diags = append(diags, ds...)
		if sk != nil {
			out = append(out, sk)
		}
	}
	return out, diags, nil
}

// SkillOf turns one record into a catalog skill, as Skills does. It returns
// nil (and an error diagnostic) when the content no longer parses, which
// Bundle.Check makes impossible for records written by a Store.
//
// Only the frontmatter is kept: the body (most of a SKILL.md) is read
// again when the skill is loaded, from the record's version, which never
// changes, so a load serves exactly the bytes of the version the catalog
// holds. A store of 200,000 skills would otherwise hold about 540 MB of
// bodies in every server (docs/scale.md).
func SkillOf(s Store, rec *Record) (*skill.Skill, []skill.Diagnostic) {
	return skillOf(s, rec, nil)
}

func skillOf(s Store, rec *Record, bodies *entryCache) (*skill.Skill, []skill.Diagnostic) {
	loc := Location(rec.Name)
	doc, ds, ok := skill.ParseHeader(rec.Content, loc+"/SKILL.md", rec.Name)
	for i := range ds {
		ds[i].Skill = rec.Name
	}
	if !ok {
		return nil, ds
	}
	files := make([]skill.File, len(rec.Files))
	copy(files, rec.Files)
	origin := &skill.Origin{Kind: "store", Version: rec.Version, Provenance: provenance(rec)}
	r := versionReader{s: s, name: rec.Name, version: rec.Version, digest: rec.Digest, entries: bodies}
	sk := skill.NewVirtual(doc, loc, files, origin, r)
	sk.VersionDigest = rec.Digest
	return sk, ds
}

// provenance is "source: provenance" ("import: deploy.zip"), or whichever
// of the two is set.
func provenance(rec *Record) string {
	switch {
	case rec.Provenance == "":
		return rec.Source
	case rec.Source == "":
		return rec.Provenance
	}
	return rec.Source + ": " + rec.Provenance
}

// versionReader reads one immutable version of a stored skill. Its
// SKILL.md goes through entries, when set.
type versionReader struct {
	s       Store
	name    string
	version int
	digest  string
	entries *entryCache
}

func (r versionReader) ReadFile(path string) ([]byte, error) {
	if path != "SKILL.md" || r.entries == nil {
		return r.s.ReadFile(context.Background(), r.name, r.version, path)
	}
	k := entryKey{r.name, r.version, r.digest}
	if data, ok := r.entries.get(k); ok {
		return bytes.Clone(data), nil
	}
	data, err := r.s.ReadFile(context.Background(), r.name, r.version, path)
	if err != nil {
		return nil, err
	}
	r.entries.put(k, bytes.Clone(data))
	return data, nil
}

// DefaultEntryCacheBytes bounds the SKILL.md texts a Provider keeps for
// loads of its skills (see Provider.EntryCacheBytes): about 10,000 skills of
// 3 KB, so the skills an agent uses are loaded without a database read
// while the catalog holds no bodies.
const DefaultEntryCacheBytes = 32 << 20

// entryCache holds the SKILL.md of stored skill versions, up to max bytes
// in all. A version's bytes never change, so an entry never goes stale; a
// skill deleted and created again starts from version 1 with other bytes,
// hence the digest in the key. Past max, entries picked at random (Go's map
// order) make room: no bookkeeping per read.
type entryCache struct {
	mu   sync.RWMutex
	max  int64
	size int64
	m    map[entryKey][]byte
}

type entryKey struct {
	name    string
	version int
	digest  string
}

func newEntryCache(max int64) *entryCache {
	if max <= 0 {
		return nil
	}
	return &entryCache{max: max, m: map[entryKey][]byte{}}
}

func (c *entryCache) get(k entryKey) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	data, ok := c.m[k]
	return data, ok
}

func (c *entryCache) put(k entryKey, data []byte) {
	n := int64(len(data))
	if n > c.max/4 {
		return // one text would push out a quarter of the others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	for old, d := range c.m {
		if c.size+n <= c.max {
			break
		}
		delete(c.m, old)
		c.size -= int64(len(d))
	}
	c.m[k] = data
	c.size += n
}

// stats returns the entries held and their bytes.
func (c *entryCache) stats() (entries int, size int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m), c.size
}
