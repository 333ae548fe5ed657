package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// Options configure a Manager.
type Options struct {
	// Cache is the folder snapshots are kept in, one folder per source and
	// revision (Cache/ID/REVISION). It is created if missing.
	Cache string
	// LockPath is the lock file (LockName beside the config).
	LockPath string
	// Limits bound each snapshot (DefaultLimits for the zero value).
	Limits Limits
	// Scan bounds and tunes the scan of a snapshot, as for a folder root.
	Scan source.Options
	// Fetchers make the fetcher of a source, by Spec.Kind ("git",
	// "index"). A kind without one is refused when the source is used.
	Fetchers map[string]func(Spec) (Fetcher, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Gate, when set, checks a new snapshot's skills before it is swapped
	// in (cmd: the safety checks with the config's policy); findings it
	// returns refuse the snapshot, which fails the sync with CodeRefused
	// and keeps the last good one.
	Gate func(skills []*skill.Skill) []skill.Diagnostic
	// Review, when set, makes a sync that would move a pin record the
	// change in the lock's pending list instead: the pin stays, and what
	// is served with it, until Approve moves it (or Reject drops it).
	Review bool
}

// Manager keeps every remote source's current snapshot and its pin. It is
// safe for concurrent use; syncs of one source run one at a time.
//
// The lock file is shared with other processes (`loadout sync` beside a
// running server): a sync reads it again before it moves a pin, and Follow
// brings the snapshots served to what it pins now. Snapshot folders are
// leased (lease.go) while they may be read, so no process removes one
// that another serves.
type Manager struct {
	opt   Options
	specs []Spec
	byID  map[string]int

	lockMu sync.Mutex // guards the lock file, lock and lockSeen
	lock   *Lock
	// lockSeen is the lock file as this manager last read or wrote it
	// (nil: unknown), so that rereadLock need not parse it again.
	lockSeen os.FileInfo

	mu    sync.RWMutex
	state map[string]*snapshot
	// prev is the snapshot before the current one: a load that began
	// before the swap may still read it, so its lease is kept until the
	// next swap.
	prev map[string]*snapshot
	// problem is why a source is not served as its pin says, or why its
	// last sync failed; it is cleared when the source is served at its
	// pin again.
	problem map[string]*skill.Diagnostic
	// synced says what the last sync that moved a source's pin did.
	synced map[string]*skill.Diagnostic

	syncMu map[string]*sync.Mutex // one sync at a time per source

	// policy is each source's verify policy digest (Verify.Digest), for
	// the sources that have one.
	policy map[string]string
}

// snapshot is a source's current, validated snapshot.
type snapshot struct {
	rev     string
	dir     string
	digest  string
	skills  []*skill.Skill
	diags   []skill.Diagnostic
	digests map[string]string
	lease   *lease
}

// NewManager checks the specs (ids valid and unique, one location each)
// and reads the lock file. It fetches nothing.
func NewManager(specs []Spec, opt Options) (*Manager, error) {
	opt.Limits = opt.Limits.WithDefaults()
	if opt.Now == nil {
		opt.Now = time.Now
	}
	// A snapshot never changes once fetched (a changed one is refetched),
	// so a scan cache would only keep skills alive across swaps.
	opt.Scan.Cache = nil
	m := &Manager{opt: opt, byID: map[string]int{}, state: map[string]*snapshot{}, prev: map[string]*snapshot{},
		problem: map[string]*skill.Diagnostic{}, synced: map[string]*skill.Diagnostic{}, syncMu: map[string]*sync.Mutex{},
		policy: map[string]string{}}
	for i, s := range specs {
		if s.ID == "" {
			s.ID = DefaultID(s)
		}
		if !ValidID(s.ID) {
			return nil, Errorf(s.ID, CodeInvalid, "id %q: use 1 to 64 letters, digits, '.', '_', '-' or '@'", s.ID)
		}
		if n := btoi(s.Git != "") + btoi(s.Index != "") + btoi(s.OCI != ""); n != 1 {
			return nil, Errorf(s.ID, CodeInvalid, "give one of git, index and oci")
		}
		if j, dup := m.byID[s.ID]; dup {
			return nil, Errorf(s.ID, CodeInvalid, "two remote sources have the id %q (%s and %s): give one of them an \"id\"", s.ID, specs[j].URL(), s.URL())
		}
		for _, p := range s.Paths {
			if c, err := skill.CleanPath(p); err != nil || c != p {
				return nil, Errorf(s.ID, CodePath, "paths: %q is not a clean relative path in the repository (like skills or tools/skills)", p)
			}
		}
		if s.Verify != nil {
			d, err := s.Verify.Digest()
			if err != nil {
				return nil, Errorf(s.ID, CodeSignature, "%v", err)
			}
			m.policy[s.ID] = d
		}
		m.byID[s.ID] = i
		m.specs = append(m.specs, s)
		m.syncMu[s.ID] = &sync.Mutex{}
	}
	l, err := ReadLock(opt.LockPath)
	if err != nil {
		return nil, err
	}
	m.lock = l
	return m, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Specs are the sources, with their IDs filled in.
func (m *Manager) Specs() []Spec { return slices.Clone(m.specs) }

// LockPath is the lock file the manager reads and writes.
func (m *Manager) LockPath() string { return m.opt.LockPath }

// Pin is source id's pin in the lock, or nil.
func (m *Manager) Pin(id string) *Pin {
	m.lockMu.Lock()
	defer m.lockMu.Unlock()
	if p := m.lock.Get(id); p != nil {
		c := *p
		return &c
	}
	return nil
}

// Skills are source id's skills in its current snapshot, and the
// diagnostics of reading it: the snapshot's own, why the source is not
// served at its pin or its last sync failed, and what the last sync that
// moved its pin did. It reads nothing.
func (m *Manager) Skills(id string) ([]*skill.Skill, []skill.Diagnostic) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var sks []*skill.Skill
	var diags []skill.Diagnostic
	if s := m.state[id]; s != nil {
		sks, diags = s.skills, slices.Clip(s.diags)
	}
	if p := m.problem[id]; p != nil {
		diags = append(diags, *p)
	}
	if d := m.synced[id]; d != nil {
		diags = append(diags, *d)
	}
	return sks, diags
}

// Close releases the leases on the snapshots the manager serves, so that
// other processes may remove them. The manager serves nothing after it.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, s := range m.state {
		s.lease.release()
		delete(m.state, id)
	}
	for id, s := range m.prev {
		s.lease.release()
		delete(m.prev, id)
	}
}

