// Package watch reports changes under skill folders, debounced, for live
// reload. fsnotify is not recursive, so every folder below each root is
// watched, and folders created later are added as they appear.
//
// Not every folder matters as much: a skill is a folder holding SKILL.md,
// and discovery never looks for skills inside one, so a change in a
// skill's subfolders (references/, scripts/) only changes that skill's
// files. The folders discovery reads (the roots, the folders on the way
// to skills, the skill folders) take the watch budget first; the
// subfolders of skills take what is left.
//
// Watches are a shared, bounded resource: inotify allows each user
// fs.inotify.max_user_watches of them across all of the user's processes
// (kqueue holds a file descriptor per watched file). So a Watcher takes at
// most Options.MaxWatches, shallowest folders first (roots, then skill
// folders, then what is inside them), and polls the folders beyond it: a
// cheap periodic check of each folder's entries (names, sizes, times,
// modes). It says so once, in one log line, and never logs a line per
// folder.
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults of Options.
const (
	DefaultDebounce     = 100 * time.Millisecond
	DefaultPollInterval = 5 * time.Second
	// DefaultMaxWatches is the budget where the system publishes no
	// watch limit (every system but Linux): kqueue spends a file
	// descriptor on each watched folder and on each file in it.
	DefaultMaxWatches = 1024
	// maxUserWatchesFile is Linux's per-user inotify allowance; by
	// default a Watcher takes half of what is free of it, leaving the
	// rest to the user's other programs (editors, build tools, other
	// servers).
	maxUserWatchesFile = "/proc/sys/fs/inotify/max_user_watches"
)

// Bounds on what the Watcher logs and keeps about folders it cannot watch.
const (
	// maxWarnings individual warnings are logged per warnWindow; the rest
	// are counted and the count is logged with the next one after it.
	maxWarnings = 10
	warnWindow  = time.Minute
	// maxProblems folders are kept for Problems; the rest are counted.
	maxProblems = 100
	// pollShare: after a poll that took d, the next starts no sooner than
	// pollShare*d later, so polling uses at most 1/pollShare of a core:
	// 0.5%. (It was 10: at 50,000 skills, 104,000 folders past the inotify
	// budget kept an idle server at 7-11% of a core.) Past the budget a
	// change is noticed within PollInterval or 200 times a poll's length,
	// whichever is longer: at 50,000 skills about a minute. Since the
	// folders discovery reads take the budget first, what is polled there
	// is subfolders of skills (references/, scripts/): new skills and
	// SKILL.md edits are still seen at once.
	pollShare = 200
	maxDepth  = 32
	// walkChunk, walkPace: a walk of the folders (New's, and one of new
	// folders found by polling) sleeps walkPace times as long as each
	// walkChunk folders took, so it takes at most a fifth of a core and
	// yields to requests on a busy machine (where each chunk takes longer,
	// and so does the sleep after it). Its CPU is the system's: at 10,000
	// skills (40,000 folders) 0.8 s, a quarter of it inotify_add_watch,
	// a fifth getdents64; taken at half a core, it cost requests about a
	// fifth of their throughput in the round it fell in, beside a CPU hog
	// (bench/server.sh HOG=1 SPREAD=1). What changes in a folder before the walk reaches it is found
	// by its change time (Options.Since), so a slow walk loses nothing.
	walkChunk = 256
	walkPace  = 4
	// ctimeSlack: Options.Since is moved back by this much, for file
	// systems whose times are coarse.
	ctimeSlack = 2 * time.Second
)

// Options tune a Watcher. Zero fields take the defaults.
type Options struct {
	// Debounce: changes are sent at most once per Debounce (default 100 ms),
	// with every path that changed since the last batch.
	Debounce time.Duration
	// MaxWatches bounds the folders watched through the system's change
	// notifications; the folders beyond it are polled. Default: half of
	// fs.inotify.max_user_watches on Linux, DefaultMaxWatches elsewhere.
	MaxWatches int
	// PollInterval is how often polled folders are checked (default 5 s),
	// or 200 times as long as a check of them all takes, if longer.
	// A change there is reported within about this long.
	PollInterval time.Duration
	Logger       *slog.Logger
	// Since, when set, is when the caller last read the folders (the
	// catalog's scan): what changed after it and before the watch was set
	// up (by each entry's change time, ctime) is sent in the first batch,
	// so the caller need not read every folder again to catch up.
	Since time.Time
	// Cancel ends New's walk of the folders early (the server stops
	// while the watch is set up); the Watcher then covers what it reached.
	Cancel <-chan struct{}

	// addWatch replaces fsnotify's Add in tests, to cause the faults a
	// test cannot (the system's allowance running out).
	addWatch func(string) error
}

