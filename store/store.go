// Package store defines where skills written through loadout live: the
// Store interface, its records and its errors. Implementations are in
// store/sqlstore (one database/sql implementation), opened through the
// sqlite and postgres packages; store/storetest is the conformance suite
// every implementation passes.
//
// Every write checks the whole resulting skill with skill.Bundle.Check
// before it touches the database, so a refused request changes nothing.
// Every save also keeps an immutable snapshot of the skill (a version), so
// bytes read at a version never change and any version can be restored.
package store

import (
	"context"
	"time"

	"github.com/loadout/loadout/skill"
)

// Store keeps skills, their supporting files and their history. It is safe
// for concurrent use.
//
// Versions: every write that changes a skill's bytes makes a new version,
// numbered from 1. Writes that name the version they started from
// (ifVersion) fail with a "conflict" Error when the skill has moved on;
// ifVersion -1 skips the check, and ifVersion 0 means "the skill must not
// exist yet".
type Store interface {
	// List returns every stored skill at its current version, Content
	// included, sorted by name.
	List(ctx context.Context) ([]*Record, error)
	// Get returns one skill at its current version, or a "not_found" Error.
	Get(ctx context.Context, name string) (*Record, error)
	// Bundle returns the bytes of one version of a skill (0: the current
	// one) and a Record describing that version.
	Bundle(ctx context.Context, name string, version int) (*skill.Bundle, *Record, error)
	// ReadFile returns one file of a version (0: the current one). The path
	// "SKILL.md" is the skill's content. It reads the immutable snapshot,
	// so the bytes of a version never change.
	ReadFile(ctx context.Context, name string, version int, path string) ([]byte, error)
	// Put creates or replaces a whole skill. Saving bytes identical to the
	// current version changes nothing and returns the current record.
	Put(ctx context.Context, b *skill.Bundle, opt PutOptions) (*Record, error)
	// PutFile adds or replaces one file. The path "SKILL.md" replaces the
	// content.
	PutFile(ctx context.Context, name, path string, data []byte, executable bool, ifVersion int) (*Record, error)
	// DeleteFile removes one supporting file.
	DeleteFile(ctx context.Context, name, path string, ifVersion int) (*Record, error)
	// Delete removes a skill and its history.
	Delete(ctx context.Context, name string, ifVersion int) error
	// Versions lists a skill's versions, newest first.
	Versions(ctx context.Context, name string) ([]Version, error)
	// Restore makes a new version whose bytes equal those of version.
	Restore(ctx context.Context, name string, version, ifVersion int) (*Record, error)
	// SetEnabled turns a stored skill on or off. It is not a new version.
	SetEnabled(ctx context.Context, name string, enabled bool) error
	// SetOverride records the enable/disable state of a skill the store
	// does not own (a folder or plugin skill), by key such as
	// "plugin:acme/deploy".
	SetOverride(ctx context.Context, key string, enabled bool) error
	// Overrides returns every override.
	Overrides(ctx context.Context) (map[string]bool, error)
	// Import checks every item, then writes them all in one transaction:
	// all or nothing. When any item is refused nothing is written: the
	// refused items say why, and every other item is "skipped", naming the
	// refused one. Results are in the order of items. A database failure
	// rolls back the whole import and is returned as the error.
	// ImportPartial writes the accepted items even when some are refused.
	Import(ctx context.Context, items []ImportItem) ([]ImportResult, error)
	Close() error
}

// PutOptions qualify a Put.
type PutOptions struct {
	// IfVersion is the version the edit started from: 0 creates only (a
	// "conflict" if the name exists), -1 writes unconditionally.
	IfVersion int
	// Source says which door the skill came through ("api", "import",
	// "cli"); Provenance is free text (a file, URL or archive name).
	Source, Provenance string
	// Limits bound the skill; zero fields take the store's defaults.
	Limits skill.Limits
	// Note is kept with the version.
	Note string
}

// Record is a stored skill at one version.
type Record struct {
	ID          string
	Name        string
	Description string
	// Version is the store's version number; Digest is skill.Bundle.Digest
	// of that version's bytes.
	Version int
	Digest  string
	// Published is the version agents are served (0: none yet); it equals
	// Version unless a draft awaits review (see Drafts). Withdrawn skills
	// leave listings.
	Published int
	Withdrawn bool
	Enabled   bool
	// IsDirectory is true when the skill has supporting files.
	IsDirectory bool
	// Category, SkillVersion (the frontmatter's version), Tags and
	// RequiresTools are copied from the frontmatter.
	Category      string
	SkillVersion  string
	Tags          []string
	RequiresTools []string
	// Frontmatter is the whole frontmatter as written.
	Frontmatter skill.Fields
	// Source and Provenance are those of the last Put or Import.
	Source     string
	Provenance string
	// Files is the manifest of supporting files, sorted by path.
	Files []skill.File
	// Size is SKILL.md plus every file, in bytes.
	Size int64
	// Content is SKILL.md.
	Content   []byte
	CreatedAt time.Time
	UpdatedAt time.Time
	// Warnings are Bundle.Check's warnings for the write that returned
	// this record (a large text file, say). They are not stored.
	Warnings []skill.Diagnostic
}

// Version is one entry of a skill's history.
type Version struct {
	Version    int
	Digest     string
	Size       int64
	Files      int // supporting files
	Note       string
	Source     string
	Provenance string
	CreatedAt  time.Time
}

// ImportItem is one skill to import.
type ImportItem struct {
	Bundle             *skill.Bundle
	Source, Provenance string
	// Limits bound the skill; zero fields take the store's defaults.
	Limits skill.Limits
	// Err, when set, is why the item was refused before it reached the
	// store (a document that does not parse, a folder that cannot be
	// read). It is reported as refused, and like any refusal keeps an
	// all-or-nothing import from writing anything.
	Err error
}

// Import actions.
const (
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged" // the digest equals the current version's
	ActionRefused   = "refused"   // Error and Problems say why; nothing written
	// ActionSkipped: accepted, but not written because another item of an
	// all-or-nothing import was refused; Error names it.
	ActionSkipped = "skipped"
)

// ImportResult is what happened to one ImportItem.
type ImportResult struct {
	Name       string
	Action     string
	Version    int // the skill's version after the import
	Error      error
	Problems   []skill.Diagnostic // errors and warnings from Bundle.Check
	Provenance string
}
