package store

import (
	"context"
	"time"
)

// Stamp is what identifies a stored skill's current state: a skill whose
// stamp has not changed has the same bytes, provenance and state.
type Stamp struct {
	Name               string
	Version            int
	Published          int
	Withdrawn          bool
	Digest             string
	Enabled            bool
	Source, Provenance string
	UpdatedAt          time.Time
}

// Stamper is a Store that can list its skills' stamps without reading
// their content (store/sqlstore's is one). Provider uses it to read only
// the skills that changed when it reads the whole store again.
type Stamper interface {
	Stamps(ctx context.Context) ([]Stamp, error)
}

// Walker is a Store that can hand its enabled skills to a function one at
// a time, without holding them all (store/sqlstore's is one). Provider
// reads the whole store through it, so that a server starting on many
// skills keeps one record's content at a time, not every record's.
type Walker interface {
	// Walk calls fn with every enabled skill at its current version, in no
	// particular order, from one snapshot. The records carry what a
	// catalog needs: every field but Frontmatter, Tags and RequiresTools
	// (the catalog parses Content), which are left empty. fn must not keep
	// rec.Content. Walk stops at fn's first error and returns it.
	Walk(ctx context.Context, fn func(rec *Record) error) error
}