// Watcher sends batches of changed paths.
type Watcher struct {
	fs     *fsnotify.Watcher
	out    chan []string
	polls  chan []string // changes found by polling, for the loop
	opt    Options
	budget int
	// budgetFrom says where the budget came from, for the log.
	budgetFrom string
	roots      []string
	log        *slog.Logger
	done       chan struct{} // closed when loop has ended
	stop       chan struct{} // closed by Close, ends the poller
	pollDone   chan struct{}

	mu      sync.Mutex
	watched map[string]bool
	// polled maps each polled folder to the signature of its entries.
	polled map[string]uint64
	// full is set once the system refused a watch for lack of room: from
	// then on every new folder is polled.
	full     error
	toldPoll bool
	// initial holds what changed since Options.Since, found by New's
	// walk, for the first batch.
	initial []string
	// Problems are folders that could not be watched or polled (for
	// example for lack of permission).
	problems     []string
	problemCount int
	// warning rate limit
	warnStart  time.Time
	warned     int
	suppressed int
}

// New watches every folder below roots (skipping dot folders and
// node_modules, as discovery does, and following symlinked folders),
// within the watch budget, and polls the rest.
func New(roots []string, opt Options) (*Watcher, error) {
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = DefaultPollInterval
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if opt.addWatch == nil {
		opt.addWatch = fw.Add
	}
	w := &Watcher{fs: fw, out: make(chan []string, 1), polls: make(chan []string), opt: opt, log: opt.Logger,
		done: make(chan struct{}), stop: make(chan struct{}), pollDone: make(chan struct{}),
		watched: map[string]bool{}, polled: map[string]uint64{}}
	w.budget, w.budgetFrom = opt.MaxWatches, "watch.maxWatches"
	if w.budget <= 0 {
		w.budget, w.budgetFrom = SystemBudget()
	}
	var since int64
	if !opt.Since.IsZero() {
		since = opt.Since.Add(-ctimeSlack).UnixNano()
	}
	for _, r := range roots {
		w.roots = append(w.roots, r)
		if _, err := os.Stat(r); err != nil {
			// A root that does not exist yet is watched from its parent,
			// so creating it is noticed.
			w.add(filepath.Dir(r))
			continue
		}
		w.addTree(r, since, true)
	}
	w.tellPolling()
	go w.loop()
	go w.poll()
	return w, nil
}

// SystemBudget is the default watch budget and where it comes from: on
// Linux, half of the watches still free of fs.inotify.max_user_watches
// (the allowance less those this user's processes hold already, so a
// second server on the same tree leaves a quarter to others, not
// nothing); else DefaultMaxWatches.
func SystemBudget() (int, string) {
	if runtime.GOOS == "linux" {
		if n, from, ok := procBudget("/proc", os.Geteuid()); ok {
			return n, from
		}
	}
	return DefaultMaxWatches, "the default"
}

// procBudget is SystemBudget read from a /proc tree, for the user uid.
func procBudget(proc string, uid int) (int, string, bool) {
	data, err := os.ReadFile(filepath.Join(proc, maxUserWatchesFile[len("/proc/"):]))
	if err != nil {
		return 0, "", false
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || limit <= 1 {
		return 0, "", false
	}
	used := userWatches(proc, uid)
	free := max(limit-used, 0)
	return free / 2, fmt.Sprintf("half of the %d free of fs.inotify.max_user_watches (%d, of which this user's processes hold %d)", free, limit, used), true
}

// userWatches counts the inotify watches held by uid's processes: the
// "inotify wd:" lines of /proc/PID/fdinfo/FD for each descriptor that is
// an inotify instance. What cannot be read (a process gone, another
// user's) is not counted; an instance shared by several processes (a
// descriptor inherited by fork) counts for each, which errs towards a
// smaller budget.
func userWatches(proc string, uid int) int {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || !ownedBy(filepath.Join(proc, e.Name(), "status"), uid) {
			continue
		}
		n += procWatches(filepath.Join(proc, e.Name()))
	}
	return n
}

