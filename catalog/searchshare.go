package catalog

import (
	"sync"
	"weak"
)

// indexShare is a catalog's loadouts whose search index was built
// lately, so that a loadout of the same skills takes that index rather
// than build its own (twin): an agent that selects every skill and the
// global loadout have the same index, which at 50,000 skills is 25 MB
// kept and 55 MB of garbage to build. Loadouts are held weakly: an old
// snapshot's go with it.
type indexShare struct {
	mu     sync.Mutex
	recent []weak.Pointer[Loadout]
}

// maxShared bounds indexShare.recent: with more agents than this, an
// agent's twin may have dropped out and its index is built again (the
// same answers, more memory).
const maxShared = 16

// add records l, whose index is built, as the latest.
func (s *indexShare) add(l *Loadout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.recent[:0]
	for _, p := range s.recent {
		if o := p.Value(); o != nil && o != l {
			kept = append(kept, p)
		}
	}
	clear(s.recent[len(kept):])
	s.recent = append(kept, weak.Make(l))
	if n := len(s.recent); n > maxShared {
		s.recent = append(s.recent[:0], s.recent[n-maxShared:]...)
	}
}

// twin is the built index of another loadout of the same skills (the
// same names, each the same *skill.Skill), or nil. The index holds
// skills, not entries, so it serves either loadout alike.
func (l *Loadout) twin() *searchIndex {
	if l.share == nil {
		return nil
	}
	l.share.mu.Lock()
	cands := make([]*Loadout, 0, len(l.share.recent))
	for _, p := range l.share.recent {
		if o := p.Value(); o != nil && o != l && len(o.names) == len(l.names) {
			cands = append(cands, o)
		}
	}
	l.share.mu.Unlock()
	for _, o := range cands {
		if ix := o.search.Load(); ix != nil && sameSkills(l, o) {
			return ix
		}
	}
	return nil
}

// sameSkills reports whether a and b select the same skills by name.
func sameSkills(a, b *Loadout) bool {
	if len(a.names) != len(b.names) {
		return false
	}
	for i, name := range a.names {
		if b.names[i] != name {
			return false
		}
		ea, eb := a.byName[name], b.byName[name]
		if ea == nil || eb == nil || ea.Skill != eb.Skill {
			return false
		}
	}
	return true
}
