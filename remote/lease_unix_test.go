//go:build unix

package remote

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// TestLeaseKeepsFolder: a folder whose lease another reader holds is not
// removed; once the lease is released it is, with its lease file. Names
// that are not one folder of the source are never removed.
func TestLeaseKeepsFolder(t *testing.T) {
	src := t.TempDir()
	snap := filepath.Join(src, "abc.1")
	testutil.Must(t, os.MkdirAll(snap, 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(snap, "f"), []byte("x"), 0o644))
	l, err := acquireLease(src, "abc.1")
	if err != nil {
		t.Fatal(err)
	}
	// A second reader shares the lease.
	l2, err := acquireLease(src, "abc.1")
	if err != nil {
		t.Fatalf("a second shared lease: %v", err)
	}
	if removeUnleased(src, "abc.1") {
		t.Fatal("a leased folder was removed")
	}
	l.release()
	l.release() // twice is harmless
	if removeUnleased(src, "abc.1") {
		t.Fatal("a folder another reader still leases was removed")
	}
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("the leased folder: %v", err)
	}
	l2.release()
	if !removeUnleased(src, "abc.1") {
		t.Fatal("an unleased folder was kept")
	}
	for _, p := range []string{snap, leasePath(src, "abc.1")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	// A folder already gone counts as removed.
	if !removeUnleased(src, "abc.1") {
		t.Error("removing a folder already gone reported false")
	}
	var none *lease
	none.release() // a nil lease holds nothing
	// The lease folder itself, and names with a separator, are not one
	// folder of the source.
	other := filepath.Join(src, "x", "y")
	testutil.Must(t, os.MkdirAll(other, 0o755))
	for _, name := range []string{leaseDir, "x/y", `x\y`} {
		if removeUnleased(src, name) {
			t.Errorf("removeUnleased(%q) removed it", name)
		}
	}
	for _, p := range []string{filepath.Join(src, leaseDir), other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestLeaseFileCannotBeMade: where the lease folder cannot be made (a
// file is in its place), no lease is taken and nothing is removed.
func TestLeaseFileCannotBeMade(t *testing.T) {
	src := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(src, "abc.1"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(src, leaseDir), []byte("not a folder"), 0o644))
	if l, err := acquireLease(src, "abc.1"); err == nil {
		l.release()
		t.Error("a lease was taken without a lease folder")
	}
	if removeUnleased(src, "abc.1") {
		t.Error("a folder was removed without its lease file")
	}
	if _, err := os.Stat(filepath.Join(src, "abc.1")); err != nil {
		t.Errorf("the folder: %v", err)
	}
}

// TestPinWaitsForTheLockFolder: a sync does not write the lock file while
// another process holds the lock on its folder (it would read the lock
// before the other's write and drop the other's pin); it writes once the
// other lets go.
func TestPinWaitsForTheLockFolder(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	unlock := lockFolder(filepath.Dir(fx.opt.LockPath))
	done := make(chan Change)
	go func() { done <- m.Sync(context.Background())[0] }()
	select {
	case ch := <-done:
		unlock()
		t.Fatalf("the sync wrote its pin while another process held the lock folder: %+v", ch)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(fx.opt.LockPath); !os.IsNotExist(err) {
		t.Errorf("the lock file was written while the folder was locked: %v", err)
	}
	unlock()
	if ch := <-done; ch.Err != nil || !ch.Moved {
		t.Fatalf("the sync after the other let go: %+v", ch)
	}
	if l, err := ReadLock(fx.opt.LockPath); err != nil || l.Get(m.Specs()[0].ID) == nil {
		t.Errorf("the pin is not in the lock: %v", err)
	}
}

// TestGCRemovesStrayLeases: a lease file whose folder is gone (a process
// that ended between leasing and fetching leaves one) is removed by the
// next sync's clean-up; the leases of folders still there are kept.
func TestGCRemovesStrayLeases(t *testing.T) {
	fx, m, id := pinnedFixture(t, map[string]string{"pdf": "v1"})
	src := filepath.Join(fx.opt.Cache, id)
	testutil.Must(t, os.WriteFile(leasePath(src, ".fetch-0123456789abcdef"), nil, 0o644))
	_, served, _ := m.Snapshot(id)
	fx.revision("bbb222", map[string]string{"pdf": "v2"})
	if ch := m.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved {
		t.Fatalf("sync: %+v", ch)
	}
	_, now, _ := m.Snapshot(id)
	got := cacheEntries(t, src)
	slices.Sort(got)
	want := []string{filepath.Base(served), filepath.Base(now)}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the cache holds %v, want the two snapshots served and no stray lease", got)
	}
	for _, n := range want {
		if _, err := os.Stat(leasePath(src, n)); err != nil {
			t.Errorf("the lease of %s: %v", n, err)
		}
	}
}

// TestFetchedFolderHeld: a folder just fetched stays leased by the
// fetcher's hold until the caller has leased it: another process's
// clean-up cannot remove it in between. Once let go, it can.
func TestFetchedFolderHeld(t *testing.T) {
	fx := newFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	s := m.Specs()[0]
	for _, temp := range []bool{false, true} {
		name, hold, err := m.fetchNew(context.Background(), s, fx.f, "aaa111", temp)
		if err != nil {
			t.Fatal(err)
		}
		if temp && !strings.HasPrefix(name, tempPrefix) || !temp && entryRev(name) != "aaa111" {
			t.Errorf("temp %v: the folder is named %q", temp, name)
		}
		src := m.sourceDir(s.ID)
		if removeUnleased(src, name) {
			t.Fatalf("temp %v: a folder still held was removed", temp)
		}
		if _, err := os.Stat(filepath.Join(src, name, "skills", "pdf", "SKILL.md")); err != nil {
			t.Fatalf("temp %v: %v", temp, err)
		}
		hold.release()
		if !removeUnleased(src, name) {
			t.Errorf("temp %v: the folder let go of was kept", temp)
		}
	}
}
