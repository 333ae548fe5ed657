package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Block is one rule of the kill switch: the skills it matches are neither
// listed nor served by any instance sharing the store, until it is
// removed. Exactly one of Skill and Source is set. A Skill block may
// narrow to one version: Version (a stored skill's version number) or
// Digest (the skill's bundle digest, which every source has).
type Block struct {
	ID      string `json:"id"`
	Skill   string `json:"skill,omitempty"`
	Version int    `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Source is a source's id as GET /v1/sources names it: "store", a
	// plugin's id, a remote source's id, or a folder's absolute path.
	Source    string    `json:"source,omitempty"`
	Reason    string    `json:"reason"`
	Actor     string    `json:"actor,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Limits of a block's text, so that a block cannot grow every listing or
// error that names it.
const (
	MaxBlockReason = 1000 // bytes
	MaxBlockField  = 1024 // bytes of Skill, Digest, Source and Actor
)

// Target is what the block matches, as audit records name it:
// "skill:NAME", "skill:NAME@v3", "skill:NAME@sha256:...", "source:ID".
func (b Block) Target() string {
	switch {
	case b.Source != "":
		return "source:" + b.Source
	case b.Version > 0:
		return fmt.Sprintf("skill:%s@v%d", b.Skill, b.Version)
	case b.Digest != "":
		return "skill:" + b.Skill + "@" + b.Digest
	}
	return "skill:" + b.Skill
}

// Check refuses a block that is not well formed: naming what is at fault.
// Control characters in the reason (a newline included) are refused rather
// than kept, so a reason shows on one line wherever it is printed.
func (b Block) Check() error {
	bad := func(field, msg string) error {
		return &Error{Code: Invalid, Field: field, Message: "block: " + field + " " + msg}
	}
	switch {
	case b.Skill == "" && b.Source == "":
		return bad("skill", `is required: name a skill ("skill") or a source ("source")`)
	case b.Skill != "" && b.Source != "":
		return bad("source", `cannot be set with "skill": a block is of a skill or of a source`)
	case b.Source != "" && (b.Version != 0 || b.Digest != ""):
		return bad("source", `cannot be narrowed to a version or digest: block the skill instead`)
	case b.Version < 0:
		return bad("version", "must be a positive version number")
	case b.Version != 0 && b.Digest != "":
		return bad("digest", `cannot be set with "version": give one or the other`)
	case strings.TrimSpace(b.Reason) == "":
		return bad("reason", "is required: say why, so whoever sees the refusal knows")
	case len(b.Reason) > MaxBlockReason:
		return bad("reason", fmt.Sprintf("is %d bytes, over the limit of %d", len(b.Reason), MaxBlockReason))
	}
	for _, f := range []struct{ name, v string }{{"skill", b.Skill}, {"digest", b.Digest}, {"source", b.Source}, {"reason", b.Reason}, {"actor", b.Actor}} {
		if len(f.v) > MaxBlockField && f.name != "reason" {
			return bad(f.name, fmt.Sprintf("is %d bytes, over the limit of %d", len(f.v), MaxBlockField))
		}
		if !utf8.ValidString(f.v) {
			return bad(f.name, "is not valid UTF-8")
		}
		if f.name == "actor" {
			continue // made by the server from a token's name
		}
		for _, r := range f.v {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
				return bad(f.name, fmt.Sprintf("holds the control character %U: write it on one line, in printable text", r))
			}
		}
	}
	if b.Digest != "" && !strings.HasPrefix(b.Digest, "sha256:") {
		return bad("digest", `must be a skill's digest, "sha256:" and 64 hex digits, as receipts and exports show it`)
	}
	return nil
}

// Blocker is implemented by stores that keep the kill switch's blocks.
type Blocker interface {
	// AddBlock checks and keeps a block and returns it with its ID and
	// CreatedAt set.
	AddBlock(ctx context.Context, b Block) (Block, error)
	// RemoveBlock removes a block by id and returns what it was
	// (not_found for an unknown id).
	RemoveBlock(ctx context.Context, id string) (Block, error)
	// Blocks lists every block, oldest first.
	Blocks(ctx context.Context) ([]Block, error)
	// BlockChanges sends after every block is added or removed, by this
	// instance or any other sharing the database (PostgreSQL: NOTIFY;
	// SQLite: polled). Sends coalesce; the channel closes when ctx ends.
	BlockChanges(ctx context.Context) (<-chan struct{}, error)
}
