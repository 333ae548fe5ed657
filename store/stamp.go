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
