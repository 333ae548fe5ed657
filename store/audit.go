package store

import (
	"context"
	"time"
)

// AuditRecord is one entry of the append-only audit trail: one write of
// any kind (a save, a publish, an approval, a pin, a block, a token made
// or revoked, a sync, an import, a config reload, a sign-in). Records are
// hash-chained by the store that keeps them (see Auditor).
type AuditRecord struct {
	// Seq is the record's place in the chain, from 1; Hash and PrevHash
	// chain it to the record before. All three are set by the store.
	Seq      int64     `json:"seq"`
	Hash     string    `json:"hash"`
	PrevHash string    `json:"prevHash"`
	Time     time.Time `json:"time"`
	// The actor: a token's id and name, or a signed-in subject, and the
	// role it acted with.
	ActorToken string `json:"actorToken,omitempty"`
	Actor      string `json:"actor"`
	Role       string `json:"role"`
	// Action is what was done ("skill.save", "review.approve", "block"...),
	// Target what it was done to ("skill:NAME", "token:ID", "source:ID").
	Action string `json:"action"`
	Target string `json:"target"`
	// Before and After are the digests of the target before and after the
	// write, where it has any.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Client is the caller's address; Transport the door it came through
	// (http, ui, mcp-http, mcp-stdio, cli).
	Client    string `json:"client,omitempty"`
	Transport string `json:"transport"`
	// Detail is free text: a review's comment, a block's reason.
	Detail string `json:"detail,omitempty"`
}

// Auditor is implemented by stores that keep an audit trail.
type Auditor interface {
	// AppendAudit adds one record at the end of the chain and returns it
	// with Seq, Hash and PrevHash set.
	AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error)
}
