// Package remote reads skills from remote sources, git repositories and
// well-known skill indexes, into local snapshots that are pinned in a lock
// file and swapped in whole.
//
// A Fetcher knows one kind of source: Resolve says what the source points
// at now (a commit, or an index's digest) and Fetch writes the files at
// that revision into a new folder. The Manager (manager.go) keeps
// snapshots under a cache folder (Cache/ID/REVISION.RANDOM), validates a
// new snapshot beside the current one before it is used, and records pins
// in loadout.lock. Nothing half-fetched is ever served: a snapshot folder
// exists under its final name only once it is complete. A cached folder
// is used only when its digest is the pin's; one that is not (edited on
// disk) is never pinned: the revision is fetched again into a new
// folder. Several processes share the lock and the cache: a sync reads
// the lock again before it moves a pin, Follow serves what another
// process pinned, and a folder is removed only when no process holds its
// lease (lease.go).
//
// The git fetcher lives in remote/gitfetch, so that this package does not
// pull in a git library; the index fetcher is here (net/http only).
package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loadout/loadout/source"
)

// Spec is one remote source as the config gives it. Exactly one of Git,
// Index and OCI is set.
type Spec struct {
	// ID names the source in the lock file, the API and diagnostics. When
	// the config gives none, DefaultID makes one from the URL, ref and
	// paths.
	ID string
	// Git is a repository: https://, http://, ssh://, file:// or a plain
	// path to a repository on disk.
	Git string
	// Ref is a branch, tag or full commit id; "" is the repository's
	// default branch (its HEAD).
	Ref string
	// Paths are folders of the repository to read skills from; none reads
	// the whole repository.
	Paths []string
	// Index is the URL of a well-known skills index
	// (…/.well-known/agent-skills/index.json).
	Index string
	// Token is a credential, already expanded from the environment. It is
	// sent to the remote and never written to logs, errors or the lock.
	Token string
	// AllowedOrigins (index sources) are origins, "https://host[:port]",
	// beside the index's own that its entries may name and its requests
	// be redirected to; none keeps every request on the index's origin.
	AllowedOrigins []string
	// OCI is a repository in an OCI registry, "host[:port]/path" (oci
	// sources, fetched by remote/ocifetch). Ref is then its tag, digest or
	// tag range as the lock and the origin show it; Tag, Digest and Tags
	// say which it is.
	OCI               string
	Tag, Digest, Tags string
	// Insecure lets an oci source's registry be reached over plain HTTP.
	Insecure bool
	// Username and Password are an oci source's registry credentials,
	// already expanded from the environment; none uses the docker
	// config's. Never written to logs, errors or the lock.
	Username, Password string
	// Verify, when set, is the signature policy every revision must meet
	// before it is pinned (verify.go); nil pins unsigned revisions.
	Verify *Verify
}

// URL is the source's location: Git, Index or OCI, without credentials.
func (s Spec) URL() string {
	switch {
	case s.Git != "":
		return Redact(s.Git)
	case s.OCI != "":
		return s.OCI
	}
	return Redact(s.Index)
}

// Kind is "git", "index" or "oci".
func (s Spec) Kind() string {
	switch {
	case s.Git != "":
		return "git"
	case s.OCI != "":
		return "oci"
	}
	return "index"
}

// Limits bound what one snapshot may hold; a fetch over any of them fails
// and keeps the last good snapshot.
type Limits struct {
	// MaxFiles is the most files (and symlinks) a snapshot may hold.
	MaxFiles int
	// MaxFileBytes is the largest one file may be.
	MaxFileBytes int64
	// MaxBytes is the most all files together may hold.
	MaxBytes int64
}

// DefaultLimits are the limits a snapshot has unless the config sets
// others: the same order as an import's.
var DefaultLimits = Limits{MaxFiles: 20000, MaxFileBytes: 10 << 20, MaxBytes: 512 << 20}

// WithDefaults is l with every limit of 0 or less set to DefaultLimits':
// no fetcher runs unbounded.
func (l Limits) WithDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultLimits.MaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	return l
}