// Provider is source id's skills as a catalog provider (its Skills method
// is catalog.Provider's).
func (m *Manager) Provider(id string) ProviderFunc {
	return func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return m.Skills(id) }
}

// ProviderFunc has catalog.Provider's method.
type ProviderFunc func(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic)

// Skills calls f.
func (f ProviderFunc) Skills(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) { return f(ctx) }

// Open brings every source to the snapshot its pin names: a snapshot in
// the cache whose digest is the pin's, else the pinned revision fetched
// again into a new folder (a cached snapshot edited on disk is never
// used). A fetched snapshot whose digest is not the pin's is not used (an
// error that says to run `loadout sync`). A source with no pin (or a pin
// for another place after a config edit) is synced and pinned when pinNew
// is set, else reported. With ids, only those sources are opened.
// Problems are diagnostics, returned and kept with the source's skills
// (Skills) until it is served at its pin; Open never fails as a whole.
func (m *Manager) Open(ctx context.Context, pinNew bool, ids ...string) []skill.Diagnostic {
	var diags []skill.Diagnostic
	for _, s := range m.specs {
		if len(ids) > 0 && !slices.Contains(ids, s.ID) {
			continue
		}
		pin := m.Pin(s.ID)
		if pin == nil || !pin.Same(s) || !m.verified(s, pin) {
			if !pinNew {
				d := diag(s, skill.Error, CodeUnknown, fmt.Sprintf("has no pin in %s: run `loadout sync` to fetch it and pin what it holds", m.opt.LockPath))
				if pin != nil && pin.Same(s) {
					d = diag(s, skill.Error, CodeSignature, fmt.Sprintf("its pin in %s was not checked under the source's verify policy (unsigned, or checked under another policy): run `loadout sync %s` to check it", m.opt.LockPath, s.ID))
				}
				m.setProblem(s.ID, &d)
				diags = append(diags, d)
				continue
			}
			ch := m.Sync(ctx, s.ID)
			diags = append(diags, ch[0].Diagnostics()...)
			continue
		}
		if d := m.openPin(ctx, s, pin); d != nil {
			diags = append(diags, *d)
		}
	}
	return diags
}

// openPin serves the snapshot pin names, under the source's sync lock; on
// failure it keeps what is served and returns (and keeps) why.
func (m *Manager) openPin(ctx context.Context, s Spec, pin *Pin) *skill.Diagnostic {
	mu := m.syncMu[s.ID]
	mu.Lock()
	defer mu.Unlock()
	if cur, _ := m.current(s.ID); cur != nil && cur.rev == pin.Revision && cur.digest == pin.Digest {
		m.setProblem(s.ID, nil)
		return nil
	}
	snap, err := m.openPinned(ctx, s, pin)
	if err != nil {
		sev, msg := skill.Error, errMsg(err)
		if cur, _ := m.current(s.ID); cur != nil {
			sev, msg = skill.Warning, fmt.Sprintf("%s; still serving the snapshot at %s", errMsg(err), shortRev(cur.rev))
		}
		d := diag(s, sev, CodeOf(err), msg)
		m.setProblem(s.ID, &d)
		return &d
	}
	m.swap(s.ID, snap)
	m.setProblem(s.ID, nil)
	m.gc(s.ID)
	return nil
}

// openPinned reads the snapshot pin names: a cached one that matches the
// pin, else one fetched again.
func (m *Manager) openPinned(ctx context.Context, s Spec, pin *Pin) (*snapshot, error) {
	snap, err := m.obtain(ctx, s, nil, pin.Revision, pin.Digest, false)
	if err != nil {
		return nil, err
	}
	if snap.digest != pin.Digest {
		m.drop(s.ID, snap)
		return nil, Errorf(s.ID, CodeLock, "the snapshot at %s, fetched again, has digest %s, but %s pins %s: the remote's content at that revision, or the lock, changed. Run `loadout sync %s` to pin what the source holds now",
			shortRev(pin.Revision), snap.digest, m.opt.LockPath, pin.Digest, s.ID)
	}
	return snap, nil
}

