package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

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
}

// Manager keeps every remote source's current snapshot and its pin. It is
// safe for concurrent use; syncs of one source run one at a time.
type Manager struct {
	opt   Options
	specs []Spec
	byID  map[string]int

	lockMu sync.Mutex // guards the lock file and lock
	lock   *Lock

	mu      sync.RWMutex
	state   map[string]*snapshot
	lastErr map[string]string // why the last sync of a source failed

	syncMu map[string]*sync.Mutex // one sync at a time per source
}

// snapshot is a source's current, validated snapshot.
type snapshot struct {
	rev    string
	dir    string
	skills []*skill.Skill
	diags  []skill.Diagnostic
	// stale is the last sync's failure, when it kept this snapshot.
	stale *skill.Diagnostic
}

// NewManager checks the specs (ids valid and unique, one location each)
// and reads the lock file. It fetches nothing.
func NewManager(specs []Spec, opt Options) (*Manager, error) {
	opt.Limits = opt.Limits.WithDefaults()
	if opt.Now == nil {
		opt.Now = time.Now
	}
	m := &Manager{opt: opt, byID: map[string]int{}, state: map[string]*snapshot{}, lastErr: map[string]string{}, syncMu: map[string]*sync.Mutex{}}
	for i, s := range specs {
		if s.ID == "" {
			s.ID = DefaultID(s)
		}
		if !ValidID(s.ID) {
			return nil, Errorf(s.ID, CodeInvalid, "id %q: use 1 to 64 letters, digits, '.', '_', '-' or '@'", s.ID)
		}
		if (s.Git == "") == (s.Index == "") {
			return nil, Errorf(s.ID, CodeInvalid, "give either git or index")
		}
		if j, dup := m.byID[s.ID]; dup {
			return nil, Errorf(s.ID, CodeInvalid, "two remote sources have the id %q (%s and %s): give one of them an \"id\"", s.ID, specs[j].URL(), s.URL())
		}
		for _, p := range s.Paths {
			if c, err := skill.CleanPath(p); err != nil || c != p {
				return nil, Errorf(s.ID, CodePath, "paths: %q is not a clean relative path in the repository (like skills or tools/skills)", p)
			}
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

// Specs are the sources, with their IDs filled in.
func (m *Manager) Specs() []Spec { return slices.Clone(m.specs) }

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
// diagnostics of reading it (a stale snapshot says so). It reads nothing.
func (m *Manager) Skills(id string) ([]*skill.Skill, []skill.Diagnostic) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.state[id]
	if s == nil {
		return nil, nil
	}
	diags := s.diags
	if s.stale != nil {
		diags = append(slices.Clip(diags), *s.stale)
	}
	return s.skills, diags
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

// Open brings every source to the snapshot its pin names: the snapshot in
// the cache when it is there, else fetched at exactly the pinned revision.
// A snapshot whose digest is not the pin's is not used (an error that says
// to run `loadout sync`). A source with no pin (or a pin for another place
// after a config edit) is synced and pinned when pinNew is set, else
// reported. With ids, only those sources are opened. Problems are
// diagnostics; Open never fails as a whole.
func (m *Manager) Open(ctx context.Context, pinNew bool, ids ...string) []skill.Diagnostic {
	var diags []skill.Diagnostic
	for _, s := range m.specs {
		if len(ids) > 0 && !slices.Contains(ids, s.ID) {
			continue
		}
		m.cleanTemps(s.ID)
		pin := m.Pin(s.ID)
		if pin == nil || !pin.Same(s) {
			if !pinNew {
				diags = append(diags, diag(s, skill.Error, CodeUnknown, fmt.Sprintf("has no pin in %s: run `loadout sync` to fetch it and pin what it holds", m.opt.LockPath)))
				continue
			}
			ch := m.Sync(ctx, s.ID)
			diags = append(diags, ch[0].Diagnostics()...)
			continue
		}
		if err := m.openPinned(ctx, s, pin); err != nil {
			diags = append(diags, diag(s, skill.Error, CodeOf(err), err.Error()))
		}
	}
	return diags
}

// openPinned loads the snapshot pin names, fetching it when it is not in
// the cache, and checks its digest.
func (m *Manager) openPinned(ctx context.Context, s Spec, pin *Pin) error {
	dir := m.snapDir(s.ID, pin.Revision)
	if _, err := os.Stat(dir); err != nil {
		f, err := m.fetcher(s)
		if err != nil {
			return err
		}
		if _, err := m.fetchInto(ctx, s, f, pin.Revision, dir); err != nil {
			return err
		}
	}
	snap, digests := m.scan(ctx, s, pin.Revision, dir)
	if d := snapshotDigest(digests); d != pin.Digest {
		return Errorf(s.ID, CodeLock, "the snapshot at %s (%s) has digest %s, but %s pins %s: the remote's content at that revision, or the lock, changed. Run `loadout sync %s` to pin what the source holds now",
			shortRev(pin.Revision), dir, d, m.opt.LockPath, pin.Digest, s.ID)
	}
	m.mu.Lock()
	m.state[s.ID] = snap
	m.mu.Unlock()
	return nil
}

// Change is what one sync did (or, for Check, would do) to a source.
type Change struct {
	ID, URL  string
	From, To string // revisions; From is "" for a first sync
	// Added, Removed and Changed are skill names, sorted; Digests gives
	// each added or changed skill's new digest and each removed one's old.
	Added, Removed, Changed []string
	Digests                 map[string]string
	// Moved: the pin moved (or, for Check, would move).
	Moved bool
	// Err is why the sync failed; the last good snapshot is kept.
	Err error
	// Refused are the findings that refused the snapshot (CodeRefused).
	Refused []skill.Diagnostic
}

// Diagnostics are c as diagnostics: the failure, or what moved.
func (c Change) Diagnostics() []skill.Diagnostic {
	s := Spec{ID: c.ID}
	if c.Err != nil {
		return []skill.Diagnostic{diag(s, skill.Error, CodeOf(c.Err), c.Err.Error()+"; the last good snapshot is kept")}
	}
	if !c.Moved {
		return nil
	}
	return []skill.Diagnostic{diag(s, skill.Info, CodeSynced, c.Summary())}
}

// Summary is one line: what moved, and the skills added, removed and
// changed.
func (c Change) Summary() string {
	if c.Err != nil {
		return fmt.Sprintf("%s: sync failed: %v", c.ID, c.Err)
	}
	if !c.Moved {
		return fmt.Sprintf("%s: unchanged at %s", c.ID, shortRev(c.To))
	}
	from := "nothing"
	if c.From != "" {
		from = shortRev(c.From)
	}
	parts := []string{fmt.Sprintf("%s: %s → %s", c.ID, from, shortRev(c.To))}
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
	mu := m.syncMu[s.ID]
	mu.Lock()
	defer mu.Unlock()
	ch = Change{ID: s.ID, URL: s.URL()}
	defer func() {
		if ch.Err != nil && !dry {
			m.setStale(s, ch.Err)
		}
	}()
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
	rev, err := f.Resolve(ctx)
	if err != nil {
		ch.Err = err
		return ch
	}
	ch.To = rev
	if old != nil && old.Revision == rev {
		if _, loaded := m.current(s.ID); loaded || dry {
			m.clearStale(s.ID)
			return ch
		}
	}
	dir := m.snapDir(s.ID, rev)
	fresh := false
	if _, err := os.Stat(dir); err != nil {
		if dry {
			dir = m.tempDir(s.ID)
			defer os.RemoveAll(dir)
		}
		if _, err := m.fetchInto(ctx, s, f, rev, dir); err != nil {
			ch.Err = err
			return ch
		}
		fresh = !dry
	}
	snap, digests := m.scan(ctx, s, rev, dir)
	if len(snap.skills) == 0 {
		if fresh {
			os.RemoveAll(dir)
		}
		where := "the repository"
		if len(s.Paths) > 0 {
			where = strings.Join(s.Paths, ", ")
		}
		ch.Err = Errorf(s.ID, CodeInvalid, "no skill (no SKILL.md with a name and description) under %s at %s", where, shortRev(rev))
		return ch
	}
	if m.opt.Gate != nil {
		if refused := m.opt.Gate(snap.skills); len(refused) > 0 {
			if fresh {
				os.RemoveAll(dir)
			}
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
		Digest: snapshotDigest(digests), Skills: digests, Synced: m.opt.Now().UTC()}
	diff(&ch, old, &pin)
	ch.Moved = old == nil || old.Digest != pin.Digest || old.Revision != pin.Revision
	if dry {
		return ch
	}
	m.lockMu.Lock()
	m.lock.Put(pin)
	err = m.lock.Write(m.opt.LockPath)
	m.lockMu.Unlock()
	if err != nil {
		ch.Err = err
		return ch
	}
	m.mu.Lock()
	m.state[s.ID] = snap
	delete(m.lastErr, s.ID)
	m.mu.Unlock()
	m.prune(s.ID, rev, ch.From)
	return ch
}

func (m *Manager) current(id string) (*snapshot, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.state[id]
	return s, ok
}

// LastError is why the last sync of source id failed ("" when it did
// not).
func (m *Manager) LastError(id string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.lastErr[id]
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
	m.lastErr[s.ID] = err.Error()
	if cur := m.state[s.ID]; cur != nil {
		d := diag(s, skill.Warning, CodeStale, fmt.Sprintf("the last sync failed (%v); serving the snapshot at %s", err, shortRev(cur.rev)))
		c := *cur
		c.stale = &d
		m.state[s.ID] = &c
	}
}

func (m *Manager) clearStale(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.lastErr, id)
	if cur := m.state[id]; cur != nil && cur.stale != nil {
		c := *cur
		c.stale = nil
		m.state[id] = &c
	}
}

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

// fetchInto fetches rev into a temporary folder beside dir and renames it
// to dir once the fetch is whole; a failed fetch leaves nothing.
func (m *Manager) fetchInto(ctx context.Context, s Spec, f Fetcher, rev, dir string) ([]string, error) {
	tmp := m.tempDir(s.ID)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return nil, Errorf(s.ID, CodeInvalid, "cannot create the cache folder: %v", err)
	}
	notes, err := f.Fetch(ctx, rev, tmp, m.opt.Limits)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return notes, nil // fetched by another process meanwhile
		}
		return nil, Errorf(s.ID, CodeInvalid, "cannot move the snapshot into place: %v", err)
	}
	return notes, nil
}