// ownedBy reports whether a /proc/PID/status names uid as the process's
// effective user, the one its inotify watches count against.
func ownedBy(status string, uid int) bool {
	data, err := os.ReadFile(status)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "Uid:" {
			return f[2] == strconv.Itoa(uid)
		}
	}
	return false
}

// procWatches counts the inotify watches of one process, /proc/PID.
func procWatches(dir string) int {
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return 0
	}
	n := 0
	for _, fd := range fds {
		if t, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err != nil || t != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(filepath.Join(dir, "fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(info)) {
			if strings.HasPrefix(line, "inotify wd:") {
				n++
			}
		}
	}
	return n
}

// Events returns the channel of batches. It closes after Close.
func (w *Watcher) Events() <-chan []string { return w.out }

// Problems lists folders that could not be watched or polled (at most
// 100; Stats counts them all).
func (w *Watcher) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.problems...)
}

// Watched reports how many folders are watched.
func (w *Watcher) Watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watched)
}

// Stats is what a Watcher covers and how.
type Stats struct {
	// Watched folders use a system watch; Polled ones are checked every
	// PollInterval; Problems could be neither.
	Watched, Polled, Problems int
	// Budget is the most folders it watches; BudgetFrom says why.
	Budget       int
	BudgetFrom   string
	PollInterval time.Duration
}

// Stats reports how many folders are watched and polled.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{Watched: len(w.watched), Polled: len(w.polled), Problems: w.problemCount,
		Budget: w.budget, BudgetFrom: w.budgetFrom, PollInterval: w.opt.PollInterval}
}

// Close stops watching and polling.
func (w *Watcher) Close() error {
	close(w.stop)
	<-w.pollDone
	err := w.fs.Close()
	<-w.done
	return err
}

// addTree adds root and the folders below it, breadth first, so that when
// the budget runs out the shallow folders are the watched ones; and the
// folders discovery reads before the subfolders of skill folders. With
// since (Unix ns) it records what changed after it, for the first batch.
// A paced walk sleeps as it goes (walkPace).
func (w *Watcher) addTree(root string, since int64, paced bool) {
	type entry struct {
		dir   string
		real  string // "" until resolved: a link's, or the root's
		depth int
	}
	seen := map[string]bool{}
	queue := []entry{{root, "", 0}}
	var inner []entry // inside skill folders: after the rest
	p := pacer{start: time.Now(), cancel: w.opt.Cancel, stop: w.stop}
	for len(queue) > 0 || len(inner) > 0 {
		var e entry
		isInner := len(queue) == 0
		if isInner {
			e, inner = inner[0], inner[1:]
		} else {
			e, queue = queue[0], queue[1:]
		}
		real := e.real
		if real == "" {
			r, err := filepath.EvalSymlinks(e.dir)
			if err != nil {
				continue
			}
			real = r
		}
		if seen[real] || e.depth > maxDepth {
			continue
		}
		seen[real] = true
		w.add(e.dir)
		subs, isSkill, changed := listDir(e.dir, since)
		if len(changed) > 0 {
			w.mu.Lock()
			w.initial = append(w.initial, changed...)
			w.mu.Unlock()
		}
		for _, sub := range subs {
			// A folder that is not a link is where its parent really
			// is: resolving only links saves a walk of every path
			// (about a million lstat calls at 50,000 skills).
			r := ""
			if !sub.link {
				r = real + string(filepath.Separator) + filepath.Base(sub.path)
			}
			if isSkill || isInner {
				inner = append(inner, entry{sub.path, r, e.depth + 1})
			} else {
				queue = append(queue, entry{sub.path, r, e.depth + 1})
			}
		}
		if !p.step(paced) {
			return
		}
	}
}

// pacer makes a paced walk sleep walkPace times as long as each
// walkChunk folders took. step reports false
// once the walk should end.
type pacer struct {
	n            int
	start        time.Time
	cancel, stop <-chan struct{}
}

func (p *pacer) step(paced bool) bool {
	p.n++
	if p.n%walkChunk != 0 {
		return true
	}
	select {
	case <-p.cancel:
		return false
	case <-p.stop:
		return false
	default:
	}
	if !paced {
		return true
	}
	t := time.NewTimer(walkPace * time.Since(p.start))
	defer t.Stop()
	select {
	case <-p.cancel:
		return false
	case <-p.stop:
		return false
	case <-t.C:
	}
	p.start = time.Now()
	return true
}

// subfolder is a folder in a folder, and whether it is reached through a
// symlink.
type subfolder struct {
	path string
	link bool
}