// Fetcher reads one kind of remote source.
type Fetcher interface {
	// Resolve returns the revision the source points at now: a git commit
	// id (40 or 64 hex digits), an index digest or an OCI manifest digest
	// ("sha256:…"). It fetches as little as it can.
	Resolve(ctx context.Context) (string, error)
	// Fetch writes the source's files at rev into dir, which does not
	// exist yet (Fetch creates it). Every path is checked with
	// skill.CleanPath; symlinks that leave dir are refused; lim bounds
	// files and bytes. On error dir may hold a part of the files; the
	// caller removes it. Problems that do not stop the fetch (a submodule
	// skipped, a symlink refused) are returned as notes.
	Fetch(ctx context.Context, rev, dir string, lim Limits) (notes []string, err error)
}

// TagResolver is a Fetcher that can say which tag a revision was found at
// (an oci source with a "tags" range): the lock records it.
type TagResolver interface {
	ResolvedTag(rev string) string
}

// Error is a fetch or sync failure. Its message never holds a credential.
type Error struct {
	// Source is the source's ID.
	Source string
	// Code is stable: CodeNetwork, CodeRef, CodeLimit, CodePath, CodeInvalid,
	// CodeDigest, CodeLock.
	Code string
	Msg  string
	Err  error
}

// Error codes.
const (
	CodeNetwork   = "remote-network"    // the remote could not be reached or the transfer broke
	CodeRef       = "remote-ref"        // the ref or pinned revision does not exist
	CodeLimit     = "remote-limit"      // a file or the snapshot is over a limit
	CodePath      = "remote-path"       // a path or symlink in the source was refused
	CodeInvalid   = "remote-invalid"    // the source is not a repository or index loadout can read
	CodeDigest    = "remote-digest"     // an archive or snapshot does not match its digest
	CodeLock      = "remote-lock"       // loadout.lock and the snapshot on disk disagree
	CodeAuth      = "remote-auth"       // the remote refused the credentials
	CodeSynced    = "remote-synced"     // info: a sync moved a pin
	CodeStale     = "remote-stale"      // warning: the last sync failed; the last good snapshot is served
	CodeSkipped   = "remote-skipped"    // info: something in the source was left out (a submodule, a refused link)
	CodeMoved     = "remote-moved"      // sync --check: the remote has moved past the pin
	CodeUnknown   = "remote-unpinned"   // a source has no pin yet
	CodeRefused   = "remote-refused"    // the safety checks refused a new snapshot
	CodeBroken    = "remote-broken"     // a pinned skill's SKILL.md does not load at the new revision; the pin stays
	CodePending   = "remote-pending"    // info: a sync recorded a change that awaits review; the pin stays
	CodeNoPending = "remote-no-pending" // there is no change of the source to approve or reject
	CodeConflict  = "remote-conflict"   // the pending change no longer applies: the pin or the upstream content moved
)

func (e *Error) Error() string {
	if e.Source != "" {
		return "source " + e.Source + ": " + e.Msg
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error; credentials in the message are redacted.
func Errorf(source, code, format string, args ...any) *Error {
	return &Error{Source: source, Code: code, Msg: Redact(fmt.Sprintf(format, args...))}
}

// errMsg is err's message without the "source ID: " an *Error starts
// with, for a diagnostic that names the source already.
func errMsg(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	return err.Error()
}

// CodeOf is err's code, or CodeNetwork for an error that is not an *Error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeNetwork
}

// Redact removes credentials from every URL in s: the userinfo of
// scheme://user:pass@host becomes scheme://***@host.
func Redact(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/ \t\n\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			b.WriteString("***")
			s = s[at:]
		}
	}
}

// DefaultID names a source that the config gives no id:
// source.RemoteID of its location and ref.
func DefaultID(s Spec) string {
	if s.OCI != "" {
		return source.RemoteID(s.OCI, ociIDRef(s))
	}
	loc := s.Git
	if loc == "" {
		loc = s.Index
	}
	return source.RemoteID(loc, s.Ref)
}

// ociIDRef is the ref an oci source's default id carries: its tag, 12
// digits of its digest, or none for a range (as catalog.OCIDefaultID).
func ociIDRef(s Spec) string {
	switch {
	case s.Tag != "":
		return s.Tag
	case s.Digest != "":
		if i := strings.IndexByte(s.Digest, ':'); i >= 0 && len(s.Digest) > i+13 {
			return s.Digest[:i+13]
		}
		return s.Digest
	}
	return ""
}

// ValidID reports whether id can name a source (source.ValidRemoteID).
func ValidID(id string) bool { return source.ValidRemoteID(id) }