// scan reads a snapshot's skills, with their origin, and their digests.
func (m *Manager) scan(ctx context.Context, s Spec, rev, dir string) (*snapshot, map[string]string) {
	snap := &snapshot{rev: rev, dir: dir}
	roots := []string{dir}
	if len(s.Paths) > 0 {
		roots = roots[:0]
		for _, p := range s.Paths {
			roots = append(roots, filepath.Join(dir, filepath.FromSlash(p)))
		}
	}
	digests := map[string]string{}
	for i, root := range roots {
		opt := m.opt.Scan
		path := ""
		if len(s.Paths) > 0 {
			path = s.Paths[i]
		}
		opt.Origin = skill.Origin{Kind: s.Kind(), Root: s.URL(), Ref: s.Ref, Revision: rev, Provenance: path}
		if _, err := os.Stat(root); err != nil {
			snap.diags = append(snap.diags, diag(s, skill.Warning, CodeInvalid, fmt.Sprintf("paths: %q is not in the source at %s", path, shortRev(rev))))
			continue
		}
		res := source.ScanFolder(ctx, root, opt)
		for _, sk := range res.Skills {
			if _, dup := digests[sk.Name]; dup {
				continue // the catalog reports the collision
			}
			digests[sk.Name] = sk.ContentDigest()
			// Provenance: the skill's folder in the repository.
			if rel, err := filepath.Rel(dir, sk.Dir); err == nil {
				o := sk.Origin
				o.Provenance = filepath.ToSlash(rel)
				sk.Origin = o
			}
		}
		snap.skills = append(snap.skills, res.Skills...)
		snap.diags = append(snap.diags, res.Diagnostics...)
	}
	return snap, digests
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

// snapDir is where source id's snapshot at rev is kept.
func (m *Manager) snapDir(id, rev string) string {
	return filepath.Join(m.sourceDir(id), strings.ReplaceAll(rev, ":", "-"))
}

const tempPrefix = ".fetch-"

func (m *Manager) tempDir(id string) string {
	var b [8]byte
	rand.Read(b[:])
	return filepath.Join(m.sourceDir(id), tempPrefix+hex.EncodeToString(b[:]))
}

// cleanTemps removes what an interrupted fetch left.
func (m *Manager) cleanTemps(id string) {
	ents, _ := os.ReadDir(m.sourceDir(id))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.RemoveAll(filepath.Join(m.sourceDir(id), e.Name()))
		}
	}
}

// prune removes source id's snapshots other than keep and prev (a load
// that began before the swap may still read the previous one).
func (m *Manager) prune(id, keep, prev string) {
	ents, err := os.ReadDir(m.sourceDir(id))
	if err != nil {
		return
	}
	want := map[string]bool{filepath.Base(m.snapDir(id, keep)): true}
	if prev != "" {
		want[filepath.Base(m.snapDir(id, prev))] = true
	}
	for _, e := range ents {
		if !want[e.Name()] && !strings.HasPrefix(e.Name(), tempPrefix) {
			os.RemoveAll(filepath.Join(m.sourceDir(id), e.Name()))
		}
	}
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