// Follow reads the lock file again, as another process (`loadout sync`)
// may have moved it, and brings every source to the snapshot its pin
// names now, as Open does. A source whose pin is what is served is left
// alone; one whose pin is gone keeps what is served. It returns the ids of
// the sources whose skills or diagnostics changed.
func (m *Manager) Follow(ctx context.Context) ([]string, error) {
	if err := m.rereadLock(); err != nil {
		return nil, err
	}
	var changed []string
	for _, s := range m.specs {
		pin := m.Pin(s.ID)
		if pin == nil || !pin.Same(s) || !m.verified(s, pin) {
			continue
		}
		cur, _ := m.current(s.ID)
		before := m.problemText(s.ID)
		m.openPin(ctx, s, pin)
		if now, _ := m.current(s.ID); now != cur || m.problemText(s.ID) != before {
			changed = append(changed, s.ID)
		}
	}
	return changed, nil
}

// Change is what one sync did (or, for Check, would do) to a source.
type Change struct {
	ID, URL  string
	From, To string // revisions; From is "" for a first sync
	// FromDigest and ToDigest are the snapshots' digests, where known.
	FromDigest, ToDigest string
	// Added, Removed and Changed are skill names, sorted; Digests gives
	// each added or changed skill's new digest and each removed one's old.
	Added, Removed, Changed []string
	Digests                 map[string]string
	// Moved: the pin moved (or, for Check, would move).
	Moved bool
	// Served: the snapshot served changed without the pin moving (the
	// pinned snapshot was loaded, or fetched again), so a catalog over the
	// source must read it again.
	Served bool
	// Broken are the SKILL.md files of the new snapshot that do not load,
	// as "path: code: message" (the message names the line).
	Broken []string
	// Err is why the sync failed; the last good snapshot is kept.
	Err error
	// Refused are the findings that refused the snapshot (CodeRefused).
	Refused []skill.Diagnostic
	// Signer is who signed the revision synced, for a source with a
	// verify policy.
	Signer *Signer
	// Pending: with Options.Review, the change was recorded for review
	// (or, for Check, awaits it) and the pin did not move. Rejected: the
	// same snapshot was rejected before, so it was not queued again.
	Pending  bool
	Rejected bool
}

// Diagnostics are c as diagnostics: the failure, or what moved.
func (c Change) Diagnostics() []skill.Diagnostic {
	s := Spec{ID: c.ID}
	if c.Err != nil {
		return []skill.Diagnostic{diag(s, skill.Error, CodeOf(c.Err), errMsg(c.Err)+"; the last good snapshot is kept")}
	}
	if c.Pending {
		return []skill.Diagnostic{diag(s, skill.Info, CodePending, "awaits review: "+c.what()+"; approve it with `loadout sync --approve "+c.ID+"` or POST /v1/sources/"+c.ID+"/approve")}
	}
	if !c.Moved {
		return nil
	}
	return []skill.Diagnostic{diag(s, skill.Info, CodeSynced, c.what())}
}

// Summary is one line: what moved, and the skills added, removed and
// changed.
func (c Change) Summary() string {
	if c.Err != nil {
		return fmt.Sprintf("%s: sync failed: %v", c.ID, c.Err)
	}
	if c.Rejected {
		return fmt.Sprintf("%s: %s was rejected in review; the pin stays at %s", c.ID, shortRev(c.To), shortRev(c.From))
	}
	if c.Pending {
		return c.ID + ": awaits review: " + c.what()
	}
	if !c.Moved {
		return fmt.Sprintf("%s: unchanged at %s", c.ID, shortRev(c.To))
	}
	return c.ID + ": " + c.what()
}

// what is Summary without the source id: the revisions, then the skills
// added, removed and changed.
func (c Change) what() string {
	from := "nothing"
	if c.From != "" {
		from = shortRev(c.From)
	}
	parts := []string{fmt.Sprintf("%s → %s", from, shortRev(c.To))}
	list := func(what string, names []string) {
		if len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(names), what, strings.Join(names, ", ")))
		}
	}
	list("added", c.Added)
	list("removed", c.Removed)
	list("changed", c.Changed)
	if len(parts) == 1 {
		parts = append(parts, "no skill changed")
	}
	if len(c.Broken) > 0 {
		parts = append(parts, fmt.Sprintf("%d not loaded: %s", len(c.Broken), strings.Join(c.Broken, "; ")))
	}
	if c.Signer != nil {
		parts = append(parts, "signed by "+c.Signer.String())
	}
	return strings.Join(parts, "; ")
}

// Sync fetches the given sources (all when none) at what their refs point
// at now, validates each new snapshot beside the current one, swaps it in
// and moves its pin in the lock file. A failure keeps the last good
// snapshot and pin; its Change says why. Unknown ids are failed Changes.
func (m *Manager) Sync(ctx context.Context, ids ...string) []Change {
	return m.syncAll(ctx, false, ids)
}

// Check is Sync without moving anything: for each source, whether its ref
// has moved past the pin, and which skills that adds, removes and changes
// (fetched into a temporary snapshot that is then removed).
func (m *Manager) Check(ctx context.Context, ids ...string) []Change {
	return m.syncAll(ctx, true, ids)
}

