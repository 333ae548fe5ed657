package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
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

// AuditLog is an Auditor that can also list, verify, export and prune its
// trail (sqlstore's Store is one).
type AuditLog interface {
	Auditor
	// ListAudit returns records newest first, filtered by q.
	ListAudit(ctx context.Context, q AuditQuery) ([]AuditRecord, error)
	// VerifyAudit walks the whole chain in seq order, streaming, and
	// reports the first record that does not hold.
	VerifyAudit(ctx context.Context) (AuditVerify, error)
	// ExportAudit calls fn with every record in seq order, streaming;
	// an error from fn stops it and is returned.
	ExportAudit(ctx context.Context, fn func(AuditRecord) error) error
	// PruneAudit deletes the records older than before, and appends one
	// record (action "audit.prune", target "audit:FIRST-LAST", before the
	// last pruned record's hash) so the chain still verifies. A prune
	// that finds nothing to delete appends nothing.
	PruneAudit(ctx context.Context, before time.Time) (AuditPrune, error)
}

// AuditQuery filters a listing of the audit trail. Text filters match
// exactly; zero fields do not filter.
type AuditQuery struct {
	Since time.Time
	// Actor is the actor's name (or signed-in subject), Token its
	// token's id.
	Actor  string
	Token  string
	Action string
	Target string
	// Before lists the records with a seq below it (the next page of a
	// listing starts before the last seq of the one before); 0: from the
	// newest.
	Before int64
	// Limit is the most records returned (0: 100).
	Limit int
}

// AuditVerify is what a verification of the chain found.
type AuditVerify struct {
	OK bool `json:"ok"`
	// Records is how many records were checked, First and Last their
	// lowest and highest seq, Head the last one's hash: a value to note
	// elsewhere, since a chain rewritten from some row to its end can
	// only be told from the original by a head kept outside the database.
	Records int64  `json:"records"`
	First   int64  `json:"first,omitempty"`
	Last    int64  `json:"last,omitempty"`
	Head    string `json:"head,omitempty"`
	// BadSeq is the first record that does not hold, and Reason why (its
	// hash does not match its fields; it does not follow the one before).
	BadSeq int64  `json:"badSeq,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AuditPrune says what a prune deleted.
type AuditPrune struct {
	Deleted  int64  `json:"deleted"`
	First    int64  `json:"first,omitempty"`
	Last     int64  `json:"last,omitempty"`
	LastHash string `json:"lastHash,omitempty"`
}

// AuditSlot carries the record of a write into the store's write, so
// that a store that keeps a trail writes the record in the same
// transaction as what it describes (see WithAudit). The store fills After
// (and Before, when empty) with the skill's digests when Target is
// "skill:NAME" of the skill it writes, and sets Written once the
// transaction holding the record committed.
type AuditSlot struct {
	Record  AuditRecord
	Written bool
}

type auditKey struct{}

// WithAudit returns ctx carrying slot: the next write transaction made
// with ctx appends slot.Record to the trail, in that transaction.
func WithAudit(ctx context.Context, slot *AuditSlot) context.Context {
	return context.WithValue(ctx, auditKey{}, slot)
}

// AuditFrom returns the slot in ctx, or nil.
func AuditFrom(ctx context.Context) *AuditSlot {
	s, _ := ctx.Value(auditKey{}).(*AuditSlot)
	return s
}

// AuditHash is a record's hash: SHA-256, in lower-case hex, over a
// length-prefixed encoding of the record's PrevHash and every field, in a
// fixed order:
//
//	"loadout-audit-1" then, for each of PrevHash, Seq, Time, ActorToken,
//	Actor, Role, Action, Target, Before, After, Client, Transport,
//	Detail: its length as 8 bytes big-endian, then its bytes.
//
// Seq and Time are written in decimal (Time as microseconds since 1970,
// UTC), the texts as they are. The length prefix makes the encoding
// unambiguous: no two different records encode alike, whatever their
// texts hold.
func AuditHash(r AuditRecord) string {
	var h AuditHasher
	return h.Sum([]byte(r.PrevHash), r.Seq, r.Time.UnixMicro(), [10][]byte{[]byte(r.ActorToken), []byte(r.Actor), []byte(r.Role),
		[]byte(r.Action), []byte(r.Target), []byte(r.Before), []byte(r.After), []byte(r.Client), []byte(r.Transport), []byte(r.Detail)})
}

// AuditHasher computes AuditHash from a record's raw fields (ActorToken,
// Actor, Role, Action, Target, Before, After, Client, Transport, Detail,
// in this order), reusing its buffers: a verification of a million
// records hashes them without allocating per record.
type AuditHasher struct {
	h   hash.Hash
	buf []byte
	out [2 * sha256.Size]byte
}

// Sum returns the hash of a record given by its fields.
func (a *AuditHasher) Sum(prevHash []byte, seq, atMicros int64, fields [10][]byte) string {
	return string(a.SumBytes(prevHash, seq, atMicros, fields))
}

// SumBytes is Sum into the hasher's own buffer: valid until its next use.
func (a *AuditHasher) SumBytes(prevHash []byte, seq, atMicros int64, fields [10][]byte) []byte {
	if a.h == nil {
		a.h = sha256.New()
	}
	a.h.Reset()
	b := append(a.buf[:0], "loadout-audit-1"...)
	put := func(s []byte) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	put(prevHash)
	var num [20]byte
	put(strconv.AppendInt(num[:0], seq, 10))
	put(strconv.AppendInt(num[:0], atMicros, 10))
	for _, f := range fields {
		put(f)
	}
	a.buf = b
	a.h.Write(b)
	var sum [sha256.Size]byte
	hex.Encode(a.out[:], a.h.Sum(sum[:0]))
	return a.out[:]
}
