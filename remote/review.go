package remote

import (
	"context"
	"strings"

	"github.com/loadout/loadout/skill"
)

// PendingChange is a source's change that awaits review, as Pending
// reports it: the lock's entry, and where the two snapshots are on disk
// so that each changed skill can be compared file by file.
type PendingChange struct {
	Pending
	// URL is the source's location, without credentials.
	URL string
	// Served and Proposed are the skills of the snapshot served now and of
	// the one the change would serve, by name; Proposed is nil when that
	// snapshot is no longer in the cache (approving fetches it again and
	// checks its digest).
	Served, Proposed map[string]*skill.Skill
}

// PendingChanges lists the changes that await review, sources in id
// order, rejected ones included (marked).
func (m *Manager) PendingChanges(ctx context.Context) ([]PendingChange, error) {
	if err := m.rereadLock(); err != nil {
		return nil, err
	}
	m.lockMu.Lock()
	pend := append([]Pending(nil), m.lock.Pending...)
	m.lockMu.Unlock()
	out := make([]PendingChange, 0, len(pend))
	for _, p := range pend {
		i, ok := m.byID[p.To.ID]
		if !ok {
			continue // a source no longer in the config: the next sync drops it
		}
		pc := PendingChange{Pending: p, URL: m.specs[i].URL()}
		if cur, _ := m.current(p.To.ID); cur != nil {
			pc.Served = byName(cur.skills)
		}
		for _, name := range m.candidates(p.To.ID, p.To.Revision) {
			snap, ok := m.open(ctx, m.specs[i], p.To.Revision, name)
			if !ok {
				continue
			}
			snap.lease.release()
			if snap.digest == p.To.Digest {
				pc.Proposed = byName(snap.skills)
				break
			}
		}
		out = append(out, pc)
	}
	return out, nil
}

func byName(skills []*skill.Skill) map[string]*skill.Skill {
	out := make(map[string]*skill.Skill, len(skills))
	for _, sk := range skills {
		out[sk.Name] = sk
	}
	return out
}

// Approve moves source id's pin to its pending change, and serves it. rev,
// when not "", must be the change's revision (what the reviewer saw). It
// is refused, and the change dropped, when the pin has moved since the
// change was recorded; and when the snapshot fetched again no longer has
// the digest that was reviewed. The safety gate runs again, with the
// policy of now.
func (m *Manager) Approve(ctx context.Context, id, rev string) (ch Change) {
	i, ok := m.byID[id]
	if !ok {
		return Change{ID: id, Err: Errorf(id, CodeInvalid, "no remote source has this id; the config's are: %s", strings.Join(m.ids(), ", "))}
	}
	s := m.specs[i]
	mu := m.syncMu[id]
	mu.Lock()
	defer mu.Unlock()
	ch = Change{ID: id, URL: s.URL()}
	if err := m.rereadLock(); err != nil {
		ch.Err = err
		return ch
	}
	m.lockMu.Lock()
	pp := m.lock.PendingFor(id)
	var p Pending
	if pp != nil {
		p = *pp
	}
	m.lockMu.Unlock()
	if pp == nil || p.Rejected != nil {
		ch.Err = Errorf(id, CodeNoPending, "no change of this source awaits review: run `loadout sync %s` to record one", id)
		return ch
	}
	ch.From, ch.To, ch.FromDigest, ch.ToDigest = p.Base, p.To.Revision, p.BaseDigest, p.To.Digest
	ch.Added, ch.Removed, ch.Changed = p.Added, p.Removed, p.Changed
	if rev != "" && rev != p.To.Revision {
		ch.Err = Errorf(id, CodeConflict, "the change awaiting review is now %s, not %s: review it again", shortRev(p.To.Revision), shortRev(rev))
		return ch
	}
	old := m.Pin(id)
	if oldRev, oldDigest := pinRev(old), pinDigest(old); oldRev != p.Base || oldDigest != p.BaseDigest {
		m.updateLock(func(l *Lock) error { l.DropPending(id); return nil })
		ch.Err = Errorf(id, CodeConflict, "the pin moved from %s to %s after this change was recorded; the change is dropped: run `loadout sync %s` to record a new one", shortRev(p.Base), shortRev(oldRev), id)
		return ch
	}
	snap, err := m.obtain(ctx, s, nil, p.To.Revision, p.To.Digest, false)
	if err != nil {
		ch.Err = err
		return ch
	}
	keep := false
	defer func() {
		if !keep {
			m.drop(id, snap)
		}
	}()
	if snap.digest != p.To.Digest {
		ch.Err = Errorf(id, CodeConflict, "the snapshot at %s fetched again has the digest %s, not the reviewed %s: run `loadout sync %s` to record it for review", shortRev(p.To.Revision), snap.digest, p.To.Digest, id)
		return ch
	}
	if m.opt.Gate != nil {
		if refused := m.opt.Gate(snap.skills); len(refused) > 0 {
			ch.Err = Errorf(id, CodeRefused, "the reviewed snapshot at %s is refused by the safety checks now (%s: %s); the pin stays", shortRev(p.To.Revision), refused[0].Skill, refused[0].Code)
			ch.Refused = refused
			return ch
		}
	}
	pin := p.To
	pin.Synced = m.opt.Now().UTC()
	err = m.updateLock(func(l *Lock) error {
		// The pin may have moved while the snapshot was fetched.
		if cur := l.Get(id); pinRev(cur) != p.Base || pinDigest(cur) != p.BaseDigest {
			return Errorf(id, CodeConflict, "the pin moved from %s while the change was approved: review it again", shortRev(p.Base))
		}
		l.Put(pin)
		l.DropPending(id)
		return nil
	})
	if err != nil {
		ch.Err = err
		return ch
	}
	m.swap(id, snap)
	keep = true
	m.clearStale(id)
	ch.Moved = true
	ch.Digests = map[string]string{}
	for _, n := range append(append([]string{}, p.Added...), p.Changed...) {
		ch.Digests[n] = pin.Skills[n]
	}
	d := diag(s, skill.Info, CodeSynced, "approved "+ch.what())
	m.mu.Lock()
	m.synced[id] = &d
	m.mu.Unlock()
	m.gc(id)
	return ch
}

// Reject marks source id's pending change rejected, with note: the pin
// stays, and a sync that finds the same snapshot again does not queue it
// again (one with other content does).
func (m *Manager) Reject(ctx context.Context, id, rev, note string) error {
	if _, ok := m.byID[id]; !ok {
		return Errorf(id, CodeInvalid, "no remote source has this id; the config's are: %s", strings.Join(m.ids(), ", "))
	}
	mu := m.syncMu[id]
	mu.Lock()
	defer mu.Unlock()
	err := m.updateLock(func(l *Lock) error {
		p := l.PendingFor(id)
		if p == nil || p.Rejected != nil {
			return Errorf(id, CodeNoPending, "no change of this source awaits review")
		}
		if rev != "" && rev != p.To.Revision {
			return Errorf(id, CodeConflict, "the change awaiting review is now %s, not %s: review it again", shortRev(p.To.Revision), shortRev(rev))
		}
		now := m.opt.Now().UTC()
		p.Rejected, p.Note = &now, note
		return nil
	})
	if err == nil {
		m.gc(id)
	}
	return err
}

func pinRev(p *Pin) string {
	if p == nil {
		return ""
	}
	return p.Revision
}

func pinDigest(p *Pin) string {
	if p == nil {
		return ""
	}
	return p.Digest
}
