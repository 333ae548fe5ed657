package watch

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loadout/loadout/internal/testutil"
)

func next(t *testing.T, w *Watcher) []string {
	t.Helper()
	select {
	case b := <-w.Events():
		return b
	case <-time.After(3 * time.Second):
		t.Fatal("no change reported within 3 s")
	}
	return nil
}

func contains(batch []string, suffix string) bool {
	for _, p := range batch {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

func TestWatch(t *testing.T) {
	root := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(root, "a", "refs"), 0o755))
	testutil.Must(t, os.MkdirAll(filepath.Join(root, ".git", "x"), 0o755))
	testutil.Write(t, filepath.Join(root, "a", "SKILL.md"), "x")
	w, err := New([]string{root}, Options{Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Watched() != 3 { // root, a, a/refs; not .git
		t.Errorf("watching %d folders", w.Watched())
	}

	testutil.Write(t, filepath.Join(root, "a", "SKILL.md"), "y")
	testutil.Write(t, filepath.Join(root, "a", "refs", "r.md"), "r")
	b := next(t, w)
	if !contains(b, filepath.Join("a", "SKILL.md")) || !contains(b, filepath.Join("refs", "r.md")) {
		t.Errorf("batch: %v", b)
	}

	// A folder created later is watched too.
	testutil.Must(t, os.MkdirAll(filepath.Join(root, "new", "deep"), 0o755))
	next(t, w)
	time.Sleep(100 * time.Millisecond)
	testutil.Write(t, filepath.Join(root, "new", "deep", "SKILL.md"), "z")
	deadline := time.After(3 * time.Second)
	for {
		select {
		case b := <-w.Events():
			if contains(b, filepath.Join("deep", "SKILL.md")) {
				return
			}
		case <-deadline:
			t.Fatal("a change in a folder created after start was not reported")
		}
	}
}

// logBuffer collects slog output from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// skillsTree makes n skill folders, each with SKILL.md and references/.
func skillsTree(t *testing.T, n int) string {
	root := t.TempDir()
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("skill-%02d", i))
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "references"), 0o755))
		testutil.Write(t, filepath.Join(dir, "SKILL.md"), "x")
		testutil.Write(t, filepath.Join(dir, "references", "r.md"), "r")
	}
	return root
}

// waitFor waits for a batch holding a path under dir.
func waitFor(t *testing.T, w *Watcher, dir string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case b := <-w.Events():
			for _, p := range b {
				if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no change reported under %s", dir)
		}
	}
}