func (m *Manager) syncAll(ctx context.Context, dry bool, ids []string) []Change {
	if len(ids) == 0 {
		for _, s := range m.specs {
			ids = append(ids, s.ID)
		}
	}
	out := make([]Change, 0, len(ids))
	for _, id := range ids {
		i, ok := m.byID[id]
		if !ok {
			out = append(out, Change{ID: id, Err: Errorf(id, CodeInvalid, "no remote source has this id; the config's are: %s", strings.Join(m.ids(), ", "))})
			continue
		}
		out = append(out, m.sync(ctx, m.specs[i], dry))
	}
	return out
}

func (m *Manager) ids() []string {
	var ids []string
	for _, s := range m.specs {
		ids = append(ids, s.ID)
	}
	return ids
}

func (m *Manager) sync(ctx context.Context, s Spec, dry bool) (ch Change) {
	if obs.Enabled() {
		// One obs.KindSync operation, named by the source's kind ("git" or
		// "index"); the source's id is an attribute, not a name.
		var end func(error)
		ctx, end = obs.Start(ctx, obs.KindSync, s.Kind(), obs.Attr{Key: "loadout.source", Value: s.ID}, obs.Attr{Key: "loadout.sync.check", Value: strconv.FormatBool(dry)})
		defer func() { end(ch.Err) }()
	}
	mu := m.syncMu[s.ID]
	mu.Lock()
	defer mu.Unlock()
	ch = Change{ID: s.ID, URL: s.URL()}
	defer func() {
		if ch.Err != nil && !dry {
			m.setStale(s, ch.Err)
		}
	}()
	// The lock as it is now: another process may have moved it.
	if err := m.rereadLock(); err != nil {
		ch.Err = err
		return ch
	}
	old := m.Pin(s.ID)
	if old != nil && old.Same(s) {
		ch.From = old.Revision
	} else {
		old = nil
	}
	f, err := m.fetcher(s)
	if err != nil {
		ch.Err = err
		return ch
	}
	signed, _ := f.(Signed)
	if s.Verify != nil && signed == nil {
		ch.Err = Errorf(s.ID, CodeSignature, "verify: this loadout cannot check the signatures of %s sources; remove \"verify\" or use a git or oci source", s.Kind())
		return ch
	}
	rev, err := f.Resolve(ctx)
	if err != nil {
		ch.Err = err
		return ch
	}
	ch.To = rev
	cur, _ := m.current(s.ID)
	want := ""
	verified := old != nil && m.verified(s, old)
	if old != nil && old.Revision == rev && verified {
		if cur != nil && cur.rev == rev && cur.digest == old.Digest || dry {
			m.clearStale(s.ID)
			return ch
		}
		// The pin has not moved, but what is served is not it (this
		// process has not loaded it, or another moved the lock): a cached
		// folder is used only if it matches the pin.
		want = old.Digest
	}
	snap, err := m.obtain(ctx, s, f, rev, want, dry)
	if err != nil {
		ch.Err = err
		return ch
	}
	keep := false
	defer func() {
		if !keep {
			m.drop(s.ID, snap)
		}
	}()
	var signer *Signer
	if s.Verify != nil {
		// The fetch checked the signature (and refused a revision not
		// signed as the policy requires); a cached folder is used only at
		// a pin checked under this policy.
		if signer = signed.Signer(rev); signer == nil && want != "" {
			signer = old.Signer
		}
		if signer == nil {
			ch.Err = Errorf(s.ID, CodeSignature, "%s was not checked against the source's verify policy; the pin stays", shortRev(rev))
			return ch
		}
		c := *signer
		c.Policy = m.policy[s.ID]
		signer = &c
		ch.Signer = signer
	}
	if old != nil && old.Revision == rev && snap.digest == old.Digest {
		if !verified {
			// The pin is the same, now checked under the policy: record
			// who signed it.
			if dry {
				return ch
			}
			p := *old
			p.Signer = signer
			if err := m.writePin(p); err != nil {
				ch.Err = err
				return ch
			}
		}
		m.swap(s.ID, snap)
		keep = true
		m.clearStale(s.ID)
		m.gc(s.ID)
		ch.Served = true
		return ch
	}
	var broken map[string]string
	ch.Broken, broken = brokenFiles(snap)
	if len(snap.skills) == 0 {
		where := "the repository"
		if len(s.Paths) > 0 {
			where = strings.Join(s.Paths, ", ")
		}
		ch.Err = Errorf(s.ID, CodeInvalid, "no skill (no SKILL.md with a name and description) under %s at %s%s", where, shortRev(rev), brokenNote(ch.Broken))
		return ch
	}
	if lost := m.lostToBreakage(ctx, s, old, cur, snap, broken); len(lost) > 0 {
		// A pinned skill whose SKILL.md no longer loads is not dropped:
		// the whole last good snapshot stays, as a folder source keeps a
		// broken skill's last good version, until upstream fixes it.
		ch.Err = Errorf(s.ID, CodeBroken, "at %s, %s; the pin stays at %s, where %s loads: fix the file upstream, or delete the skill's folder to remove it",
			shortRev(rev), strings.Join(lost, "; "), shortRev(old.Revision), plural(len(lost), "it", "they"))
		return ch
	}
	if m.opt.Gate != nil {
		if refused := m.opt.Gate(snap.skills); len(refused) > 0 {
			var what []string
			for _, d := range refused[:min(len(refused), 3)] {
				what = append(what, d.Skill+": "+d.Code+" ("+d.Path+")")
			}
			more := ""
			if len(refused) > 3 {
				more = fmt.Sprintf(" and %d more", len(refused)-3)
			}
			ch.Err = Errorf(s.ID, CodeRefused, "the snapshot at %s was refused by the safety checks: %s%s; fix it upstream, or accept the finding with an allow entry in the config's \"safety\" policy", shortRev(rev), strings.Join(what, "; "), more)
			ch.Refused = refused
			return ch
		}
	}
	pin := Pin{ID: s.ID, Kind: s.Kind(), URL: s.URL(), Ref: s.Ref, Paths: s.Paths, Revision: rev,
		Digest: snap.digest, Skills: snap.digests, Synced: m.opt.Now().UTC(), Signer: signer}
	if tr, ok := f.(TagResolver); ok {
		pin.Tag = tr.ResolvedTag(rev)
	}
	diff(&ch, old, &pin)
	ch.ToDigest = pin.Digest
	if old != nil {
		ch.FromDigest = old.Digest
	}
	ch.Moved = old == nil || old.Digest != pin.Digest || old.Revision != pin.Revision
	if m.opt.Review && ch.Moved {
		// Under review a moved pin is a change to approve: recorded (or,
		// for Check, reported), never written.
		ch.Moved = false
		m.lockMu.Lock()
		p := m.lock.PendingFor(s.ID)
		m.lockMu.Unlock()
		if p != nil && p.To.Digest == pin.Digest && p.To.Revision == pin.Revision && p.Rejected != nil {
			ch.Rejected = true
			return ch
		}
		ch.Pending = true
		if dry {
			return ch
		}
		if p != nil && p.To.Digest == pin.Digest && p.To.Revision == pin.Revision && p.Base == ch.From {
			return ch // already queued
		}
		pend := Pending{To: pin, Added: ch.Added, Removed: ch.Removed, Changed: ch.Changed, Recorded: pin.Synced}
		if old != nil {
			pend.Base, pend.BaseDigest = old.Revision, old.Digest
		}
		if err := m.updateLock(func(l *Lock) error { l.PutPending(pend); return nil }); err != nil {
			ch.Pending = false
			ch.Err = err
		}
		return ch // the folder stays in the cache (gc keeps a pending revision's) for Approve
	}
	if dry {
		return ch
	}
	if err := m.writePin(pin); err != nil {
		ch.Err = err
		return ch
	}
	m.swap(s.ID, snap)
	keep = true
	m.clearStale(s.ID)
	if ch.Moved {
		d := diag(s, skill.Info, CodeSynced, "synced "+ch.what())
		m.mu.Lock()
		m.synced[s.ID] = &d
		m.mu.Unlock()
	}
	m.gc(s.ID)
	return ch
}

