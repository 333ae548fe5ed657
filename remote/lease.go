package remote

import (
	"os"
	"path/filepath"
	"strings"
)

// Leases keep a snapshot folder from being removed while some process
// serves it. Every process that reads a folder of the cache (serve, the
// catalog commands, a sync fetching into it) holds a shared lock on the
// folder's lease file, Cache/ID/.leases/NAME, for as long as it may read
// it; a process removes a folder only after taking an exclusive lock on its
// lease without waiting. The operating system drops a process's locks when
// it ends, however it ends, so a crashed server holds nothing, and a
// process id that is reused later holds nothing either.
//
// Where there are no such locks (lease_other.go), no process removes a
// folder another may serve: old snapshots stay in the cache.

const leaseDir = ".leases"

// lease is a held shared lock on one cache entry's lease file.
type lease struct {
	f *os.File
}

func (l *lease) release() {
	if l != nil && l.f != nil {
		l.f.Close() // drops the lock
		l.f = nil
	}
}

func leasePath(srcDir, name string) string { return filepath.Join(srcDir, leaseDir, name) }

// acquireLease takes a shared lease on srcDir/name. It fails only when
// the lease file cannot be made; the caller then checks that the folder
// is (still) there.
func acquireLease(srcDir, name string) (*lease, error) {
	if err := os.MkdirAll(filepath.Join(srcDir, leaseDir), 0o755); err != nil {
		return nil, err
	}
	p := leasePath(srcDir, name)
	for range 10 {
		f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := lockShared(f); err != nil {
			f.Close()
			return nil, err
		}
		// A remover may have unlinked the file between our open and our
		// lock: a lock on a file no longer at p protects nothing.
		if sameFile(f, p) {
			return &lease{f: f}, nil
		}
		f.Close()
	}
	return nil, os.ErrDeadlineExceeded
}

func sameFile(f *os.File, p string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(p)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// removeUnleased removes srcDir/name when no process (this one included)
// holds its lease, and reports whether it did (or it was gone).
func removeUnleased(srcDir, name string) bool {
	if name == leaseDir || strings.ContainsAny(name, `/\`) {
		return false
	}
	p := leasePath(srcDir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false
	}
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if !tryLockExclusive(f) || !sameFile(f, p) {
		return false
	}
	if err := os.RemoveAll(filepath.Join(srcDir, name)); err != nil {
		return false
	}
	os.Remove(p) // while locked: a waiting reader sees the file gone and starts over
	return true
}
