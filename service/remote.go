package service

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// SourceStatus is one source as the server holds it: for a remote source
// (a git repository or a skills index), where it is, what it is pinned
// at and how the last sync went; for every source, its skills and
// problems.
type SourceStatus struct {
	// ID is the remote source's id, the folder's path, "store", or the
	// plugin's id.
	ID   string `json:"id"`
	Kind string `json:"kind"` // git, index, folder, store or plugin
	// URL is a remote source's, without credentials.
	URL   string   `json:"url,omitempty"`
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
	// Signer is who signed the pinned revision, for a source with a
	// verify policy (docs/signatures.md).
	Signer *SourceSigner `json:"signer,omitempty"`
	// Error is why the last sync failed, when it did (the last good
	// snapshot is served).
	Error string `json:"error,omitempty"`
	// Errors and Warnings count the source's diagnostics: those of its
	// last read, and the safety checks' findings over its skills with
	// the server's policy (a folder or plugin skill is served with them
	// unless "safety": {"gate"} names its kind).
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// SourceSigner is who signed a pin: Kind is ssh, openpgp, key or
// keyless; Key the key's (or certificate's) fingerprint; Identity the
// principal, user id or certificate subject; Issuer the certificate's
// OIDC issuer.
type SourceSigner struct {
	Kind     string `json:"kind"`
	Key      string `json:"key,omitempty"`
	Identity string `json:"identity,omitempty"`
	Issuer   string `json:"issuer,omitempty"`
}

// SourceSync is what one sync did to a remote source.
type SourceSync struct {
	ID   string `json:"id"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// FromDigest and ToDigest are the snapshots' digests, where known.
	FromDigest string `json:"fromDigest,omitempty"`
	ToDigest   string `json:"toDigest,omitempty"`
	// Moved: the pin moved to To.
	Moved bool `json:"moved"`
	// Pending: review is required and the change was recorded for it (the
	// pin did not move). Rejected: the same change was rejected before.
	Pending  bool     `json:"pending,omitempty"`
	Rejected bool     `json:"rejected,omitempty"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Changed  []string `json:"changed"`
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

// Sources lists the remote sources (an unlimited viewer or higher).
func (s *Service) Sources(ctx context.Context, p Principal) ([]SourceStatus, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, ""); err != nil {
		return nil, err
	}
	var remotes []SourceStatus
	if r := s.getRemotes(); r != nil {
		remotes = r.Status()
	}
	out := []SourceStatus{}
	byID := map[string]int{}
	for _, st := range remotes {
		byID[st.ID] = len(out)
		out = append(out, st)
	}
	for _, sum := range s.Catalog().Sources(ctx, s.SafetyPolicy()) {
		if i, ok := byID[sum.ID]; ok && (sum.Kind == "git" || sum.Kind == "index" || sum.Kind == "oci") {
			out[i].Errors, out[i].Warnings = sum.Errors, sum.Warnings
			continue
		}
		// A remote source the manager does not hold (it failed to open)
		// is listed too, with the catalog's errors about it.
		out = append(out, SourceStatus{ID: sum.ID, Kind: sum.Kind, Skills: sum.Skills, Errors: sum.Errors, Warnings: sum.Warnings})
	}
	return out, nil
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
	for _, c := range res {
		// One record per source whose sync succeeded, moved or not (a
		// failed sync changed nothing: as for every write, no record).
		if c.Error == "" {
			s.audit(ctx, p, store.AuditRecord{Action: "source.sync", Target: "source:" + c.ID, Before: c.From, After: c.To, Detail: c.Summary})
		}
	}
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
