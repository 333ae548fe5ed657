package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

func isWatched(w *Watcher, dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watched[dir]
}

func isPolled(w *Watcher, dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.polled[dir]
	return ok
}

// The folders discovery reads (on the way to skills, and skill folders)
// take the budget before the subfolders of skill folders, however deep
// they are; what is left over is polled, and still noticed.
func TestSkillSubfoldersTakeTheBudgetLast(t *testing.T) {
	root := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(root, "skill-a", "references"), 0o755))
	testutil.Write(t, filepath.Join(root, "skill-a", "SKILL.md"), "a")
	deepSkill := filepath.Join(root, "group", "sub", "skill-b")
	testutil.Must(t, os.MkdirAll(deepSkill, 0o755))
	testutil.Write(t, filepath.Join(deepSkill, "SKILL.md"), "b")
	// Folders: root; group, skill-a; group/sub, skill-a/references
	// (depth 2, inside a skill); group/sub/skill-b (depth 3). Depth
	// first would watch references and poll skill-b.
	w, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, MaxWatches: 5, PollInterval: 50 * time.Millisecond, Logger: (&logBuffer{}).logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	refs := filepath.Join(root, "skill-a", "references")
	if !isWatched(w, deepSkill) || !isPolled(w, refs) {
		t.Fatalf("want %s watched and %s polled; stats %+v", deepSkill, refs, w.Stats())
	}
	// A new file in the polled references/ is noticed.
	testutil.Write(t, filepath.Join(refs, "new.md"), "n")
	waitFor(t, w, refs)
	// A folder created deep below the root that later gets a SKILL.md.
	deep := filepath.Join(root, "group", "x", "y", "z")
	testutil.Must(t, os.MkdirAll(deep, 0o755))
	waitFor(t, w, filepath.Join(root, "group"))
	time.Sleep(100 * time.Millisecond)
	testutil.Write(t, filepath.Join(deep, "SKILL.md"), "z")
	waitFor(t, w, deep)
}

// The same rule at the exact budget: with room for the five folders
// discovery reads plus one, one subfolder of a skill is watched.
func TestSkillSubfoldersTakeWhatIsLeft(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"a", "b"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(root, "g", s, "references"), 0o755))
		testutil.Write(t, filepath.Join(root, "g", s, "SKILL.md"), s)
	}
	// root, g, g/a, g/b: 4 folders discovery reads; 2 inside skills.
	for budget, watchedRefs := range map[int]int{4: 0, 5: 1, 6: 2} {
		w, err := New([]string{root}, Options{MaxWatches: budget, PollInterval: time.Hour, Logger: (&logBuffer{}).logger()})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range []string{"a", "b"} {
			if !isWatched(w, filepath.Join(root, "g", s)) {
				t.Errorf("budget %d: skill folder %s not watched", budget, s)
			}
			if isWatched(w, filepath.Join(root, "g", s, "references")) {
				n++
			}
		}
		if n != watchedRefs {
			t.Errorf("budget %d: %d references/ watched, want %d", budget, n, watchedRefs)
		}
		w.Close()
	}
}