// verified reports whether pin was checked under s's verify policy as it
// is now (always, for a source without one).
func (m *Manager) verified(s Spec, pin *Pin) bool {
	if s.Verify == nil {
		return true
	}
	return pin.Signer != nil && pin.Signer.Policy == m.policy[s.ID]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rereadLock reads the lock file again: another process may have moved
// it. A file that is still the one this manager last read or wrote (the
// same file, size and modification time: every writer replaces the file
// by a rename, so another's write is another file) is not parsed again,
// which keeps a sync of many sources from reading a lock of them all once
// for each.
func (m *Manager) rereadLock() error {
	st, serr := os.Stat(m.opt.LockPath)
	m.lockMu.Lock()
	same := serr == nil && sameLockFile(st, m.lockSeen)
	m.lockMu.Unlock()
	if same {
		return nil
	}
	l, err := ReadLock(m.opt.LockPath)
	if err != nil {
		return err
	}
	m.lockMu.Lock()
	m.lock = l
	m.lockSeen = nil
	if serr == nil {
		m.lockSeen = st // stat before the read: a change meanwhile is read next time
	}
	m.lockMu.Unlock()
	return nil
}

// sameLockFile reports whether a and b are one lock file, unchanged.
func sameLockFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// writePin moves pin in the lock file: read again, changed and written
// while no other process of this user does the same (lockFolder), so that
// a pin another process moved meanwhile is kept.
func (m *Manager) writePin(pin Pin) error {
	return m.updateLock(func(l *Lock) error { l.Put(pin); return nil })
}

// updateLock changes the lock file with fn: read again, changed and
// written while no other process of this user does the same, so that what
// another process wrote meanwhile is kept. Nothing is written when fn
// fails.
func (m *Manager) updateLock(fn func(l *Lock) error) error {
	m.lockMu.Lock()
	defer m.lockMu.Unlock()
	unlock := lockFolder(filepath.Dir(m.opt.LockPath))
	defer unlock()
	m.lockSeen = nil
	l, err := ReadLock(m.opt.LockPath)
	if err != nil {
		return err
	}
	if err := fn(l); err != nil {
		m.lock = l
		return err
	}
	if err := l.Write(m.opt.LockPath); err != nil {
		return err
	}
	m.lock = l
	if st, err := os.Stat(m.opt.LockPath); err == nil {
		m.lockSeen = st // what this process wrote, under the folder's lock
	}
	return nil
}

// brokenFiles are the SKILL.md files of snap that did not load, as
// "path: code: message", the path relative to the snapshot; byFolder is
// the first of them for each folder.
func brokenFiles(snap *snapshot) (out []string, byFolder map[string]string) {
	byFolder = map[string]string{}
	for _, d := range snap.diags {
		if rel, ok := brokenSkillFile(snap, d); ok {
			why := rel + ": " + d.Code + ": " + d.Message
			out = append(out, why)
			if _, seen := byFolder[path.Dir(rel)]; !seen {
				byFolder[path.Dir(rel)] = why
			}
		}
	}
	return out, byFolder
}

// brokenSkillFile reports whether d says a SKILL.md of snap did not load,
// and that file's path relative to the snapshot.
func brokenSkillFile(snap *snapshot, d skill.Diagnostic) (string, bool) {
	if d.Severity != skill.Error || !strings.EqualFold(filepath.Base(d.Path), "SKILL.md") {
		return "", false
	}
	rel, err := filepath.Rel(snap.dir, d.Path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	for _, sk := range snap.skills {
		if sk.Origin != nil && sk.Origin.Provenance == path.Dir(rel) {
			return "", false // another file's problem; the skill loaded
		}
	}
	return rel, true
}

func brokenNote(broken []string) string {
	if len(broken) == 0 {
		return ""
	}
	return "; not loaded: " + strings.Join(broken, "; ")
}

// lostToBreakage are the skills the pin old holds that the new snapshot
// drops because their SKILL.md no longer loads (not because their folder
// is gone), each as "NAME: FILE: code: message". A skill's folder is its
// provenance in the snapshot served (or, when none is loaded, a cached
// snapshot that matches the pin); failing those, a folder named as the
// skill. broken is brokenFiles' byFolder for snap.
func (m *Manager) lostToBreakage(ctx context.Context, s Spec, old *Pin, cur, snap *snapshot, broken map[string]string) []string {
	if old == nil || len(broken) == 0 {
		return nil
	}
	folders := map[string]string{} // name → folder at the pin
	if cur == nil || cur.rev != old.Revision || cur.digest != old.Digest {
		cur = m.cachedPinned(ctx, s, old)
	}
	if cur != nil {
		for _, sk := range cur.skills {
			folders[sk.Name] = sk.Origin.Provenance
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(old.Skills)) {
		if _, ok := snap.digests[name]; ok {
			continue
		}
		folder, known := folders[name]
		if !known {
			for f := range broken {
				if path.Base(f) == name {
					folder = f
				}
			}
		}
		if why, ok := broken[folder]; ok {
			out = append(out, name+": "+why)
		}
	}
	return out
}

// cachedPinned is the snapshot pin names from the cache, when a folder
// there matches it; nothing is fetched. Its lease is dropped: it is read
// only to learn its skills' folders.
func (m *Manager) cachedPinned(ctx context.Context, s Spec, pin *Pin) *snapshot {
	for _, name := range m.candidates(s.ID, pin.Revision) {
		snap, ok := m.open(ctx, s, pin.Revision, name)
		if !ok {
			continue
		}
		snap.lease.release()
		if snap.digest == pin.Digest {
			return snap
		}
	}
	return nil
}

func (m *Manager) current(id string) (*snapshot, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.state[id]
	return s, ok
}

// swap serves snap for source id; the snapshot before it stays leased
// until the next swap.
func (m *Manager) swap(id string, snap *snapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.state[id]
	if cur == snap {
		return
	}
	if p := m.prev[id]; p != nil && p != snap {
		p.lease.release()
	}
	if cur != nil {
		m.prev[id] = cur
	} else {
		delete(m.prev, id)
	}
	m.state[id] = snap
}

// drop lets go of a snapshot that is not served: its lease is released
// and its folder removed unless another process reads it or the lock
// pins its revision.
func (m *Manager) drop(id string, snap *snapshot) {
	if snap == nil {
		return
	}
	snap.lease.release()
	m.gc(id)
}

// LastError is why source id is not served at its pin, or why its last
// sync failed ("" when neither).
func (m *Manager) LastError(id string) string { return m.problemText(id) }

func (m *Manager) problemText(id string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if p := m.problem[id]; p != nil {
		return p.Message
	}
	return ""
}

func (m *Manager) setProblem(id string, d *skill.Diagnostic) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d == nil {
		delete(m.problem, id)
	} else {
		m.problem[id] = d
	}
}

// Snapshot is source id's current snapshot: its revision and folder ("" if
// none is loaded) and how many skills it holds.
func (m *Manager) Snapshot(id string) (rev, dir string, skills int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if s := m.state[id]; s != nil {
		return s.rev, s.dir, len(s.skills)
	}
	return "", "", 0
}

func (m *Manager) setStale(s Spec, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.state[s.ID]; cur != nil {
		d := diag(s, skill.Warning, CodeStale, fmt.Sprintf("the last sync failed (%s); serving the snapshot at %s", errMsg(err), shortRev(cur.rev)))
		m.problem[s.ID] = &d
		return
	}
	d := diag(s, skill.Error, CodeOf(err), fmt.Sprintf("the last sync failed (%s); nothing of it is served", errMsg(err)))
	m.problem[s.ID] = &d
}

func (m *Manager) clearStale(id string) { m.setProblem(id, nil) }

func diff(ch *Change, old, pin *Pin) {
	ch.Digests = map[string]string{}
	var prev map[string]string
	if old != nil {
		prev = old.Skills
	}
	for name, d := range pin.Skills {
		switch od, ok := prev[name]; {
		case !ok:
			ch.Added = append(ch.Added, name)
			ch.Digests[name] = d
		case od != d:
			ch.Changed = append(ch.Changed, name)
			ch.Digests[name] = d
		}
	}
	for name, d := range prev {
		if _, ok := pin.Skills[name]; !ok {
			ch.Removed = append(ch.Removed, name)
			ch.Digests[name] = d
		}
	}
	sort.Strings(ch.Added)
	sort.Strings(ch.Removed)
	sort.Strings(ch.Changed)
}

func (m *Manager) fetcher(s Spec) (Fetcher, error) {
	mk := m.opt.Fetchers[s.Kind()]
	if mk == nil {
		return nil, Errorf(s.ID, CodeInvalid, "this loadout cannot read %s sources", s.Kind())
	}
	return mk(s)
}

// obtain is a snapshot of source s at rev, leased. When want is set (the
// pin is at rev), a cached folder of rev whose digest is want is used;
// one that does not match is never used, and is removed unless another
// process reads it. Otherwise rev is fetched into a new folder (with
// temp, a temporary one that drop removes). f is made when nil.
func (m *Manager) obtain(ctx context.Context, s Spec, f Fetcher, rev, want string, temp bool) (*snapshot, error) {
	if want != "" {
		for _, name := range m.candidates(s.ID, rev) {
			snap, ok := m.open(ctx, s, rev, name)
			if !ok {
				continue
			}
			if snap.digest == want {
				return snap, nil
			}
			snap.lease.release()
			removeUnleased(m.sourceDir(s.ID), name)
		}
	}
	if f == nil {
		var err error
		if f, err = m.fetcher(s); err != nil {
			return nil, err
		}
	}
	name, hold, err := m.fetchNew(ctx, s, f, rev, temp)
	if err != nil {
		return nil, err
	}
	snap, ok := m.open(ctx, s, rev, name)
	hold.release()
	if !ok {
		return nil, Errorf(s.ID, CodeInvalid, "the snapshot fetched at %s vanished from %s", shortRev(rev), m.sourceDir(s.ID))
	}
	return snap, nil
}

// open leases folder name of source s's cache and scans it; false when it
// is not there (another process removed it).
func (m *Manager) open(ctx context.Context, s Spec, rev, name string) (*snapshot, bool) {
	l, err := acquireLease(m.sourceDir(s.ID), name)
	if err != nil {
		return nil, false
	}
	dir := filepath.Join(m.sourceDir(s.ID), name)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		l.release()
		return nil, false
	}
	snap := m.scan(ctx, s, rev, dir)
	snap.lease = l
	return snap, true
}

// fetchNew fetches rev into a new folder of the cache and returns its
// name: into a leased temporary folder, renamed once the fetch is whole,
// so that a failed fetch leaves nothing and no process removes it
// meanwhile. With temp it stays a temporary folder, which gc removes once
// it is let go of. The folder stays leased by hold until the caller has
// leased it itself.
func (m *Manager) fetchNew(ctx context.Context, s Spec, f Fetcher, rev string, temp bool) (name string, hold *lease, err error) {
	srcDir := m.sourceDir(s.ID)
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		return "", nil, Errorf(s.ID, CodeInvalid, "cannot create the cache folder: %v", err)
	}
	tmpName := tempPrefix + randHex()
	tl, err := acquireLease(srcDir, tmpName)
	if err != nil {
		return "", nil, Errorf(s.ID, CodeInvalid, "cannot lease a folder in the cache %s: %v", srcDir, err)
	}
	tmp := filepath.Join(srcDir, tmpName)
	done := func() { tl.release(); removeUnleased(srcDir, tmpName) } // the folder, if left, and its lease file
	if _, err := f.Fetch(ctx, rev, tmp, m.opt.Limits); err != nil {
		done()
		return "", nil, err
	}
	if temp {
		return tmpName, tl, nil // drop removes it
	}
	defer done()
	// A new name every time: a folder of this revision already there may
	// be edited, or served by another process.
	name = revName(rev) + "." + randHex()
	fl, err := acquireLease(srcDir, name)
	if err == nil {
		if err = os.Rename(tmp, filepath.Join(srcDir, name)); err != nil {
			fl.release()
		}
	}
	if err != nil {
		return "", nil, Errorf(s.ID, CodeInvalid, "cannot move the snapshot into place: %v", err)
	}
	return name, fl, nil
}