// listDirOf lists the folders in dir that discovery would enter, whether
// dir is a skill folder (holds SKILL.md or skill.md), and, with since
// (Unix ns), dir and the entries in it modified after since (listDir,
// on Linux, reads the folder without os.ReadDir's entries and uses the
// change time, not the modification time).
func listDirOf(dir string, since int64) (out []subfolder, isSkill bool, changed []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if since != 0 {
			changed = []string{dir} // unreadable now: let discovery say why
		}
		return nil, false, changed
	}
	if since != 0 {
		if st, err := os.Stat(dir); err == nil && st.ModTime().UnixNano() >= since {
			changed = append(changed, dir)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if skipName(name) {
			continue
		}
		p := filepath.Join(dir, name)
		if name == "SKILL.md" || name == "skill.md" {
			isSkill = true
		}
		if since != 0 {
			if info, err := e.Info(); err == nil && info.ModTime().UnixNano() >= since {
				changed = append(changed, p)
			}
		}
		if e.IsDir() {
			out = append(out, subfolder{p, false})
		} else if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				out = append(out, subfolder{p, true})
			}
		}
	}
	return out, isSkill, changed
}

func skipName(name string) bool { return name == "" || name[0] == '.' || name == "node_modules" }

// add watches dir if the budget allows, else polls it.
func (w *Watcher) add(dir string) {
	w.mu.Lock()
	if _, ok := w.polled[dir]; ok || w.watched[dir] {
		w.mu.Unlock()
		return
	}
	if w.full != nil || len(w.watched) >= w.budget {
		w.polled[dir] = 0
		w.mu.Unlock()
		w.startPolling(dir)
		return
	}
	w.watched[dir] = true
	w.mu.Unlock()
	err := w.opt.addWatch(dir)
	if err == nil {
		return
	}
	w.mu.Lock()
	delete(w.watched, dir)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		// The system's allowance is spent (other programs use it too):
		// poll this folder and every later one, without trying again.
		if w.full == nil {
			w.full = err
		}
		w.polled[dir] = 0
		w.mu.Unlock()
		w.startPolling(dir)
		return
	}
	w.problem(dir, err)
	w.mu.Unlock()
	w.warn("cannot watch folder; its changes need a reload", "dir", dir, "err", err)
}

// startPolling records dir's current signature.
func (w *Watcher) startPolling(dir string) {
	sig, err := signature(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.polled[dir]; !ok {
		return
	}
	if err != nil {
		delete(w.polled, dir)
		if !errors.Is(err, fs.ErrNotExist) {
			w.problem(dir, err)
		}
		return
	}
	w.polled[dir] = sig
}

// problem records a folder that is neither watched nor polled. w.mu held.
func (w *Watcher) problem(dir string, err error) {
	w.problemCount++
	if len(w.problems) < maxProblems {
		w.problems = append(w.problems, dir+": "+err.Error())
	}
}

// tellPolling logs, once in the Watcher's life, that some folders are
// polled: how many, why, and what to change.
func (w *Watcher) tellPolling() {
	w.mu.Lock()
	n := len(w.polled)
	if n == 0 || w.toldPoll {
		w.mu.Unlock()
		return
	}
	w.toldPoll = true
	why := fmt.Sprintf("over the watch budget of %d folders (%s)", w.budget, w.budgetFrom)
	if w.full != nil {
		why = fmt.Sprintf("the system refused more watches after %d (%v)", len(w.watched), w.full)
	}
	watched := len(w.watched)
	w.mu.Unlock()
	w.log.Warn("some skill folders are polled instead of watched: "+why+"; their changes are noticed within the poll interval. "+
		"Raise watch.maxWatches in loadout.json, or the system's limit (sysctl fs.inotify.max_user_watches on Linux)",
		"watched", watched, "polled", n, "poll_interval", w.opt.PollInterval)
}

// warn logs a warning, at most maxWarnings per warnWindow; the ones left
// out are counted and reported with the next warning logged.
func (w *Watcher) warn(msg string, args ...any) {
	w.mu.Lock()
	now := time.Now()
	if now.Sub(w.warnStart) > warnWindow {
		w.warnStart, w.warned = now, 0
	}
	if w.warned >= maxWarnings {
		w.suppressed++
		w.mu.Unlock()
		return
	}
	w.warned++
	last := w.warned == maxWarnings
	if w.suppressed > 0 {
		args = append(args, "suppressed_before", w.suppressed)
		w.suppressed = 0
	}
	w.mu.Unlock()
	if last {
		msg += fmt.Sprintf(" (the last warning of the watcher for %s; later ones are counted)", warnWindow)
	}
	w.log.Warn(msg, args...)
}

func (w *Watcher) loop() {
	defer close(w.done)
	defer close(w.out)
	pending := map[string]bool{}
	var timer *time.Timer
	var fire <-chan time.Time
	arm := func() {
		if timer == nil {
			timer = time.NewTimer(w.opt.Debounce)
			fire = timer.C
		}
	}
	// What changed between Options.Since and the watch: the first batch.
	w.mu.Lock()
	for _, p := range w.initial {
		pending[p] = true
	}
	w.initial = nil
	w.mu.Unlock()
	if len(pending) > 0 {
		arm()
	}
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			pending[ev.Name] = true
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipName(filepath.Base(ev.Name)) {
					// Not paced: the loop must keep reading events.
					w.addTree(ev.Name, 0, false)
					w.tellPolling()
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				w.forget(ev.Name, ev.Has(fsnotify.Rename))
			}
			arm()
		case paths := <-w.polls:
			for _, p := range paths {
				pending[p] = true
			}
			arm()
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: say the roots changed, so they are
				// rescanned.
				for _, r := range w.roots {
					pending[r] = true
				}
				arm()
			}
			w.warn("file watcher", "err", err)
		case <-fire:
			timer, fire = nil, nil
			batch := make([]string, 0, len(pending))
			for p := range pending {
				batch = append(batch, p)
			}
			sort.Strings(batch)
			pending = map[string]bool{}
			// Merge with a batch the reader has not taken yet.
			select {
			case old := <-w.out:
				batch = mergeSorted(old, batch)
			default:
			}
			w.out <- batch
		}
	}
}

