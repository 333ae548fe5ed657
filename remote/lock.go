package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// LockName is the lock file's name, beside the config file.
const LockName = "loadout.lock"

// LockVersion is the lock file format written; a newer one is refused.
const LockVersion = 1

// MaxLockBytes bounds the lock file read.
const MaxLockBytes = 16 << 20

// Lock is loadout.lock: for every remote source, the revision it is pinned
// at and the digests of the skills read from it. It is JSON, sorted, one
// key per line, so that a change reads well in a diff.
type Lock struct {
	Version int   `json:"lockVersion"`
	Sources []Pin `json:"sources"`
	// Pending are the changes that await review, one a source at most
	// (Options.Review): what a sync would have moved each pin to.
	Pending []Pending `json:"pending,omitempty"`
}

// Pending is a change of one source's pin that awaits review: the pin it
// would move to, the pin it was made from, and what it adds, removes and
// changes. A rejected change stays, marked, so that a later sync that
// finds the same snapshot again does not put it back in the queue.
type Pending struct {
	// To is the pin that approving the change writes.
	To Pin `json:"to"`
	// Base and BaseDigest are the pin's revision and digest when the
	// change was recorded ("" for a source not pinned yet): approving is
	// refused once the pin has moved from them.
	Base       string `json:"base,omitempty"`
	BaseDigest string `json:"baseDigest,omitempty"`
	// Added, Removed and Changed are skill names, sorted.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Recorded is when a sync recorded it.
	Recorded time.Time `json:"recorded"`
	// Rejected, when set, is when a reviewer rejected it, and Note why.
	Rejected *time.Time `json:"rejected,omitempty"`
	Note     string     `json:"note,omitempty"`
}

// Pin is one source's entry in the lock.
type Pin struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // git, index or oci
	// URL is the source's location without credentials.
	URL   string   `json:"url"`
	Ref   string   `json:"ref,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Revision is the resolved commit (git), the index's digest, or the
	// OCI manifest's digest.
	Revision string `json:"revision"`
	// Tag (oci sources with a "tags" range) is the tag Revision was found
	// at: the highest in the range when the pin moved.
	Tag string `json:"tag,omitempty"`
	// Digest is the snapshot's digest: of every skill's name and
	// ContentDigest, in name order.
	Digest string `json:"digest"`
	// Skills are each skill's ContentDigest, by name.
	Skills map[string]string `json:"skills"`
	// Synced is when the pin last moved.
	Synced time.Time `json:"synced"`
	// Signer is who signed the revision, for a source with a verify
	// policy: checked before the pin was written.
	Signer *Signer `json:"signer,omitempty"`
}

// Same reports whether p pins the source spec describes (the same place,
// ref and paths); a pin for another place is stale after a config edit.
func (p *Pin) Same(s Spec) bool {
	return p.Kind == s.Kind() && p.URL == s.URL() && p.Ref == s.Ref && slices.Equal(p.Paths, s.Paths)
}

// ReadLock reads the lock file at path; a missing file is an empty lock.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: LockVersion}, nil
	}
	if err != nil {
		return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: cannot read: %v", path, err), Err: err}
	}
	if len(data) > MaxLockBytes {
		return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: %d bytes, over the limit of %d: is it a lock file?", path, len(data), MaxLockBytes)}
	}
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: not a loadout lock file: %v; delete it and run `loadout sync` to write a new one", path, err), Err: err}
	}
	if l.Version > LockVersion || l.Version < 1 {
		return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: lockVersion %d; this loadout reads version %d: upgrade loadout, or run `loadout sync` to rewrite it", path, l.Version, LockVersion)}
	}
	seen := map[string]bool{}
	for i, p := range l.Sources {
		if !ValidID(p.ID) || seen[p.ID] {
			return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: sources[%d]: id %q is not valid or is given twice; run `loadout sync` to rewrite the lock", path, i, p.ID)}
		}
		seen[p.ID] = true
	}
	pend := map[string]bool{}
	for i, p := range l.Pending {
		if !ValidID(p.To.ID) || pend[p.To.ID] {
			return nil, &Error{Code: CodeLock, Msg: fmt.Sprintf("%s: pending[%d]: id %q is not valid or is given twice; remove the entry (the change is recorded again by the next sync)", path, i, p.To.ID)}
		}
		pend[p.To.ID] = true
	}
	return &l, nil
}

// Get is the pin of source id, or nil.
func (l *Lock) Get(id string) *Pin {
	for i := range l.Sources {
		if l.Sources[i].ID == id {
			return &l.Sources[i]
		}
	}
	return nil
}

// Put sets the pin of p.ID.
func (l *Lock) Put(p Pin) {
	for i := range l.Sources {
		if l.Sources[i].ID == p.ID {
			l.Sources[i] = p
			return
		}
	}
	l.Sources = append(l.Sources, p)
	slices.SortFunc(l.Sources, func(a, b Pin) int { return strings.Compare(a.ID, b.ID) })
}

// Keep drops the pins and pending changes of sources not in ids.
func (l *Lock) Keep(ids map[string]bool) {
	l.Sources = slices.DeleteFunc(l.Sources, func(p Pin) bool { return !ids[p.ID] })
	l.Pending = slices.DeleteFunc(l.Pending, func(p Pending) bool { return !ids[p.To.ID] })
}

// PendingFor is source id's pending change, or nil.
func (l *Lock) PendingFor(id string) *Pending {
	for i := range l.Pending {
		if l.Pending[i].To.ID == id {
			return &l.Pending[i]
		}
	}
	return nil
}

// PutPending sets the pending change of p.To.ID.
func (l *Lock) PutPending(p Pending) {
	for i := range l.Pending {
		if l.Pending[i].To.ID == p.To.ID {
			l.Pending[i] = p
			return
		}
	}
	l.Pending = append(l.Pending, p)
	slices.SortFunc(l.Pending, func(a, b Pending) int { return strings.Compare(a.To.ID, b.To.ID) })
}

// DropPending removes source id's pending change.
func (l *Lock) DropPending(id string) {
	l.Pending = slices.DeleteFunc(l.Pending, func(p Pending) bool { return p.To.ID == id })
}

// Write writes the lock to path atomically: a temporary file beside it,
// synced, then renamed over it.
func (l *Lock) Write(path string) error {
	l.Version = LockVersion
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+LockName+".*")
	if err != nil {
		return &Error{Code: CodeLock, Msg: fmt.Sprintf("cannot write %s: %v", path, err), Err: err}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return &Error{Code: CodeLock, Msg: fmt.Sprintf("cannot write %s: %v", path, err), Err: err}
	}
	return nil
}
