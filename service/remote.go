package service

import (
	"context"
	"strings"
	"sync"
	"time"
)

// SourceStatus is one remote source (a git repository or a skills index)
// as the server holds it: where it is, what it is pinned at, and how the
// last sync went.
type SourceStatus struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind"` // git or index
	URL   string   `json:"url"`  // without credentials
	Ref   string   `json:"ref,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Every is the scheduled sync interval ("" when syncs run only on
	// request).
	Every string `json:"every,omitempty"`
	// Revision and Digest are the pin: the commit (or index digest) and
	// the digest of the skills read; Skills is how many.
	Revision string    `json:"revision,omitempty"`
	Digest   string    `json:"digest,omitempty"`
	Skills   int       `json:"skills"`
	Synced   time.Time `json:"synced,omitzero"`
	// Error is why the last sync failed, when it did (the last good
	// snapshot is served).
	Error string `json:"error,omitempty"`
}

// SourceSync is what one sync did to a remote source.
type SourceSync struct {
	ID   string `json:"id"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Moved: the pin moved to To.
	Moved   bool     `json:"moved"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
	// Digests are the new digests of added and changed skills and the
	// old ones of removed skills.
	Digests map[string]string `json:"digests,omitempty"`
	Summary string            `json:"summary"`
	// Error and Code say why the sync failed; the last good snapshot and
	// its pin are kept.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

// Remotes is what the service needs of the remote sources (cmd wires in
// package remote's Manager).
type Remotes interface {
	// Sync syncs the sources (all when ids is empty) and moves their pins.
	Sync(ctx context.Context, ids ...string) []SourceSync
	// Status lists every source.
	Status() []SourceStatus
}

type remotesHolder struct {
	mu sync.RWMutex
	r  Remotes
}

// SetRemotes sets (or, with nil, clears) the remote sources that
// SyncSources and Sources serve.
func (s *Service) SetRemotes(r Remotes) {
	s.remotes.mu.Lock()
	s.remotes.r = r
	s.remotes.mu.Unlock()
}

func (s *Service) getRemotes() Remotes {
	s.remotes.mu.RLock()
	defer s.remotes.mu.RUnlock()
	return s.remotes.r
}

// Sources lists the remote sources (admin only).
func (s *Service) Sources(p Principal) ([]SourceStatus, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	r := s.getRemotes()
	if r == nil {
		return []SourceStatus{}, nil
	}
	return r.Status(), nil
}

// SyncSources syncs the remote sources named (all when none; admin only),
// then refreshes the catalog when a pin moved, so that clients hear of it
// as of any live change. An unknown id is a not_found error and syncs
// nothing.
func (s *Service) SyncSources(ctx context.Context, p Principal, ids ...string) ([]SourceSync, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	r := s.getRemotes()
	known := map[string]bool{}
	var all []string
	if r != nil {
		for _, st := range r.Status() {
			known[st.ID] = true
			all = append(all, st.ID)
		}
	}
	for _, id := range ids {
		if !known[id] {
			if len(all) == 0 {
				return nil, errorf(CodeNotFound, "no remote source %q: this server has none (add {\"git\": URL} or {\"index\": URL} to an agent's skills)", id)
			}
			return nil, errorf(CodeNotFound, "no remote source %q: the sources are %s", id, strings.Join(all, ", "))
		}
	}
	if r == nil {
		return []SourceSync{}, nil
	}
	res := r.Sync(ctx, ids...)
	var moved []string
	for _, c := range res {
		if c.Moved {
			moved = append(moved, c.ID)
		}
	}
	if len(moved) > 0 {
		s.Refresh(ctx, nil, "remote sync: "+strings.Join(moved, ", "))
	}
	return res, nil
}