// forget drops the watch of dir, removed or renamed; for a renamed
// folder, also those of the folders below it. Their watches would
// otherwise stay under the old paths: changes in the folder would be
// reported there, and the new path's walk (its Create event) could not
// watch it again (the system hands back the same watch for the same
// folder). A removed folder's watches the system drops itself, and each
// folder below it is reported removed on its own.
func (w *Watcher) forget(dir string, renamed bool) {
	w.mu.Lock()
	was := w.watched[dir]
	delete(w.watched, dir)
	if !renamed || !was {
		w.mu.Unlock()
		return
	}
	drop := []string{dir}
	prefix := dir + string(filepath.Separator)
	for d := range w.watched {
		if strings.HasPrefix(d, prefix) {
			delete(w.watched, d)
			drop = append(drop, d)
		}
	}
	w.mu.Unlock()
	for _, d := range drop {
		_ = w.fs.Remove(d)
	}
}

// poll checks the polled folders every PollInterval (or, when a check
// takes long, pollShare times as long as it took).
func (w *Watcher) poll() {
	defer close(w.pollDone)
	t := time.NewTimer(w.opt.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		start := time.Now()
		if changed := w.pollOnce(); len(changed) > 0 {
			select {
			case w.polls <- changed:
			case <-w.stop:
				return
			}
		}
		t.Reset(max(w.opt.PollInterval, pollShare*time.Since(start)))
	}
}

// pollOnce compares every polled folder with its last signature and
// returns the folders that changed. A folder that is gone stops being
// polled; new folders inside a changed one are added (watched if the
// budget has room again, else polled).
func (w *Watcher) pollOnce() []string {
	w.mu.Lock()
	dirs := make([]string, 0, len(w.polled))
	for d := range w.polled {
		dirs = append(dirs, d)
	}
	w.mu.Unlock()
	sort.Strings(dirs)
	var changed []string
	for _, dir := range dirs {
		select {
		case <-w.stop:
			return nil
		default:
		}
		sig, err := signature(dir)
		w.mu.Lock()
		old, ok := w.polled[dir]
		switch {
		case !ok:
		case err != nil:
			delete(w.polled, dir)
		default:
			w.polled[dir] = sig
		}
		w.mu.Unlock()
		if !ok || (err == nil && sig == old) {
			continue
		}
		changed = append(changed, dir)
		if err == nil {
			subs, _, _ := listDir(dir, 0)
			for _, sub := range subs {
				w.addTree(sub.path, 0, true)
			}
		}
	}
	if len(changed) > 0 {
		w.tellPolling()
	}
	return changed
}

func mergeSorted(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(a, b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