// What changed after Options.Since and before the watch was set up comes
// in the first batch, by change time; what is older does not.
func TestSinceReportsChangesBeforeTheWatch(t *testing.T) {
	root := skillsTree(t, 3)
	time.Sleep(30 * time.Millisecond) // the kernel's clock for file times is coarse
	mark := time.Now()
	time.Sleep(30 * time.Millisecond)
	testutil.Write(t, filepath.Join(root, "skill-01", "references", "r.md"), "edited")
	testutil.Must(t, os.Mkdir(filepath.Join(root, "skill-new"), 0o755))

	// Since is moved back by ctimeSlack: mark+ctimeSlack means "after mark".
	w, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, Since: mark.Add(ctimeSlack)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b := next(t, w)
	// (r.md was written in place: its folder did not change.)
	want := []string{root, filepath.Join(root, "skill-01", "references", "r.md"), filepath.Join(root, "skill-new")}
	if len(b) != len(want) {
		t.Fatalf("first batch %v, want %v", b, want)
	}
	for i := range want {
		if b[i] != want[i] {
			t.Fatalf("first batch %v, want %v", b, want)
		}
	}

	// No change after Since: no batch.
	w2, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, Since: time.Now().Add(ctimeSlack + time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	select {
	case b := <-w2.Events():
		t.Fatalf("a batch with nothing changed since: %v", b)
	case <-time.After(300 * time.Millisecond):
	}
	// Without Since, none either.
	w3, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	select {
	case b := <-w3.Events():
		t.Fatalf("a batch without Since: %v", b)
	case <-time.After(300 * time.Millisecond):
	}
}

// An edit made to look old (its modification time set back, as `cp -p`,
// `touch -d` or an unpacked archive do) is still reported: Since is
// compared with the change time, which no one can set back.
func TestSinceSeesBackdatedEdits(t *testing.T) {
	root := skillsTree(t, 2)
	time.Sleep(30 * time.Millisecond)
	mark := time.Now()
	time.Sleep(30 * time.Millisecond)
	edited := filepath.Join(root, "skill-00", "SKILL.md")
	testutil.Write(t, edited, "---\nname: skill-00\ndescription: changed behind the watch\n---\n")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	testutil.Must(t, os.Chtimes(edited, old, old))
	w, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, Since: mark.Add(ctimeSlack)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b := next(t, w)
	if !slices.Contains(b, edited) {
		t.Fatalf("first batch %v does not name %s, edited after Since with its modification time set to %s", b, edited, old.Format(time.DateOnly))
	}
}

// A renamed skill folder is reported, and changes in it are still
// noticed under its new name; so are changes in a folder reached through
// a symlink.
func TestRenamedAndSymlinkedSkillFolders(t *testing.T) {
	root := skillsTree(t, 2)
	elsewhere := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(elsewhere, "linked", "references"), 0o755))
	testutil.Write(t, filepath.Join(elsewhere, "linked", "SKILL.md"), "l")
	testutil.Must(t, os.Symlink(filepath.Join(elsewhere, "linked"), filepath.Join(root, "linked")))
	for _, budget := range []int{0, 3} { // all watched; most polled
		w, err := New([]string{root}, Options{Debounce: 20 * time.Millisecond, MaxWatches: budget, PollInterval: 50 * time.Millisecond, Logger: (&logBuffer{}).logger()})
		if err != nil {
			t.Fatal(err)
		}
		refs := filepath.Join(root, "linked", "references")
		testutil.Write(t, filepath.Join(refs, "new.md"), "n")
		waitFor(t, w, refs)

		from, to := filepath.Join(root, "skill-00"), filepath.Join(root, "skill-moved")
		testutil.Must(t, os.Rename(from, to))
		waitFor(t, w, to)
		time.Sleep(100 * time.Millisecond)
		testutil.Write(t, filepath.Join(to, "references", "after.md"), "a")
		waitFor(t, w, to)
		testutil.Must(t, os.Rename(to, from))
		waitFor(t, w, from)
		w.Close()
	}
}

// Cancel ends New's walk: the Watcher covers what it reached, one chunk.
func TestCancelEndsTheWalk(t *testing.T) {
	root := t.TempDir()
	for i := range walkChunk + 20 {
		testutil.Must(t, os.Mkdir(filepath.Join(root, "d"+string(rune('a'+i/26%26))+string(rune('a'+i%26))+"-"+itoa(i)), 0o755))
	}
	cancel := make(chan struct{})
	close(cancel)
	w, err := New([]string{root}, Options{Cancel: cancel, MaxWatches: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Watched(); got != walkChunk {
		t.Errorf("watching %d folders after a cancelled walk, want the first chunk, %d", got, walkChunk)
	}
	w2, err := New([]string{root}, Options{MaxWatches: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if got := w2.Watched(); got != walkChunk+21 {
		t.Errorf("watching %d folders, want %d", got, walkChunk+21)
	}
}

func itoa(i int) string {
	return string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}
