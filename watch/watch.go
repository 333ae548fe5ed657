// Package watch reports changes under skill folders, debounced, for live
// reload. fsnotify is not recursive, so every folder below each root is
// watched, and folders created later are added as they appear.
package watch

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher sends batches of changed paths.
type Watcher struct {
	fs       *fsnotify.Watcher
	out      chan []string
	debounce time.Duration
	log      *slog.Logger
	done     chan struct{}

	mu      sync.Mutex
	watched map[string]bool
	// Problems are folders that could not be watched (for example the
	// system's inotify limit); the server reports them as diagnostics.
	problems []string
}

// New watches every folder below roots (skipping dot folders and
// node_modules, as discovery does, and following symlinked folders).
// Changes are sent at most once per debounce (100 ms if zero), with every
// path that changed since the last batch.
func New(roots []string, debounce time.Duration, log *slog.Logger) (*Watcher, error) {
	if debounce <= 0 {
		debounce = 100 * time.Millisecond
	}
	if log == nil {
		log = slog.Default()
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watcher{fs: fw, out: make(chan []string, 1), debounce: debounce, log: log, done: make(chan struct{}), watched: map[string]bool{}}
	for _, r := range roots {
		if _, err := os.Stat(r); err != nil {
			// A root that does not exist yet is watched from its parent,
			// so creating it is noticed.
			w.add(filepath.Dir(r), 0)
			continue
		}
		w.addTree(r)
	}
	go w.loop()
	return w, nil
}

// Events returns the channel of batches. It closes after Close.
func (w *Watcher) Events() <-chan []string { return w.out }

// Problems lists folders that could not be watched.
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

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.fs.Close()
	<-w.done
	return err
}

const maxDepth = 32

func (w *Watcher) addTree(root string) {
	seen := map[string]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] || depth > maxDepth {
			return
		}
		seen[real] = true
		w.add(dir, depth)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			name := e.Name()
			if name[0] == '.' || name == "node_modules" {
				continue
			}
			p := filepath.Join(dir, name)
			if e.IsDir() {
				walk(p, depth+1)
			} else if e.Type()&fs.ModeSymlink != 0 {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					walk(p, depth+1)
				}
			}
		}
	}
	walk(root, 0)
}

func (w *Watcher) add(dir string, depth int) {
	w.mu.Lock()
	if w.watched[dir] {
		w.mu.Unlock()
		return
	}
	w.watched[dir] = true
	w.mu.Unlock()
	if err := w.fs.Add(dir); err != nil {
		w.mu.Lock()
		delete(w.watched, dir)
		w.problems = append(w.problems, dir+": "+err.Error())
		w.mu.Unlock()
		w.log.Warn("cannot watch folder; its changes need a reload", "dir", dir, "err", err)
	}
}

func (w *Watcher) loop() {
	defer close(w.done)
	defer close(w.out)
	pending := map[string]bool{}
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			pending[ev.Name] = true
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					base := filepath.Base(ev.Name)
					if base[0] != '.' && base != "node_modules" {
						w.addTree(ev.Name)
					}
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				w.mu.Lock()
				delete(w.watched, ev.Name)
				w.mu.Unlock()
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
				fire = timer.C
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: say the roots changed, so they are rescanned.
				w.mu.Lock()
				for d := range w.watched {
					pending[d] = true
				}
				w.mu.Unlock()
			}
			w.log.Warn("file watcher", "err", err)
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