// candidates are the cache's folders of source id at rev, newest first.
func (m *Manager) candidates(id, rev string) []string {
	ents, err := os.ReadDir(m.sourceDir(id))
	if err != nil {
		return nil
	}
	type cand struct {
		name string
		mod  time.Time
	}
	var out []cand
	for _, e := range ents {
		if !e.IsDir() || entryRev(e.Name()) != revName(rev) {
			continue
		}
		var mod time.Time
		if fi, err := e.Info(); err == nil {
			mod = fi.ModTime()
		}
		out = append(out, cand{e.Name(), mod})
	}
	slices.SortStableFunc(out, func(a, b cand) int { return b.mod.Compare(a.mod) })
	names := make([]string, len(out))
	for i, c := range out {
		names[i] = c.name
	}
	return names
}

// gc removes the cache folders of source id that no process reads (each
// reader holds a lease) and that the lock does not pin: a folder of the
// pinned revision is kept for the next process to open (only the one
// this process checked against the pin, when it serves one), and what an
// interrupted fetch left is removed.
func (m *Manager) gc(id string) {
	srcDir := m.sourceDir(id)
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		return
	}
	pinned, verified, pending := "", "", ""
	m.lockMu.Lock()
	if p := m.lock.PendingFor(id); p != nil && p.Rejected == nil {
		pending = revName(p.To.Revision)
	}
	m.lockMu.Unlock()
	if p := m.Pin(id); p != nil {
		pinned = revName(p.Revision)
		if cur, _ := m.current(id); cur != nil && cur.rev == p.Revision && cur.digest == p.Digest {
			// This process checked that folder against the pin: any other
			// of that revision is a copy, or was edited.
			verified = filepath.Base(cur.dir)
		}
	}
	for _, e := range ents {
		n := e.Name()
		if n == leaseDir || n == verified || verified == "" && !strings.HasPrefix(n, tempPrefix) && entryRev(n) == pinned {
			continue
		}
		if pending != "" && !strings.HasPrefix(n, tempPrefix) && entryRev(n) == pending {
			continue // Approve opens it
		}
		removeUnleased(srcDir, n)
	}
	// Lease files whose folder is gone.
	leases, _ := os.ReadDir(filepath.Join(srcDir, leaseDir))
	for _, e := range leases {
		if _, err := os.Lstat(filepath.Join(srcDir, e.Name())); err != nil {
			removeUnleased(srcDir, e.Name())
		}
	}
}