func countLines(lines []string, sub string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// Beyond its budget the watcher polls: shallow folders are watched, the
// rest are still noticed, and one line says so.
func TestBudgetPollsTheRest(t *testing.T) {
	root := skillsTree(t, 6) // 1 root + 6 skills + 6 references = 13 folders
	var logs logBuffer
	w, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, MaxWatches: 4, PollInterval: 50 * time.Millisecond, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st := w.Stats()
	if st.Watched != 4 || st.Polled != 9 || st.Budget != 4 {
		t.Fatalf("stats %+v, want 4 watched (the root and 3 skills) and 9 polled", st)
	}
	// Breadth first: the root and the first skills are the watched ones.
	for _, d := range []string{root, filepath.Join(root, "skill-00"), filepath.Join(root, "skill-02")} {
		w.mu.Lock()
		ok := w.watched[d]
		w.mu.Unlock()
		if !ok {
			t.Errorf("%s is not watched", d)
		}
	}

	// Edits in polled folders are noticed: a skill folder, a deep folder,
	// a folder created inside a polled one, and a removal.
	polledSkill := filepath.Join(root, "skill-05")
	testutil.Write(t, filepath.Join(polledSkill, "SKILL.md"), "changed")
	waitFor(t, w, polledSkill)
	deep := filepath.Join(root, "skill-04", "references")
	testutil.Write(t, filepath.Join(deep, "r.md"), "longer text")
	waitFor(t, w, deep)
	fresh := filepath.Join(root, "skill-05", "scripts")
	testutil.Must(t, os.Mkdir(fresh, 0o755))
	waitFor(t, w, polledSkill)
	testutil.Must(t, os.WriteFile(filepath.Join(fresh, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	waitFor(t, w, fresh)
	testutil.Must(t, os.RemoveAll(filepath.Join(root, "skill-03", "references")))
	waitFor(t, w, filepath.Join(root, "skill-03"))
	// A change in a watched folder still comes through the watch.
	testutil.Write(t, filepath.Join(root, "skill-00", "SKILL.md"), "y")
	waitFor(t, w, filepath.Join(root, "skill-00"))

	lines := logs.lines()
	if n := countLines(lines, "polled instead of watched"); n != 1 {
		t.Errorf("%d summary lines, want exactly 1:\n%s", n, strings.Join(lines, "\n"))
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "polled=9") || !strings.Contains(lines[0], "watch budget of 4") || !strings.Contains(lines[0], "watch.maxWatches") {
		t.Errorf("log:\n%s", strings.Join(lines, "\n"))
	}
}

// When the system runs out of watches before the budget does (other
// programs use the same allowance), the watcher stops asking, polls the
// rest, and logs one line, not one per folder.
func TestSystemLimitFallsBackToPolling(t *testing.T) {
	root := skillsTree(t, 30)
	var logs logBuffer
	calls := 0
	opt := Options{Debounce: 20 * time.Millisecond, MaxWatches: 1000, PollInterval: 50 * time.Millisecond, Logger: logs.logger(),
		addWatch: func(string) error {
			// The fault a test cannot cause without lowering the whole
			// machine's limit: inotify_add_watch failing with ENOSPC.
			calls++
			if calls > 5 {
				return syscall.ENOSPC
			}
			return nil
		}}
	w, err := New([]string{root}, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st := w.Stats()
	if st.Watched != 5 || st.Polled != 61-5 || calls != 6 || st.Problems != 0 {
		t.Errorf("stats %+v after %d attempts: want 5 watched, the other 56 polled, one refused attempt", st, calls)
	}
	lines := logs.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "refused more watches after 5") || !strings.Contains(lines[0], "no space left on device") {
		t.Errorf("want one summary line, got:\n%s", strings.Join(lines, "\n"))
	}
	dir := filepath.Join(root, "skill-29", "references")
	testutil.Write(t, filepath.Join(dir, "new.md"), "n")
	waitFor(t, w, dir)
}

// Folders that cannot be watched for another reason are warned about at
// most maxWarnings times, however many there are.
func TestWarningsAreCapped(t *testing.T) {
	root := skillsTree(t, 40)
	var logs logBuffer
	w, err := New([]string{root}, Options{Logger: logs.logger(), addWatch: func(string) error { return syscall.EACCES }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lines := logs.lines()
	if len(lines) != maxWarnings || !strings.Contains(lines[maxWarnings-1], "later ones are counted") {
		t.Errorf("%d lines for 81 refused folders, want %d:\n%s", len(lines), maxWarnings, strings.Join(lines, "\n"))
	}
	if st := w.Stats(); st.Problems != 81 || len(w.Problems()) != 81 {
		t.Errorf("stats %+v, %d problems listed", st, len(w.Problems()))
	}
}

// By default the watcher takes half of what is free of the user's
// inotify allowance.
func TestSystemBudget(t *testing.T) {
	n, from := SystemBudget()
	data, err := os.ReadFile(maxUserWatchesFile)
	if err != nil {
		if os.Getenv("CI") != "" && runtime.GOOS == "linux" {
			t.Fatalf("CI on Linux without %s: %v", maxUserWatchesFile, err)
		}
		if n != DefaultMaxWatches {
			t.Errorf("budget %d without %s", n, maxUserWatchesFile)
		}
		return
	}
	limit, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if n > limit/2 || !strings.Contains(from, "max_user_watches ("+strconv.Itoa(limit)+",") {
		t.Errorf("budget %d (%s), want at most half of %d", n, from, limit)
	}
}

// fakeProc writes a /proc-like tree: max_user_watches, and processes
// with their effective uid and descriptors (target of the fd link, and
// the fdinfo text).
func fakeProc(t *testing.T, limit string, procs map[string]fakeProcess) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sys/fs/inotify"), 0o755))
	must(os.WriteFile(filepath.Join(root, "sys/fs/inotify/max_user_watches"), []byte(limit), 0o644))
	for pid, p := range procs {
		dir := filepath.Join(root, pid)
		must(os.MkdirAll(filepath.Join(dir, "fdinfo"), 0o755))
		must(os.WriteFile(filepath.Join(dir, "status"), []byte("Name:\tx\nUid:\t"+p.uid+"\t"+p.uid+"\t"+p.uid+"\t"+p.uid+"\n"), 0o644))
		if p.noFDs {
			continue
		}
		must(os.MkdirAll(filepath.Join(dir, "fd"), 0o755))
		for fd, d := range p.fds {
			must(os.Symlink(d.target, filepath.Join(dir, "fd", fd)))
			must(os.WriteFile(filepath.Join(dir, "fdinfo", fd), []byte(d.info), 0o644))
		}
	}
	return root
}

type fakeProcess struct {
	uid   string
	noFDs bool // fd cannot be read
	fds   map[string]fakeFD
}

type fakeFD struct{ target, info string }

func wds(n int) string {
	s := "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n"
	for i := range n {
		s += fmt.Sprintf("inotify wd:%x ino:%x sdev:800001 mask:fc6 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0\n", i+1, 100+i)
	}
	return s
}

// TestProcBudget: the budget is half of what is free, counting the
// watches of this user's inotify descriptors only: not another user's
// processes, not a descriptor that is not inotify (whatever its fdinfo
// says), not a process whose descriptors cannot be read.
func TestProcBudget(t *testing.T) {
	ino := "anon_inode:inotify"
	proc := fakeProc(t, "1000\n", map[string]fakeProcess{
		"10":   {uid: "500", fds: map[string]fakeFD{"3": {ino, wds(300)}, "4": {ino, wds(2)}, "5": {"/dev/null", wds(50)}, "6": {"anon_inode:[eventpoll]", "tfd: 3\n"}}},
		"11":   {uid: "500", fds: map[string]fakeFD{"7": {ino, wds(100)}}},
		"12":   {uid: "501", fds: map[string]fakeFD{"3": {ino, wds(400)}}}, // another user
		"13":   {uid: "500", noFDs: true},
		"self": {uid: "500", fds: map[string]fakeFD{"3": {ino, wds(1000)}}}, // not a process's number
	})
	n, from, ok := procBudget(proc, 500)
	if !ok || n != (1000-402)/2 || !strings.Contains(from, "598 free") || !strings.Contains(from, "hold 402") {
		t.Errorf("budget %d (%s) %v, want %d", n, from, ok, (1000-402)/2)
	}
	if n, _, _ := procBudget(proc, 501); n != (1000-400)/2 {
		t.Errorf("uid 501: budget %d, want %d", n, (1000-400)/2)
	}
	// Nothing free: every folder is polled, none watched.
	full := fakeProc(t, "402", map[string]fakeProcess{"10": {uid: "500", fds: map[string]fakeFD{"3": {ino, wds(402)}}}})
	if n, _, ok := procBudget(full, 500); !ok || n != 0 {
		t.Errorf("all in use: budget %d %v, want 0", n, ok)
	}
	over := fakeProc(t, "10", map[string]fakeProcess{"10": {uid: "500", fds: map[string]fakeFD{"3": {ino, wds(40)}}}})
	if n, _, ok := procBudget(over, 500); !ok || n != 0 {
		t.Errorf("more in use than allowed: budget %d %v, want 0", n, ok)
	}
	// No allowance published: the caller's default.
	if _, _, ok := procBudget(t.TempDir(), 500); ok {
		t.Error("a budget without max_user_watches")
	}
	// An allowance of 1 or less is not one to halve: the default; 2 is.
	for limit, want := range map[string]bool{"0": false, "1": false, "2": true, "x": false} {
		if _, _, ok := procBudget(fakeProc(t, limit, nil), 500); ok != want {
			t.Errorf("max_user_watches %s: budget read %v, want %v", limit, ok, want)
		}
	}
}

// TestOwnedBy: the effective uid is the third field of the "Uid:" line;
// a line that stops right after it still names it, one that stops before
// it names nobody.
func TestOwnedBy(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		status string
		want   bool
	}{
		{"Uid:\t1\t500\t1\t1\n", true},
		{"Uid:\t1\t500\n", true},
		{"Uid:\t500\n", false},
		{"Uid:\t500\t501\t500\t500\n", false},
		{"Gid:\t500\t500\t500\n", false},
	} {
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, []byte("Name:\tx\n"+c.status), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := ownedBy(f, 500); got != c.want {
			t.Errorf("ownedBy(%q, 500) = %v, want %v", c.status, got, c.want)
		}
	}
	if ownedBy(filepath.Join(dir, "missing"), 500) {
		t.Error("a status that cannot be read names its owner")
	}
}

// TestProcWatchesReal: on Linux, the count read from /proc/self is the
// watches this process holds, watch for watch.
func TestProcWatchesReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	before := procWatches("/proc/self")
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	for i := range 5 {
		d := filepath.Join(t.TempDir(), strconv.Itoa(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fw.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if got := procWatches("/proc/self"); got != before+5 {
		t.Fatalf("/proc/self holds %d watches, want %d", got, before+5)
	}
	// And the whole user's count includes them.
	if used := userWatches("/proc", os.Geteuid()); used < before+5 {
		t.Errorf("the user's processes hold %d watches, fewer than this one's %d", used, before+5)
	}
	fw.Close()
	if got := procWatches("/proc/self"); got != before {
		t.Errorf("after Close, %d watches, want %d", got, before)
	}
}

// BenchmarkPoll measures one poll of folders beyond the budget (each with
// SKILL.md and references/): the cost per folder bounds what polling a
// large tree costs per PollInterval.
func BenchmarkPoll(b *testing.B) {
	root := b.TempDir()
	const skills = 500
	for i := 0; i < skills; i++ {
		dir := filepath.Join(root, fmt.Sprintf("skill-%03d", i))
		testutil.Must(b, os.MkdirAll(filepath.Join(dir, "references"), 0o755))
		testutil.Write(b, filepath.Join(dir, "SKILL.md"), "x")
		testutil.Write(b, filepath.Join(dir, "references", "r.md"), "r")
	}
	w, err := New([]string{root}, Options{MaxWatches: 1, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	polled := w.Stats().Polled
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if changed := w.pollOnce(); len(changed) != 0 {
			b.Fatalf("changes: %v", changed)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(polled), "ns/folder")
}