// scan reads a snapshot's skills, each with its own origin, and their
// digests.
func (m *Manager) scan(ctx context.Context, s Spec, rev, dir string) *snapshot {
	snap := &snapshot{rev: rev, dir: dir, digests: map[string]string{}}
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	roots := []string{dir}
	if len(s.Paths) > 0 {
		roots = roots[:0]
		for _, p := range s.Paths {
			roots = append(roots, filepath.Join(dir, filepath.FromSlash(p)))
		}
	}
	for i, root := range roots {
		opt := m.opt.Scan
		folder := ""
		if len(s.Paths) > 0 {
			folder = s.Paths[i]
		}
		opt.Origin = skill.Origin{Kind: s.Kind(), Root: s.URL(), Ref: s.Ref, Revision: rev, Provenance: folder}
		if _, err := os.Stat(root); err != nil {
			snap.diags = append(snap.diags, diag(s, skill.Warning, CodeInvalid, fmt.Sprintf("paths: %q is not in the source at %s", folder, shortRev(rev))))
			continue
		}
		res := source.ScanFolder(ctx, root, opt)
		for _, sk := range res.Skills {
			if _, dup := snap.digests[sk.Name]; dup {
				continue // the catalog reports the collision
			}
			snap.digests[sk.Name] = sk.ContentDigest()
			// Provenance: the skill's own folder in the repository. The
			// scan gives every skill of a root one shared Origin, so each
			// skill gets a copy of its own.
			if rel, err := filepath.Rel(real, sk.Dir); err == nil {
				o := sk.OriginValue()
				o.Provenance = filepath.ToSlash(rel)
				sk.Origin = &o
			}
		}
		snap.skills = append(snap.skills, res.Skills...)
		snap.diags = append(snap.diags, res.Diagnostics...)
	}
	snap.digest = snapshotDigest(snap.digests)
	return snap
}

// snapshotDigest is the digest of every skill's name and digest, in name
// order.
func snapshotDigest(digests map[string]string) string {
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%s\n", n, digests[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (m *Manager) sourceDir(id string) string { return filepath.Join(m.opt.Cache, id) }

// revName is rev as (the start of) a folder name.
func revName(rev string) string { return strings.ReplaceAll(rev, ":", "-") }

// entryRev is the revision part of a cache folder's name: "REV.RANDOM",
// or "REV" as older versions named it.
func entryRev(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

const tempPrefix = ".fetch-"

func randHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func diag(s Spec, sev skill.Severity, code, msg string) skill.Diagnostic {
	return skill.Diagnostic{Severity: sev, Code: code, Path: s.URL(), Message: Redact("remote source " + s.ID + ": " + msg)}
}

// short is a revision as people read it: 12 hex digits of a commit or
// digest.
func shortRev(rev string) string {
	r := strings.TrimPrefix(rev, "sha256:")
	if len(r) > 12 {
		r = r[:12]
	}
	if strings.HasPrefix(rev, "sha256:") {
		return "sha256:" + r
	}
	return r
}
