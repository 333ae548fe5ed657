package store

import (
	"context"
	"time"
)

// Server is what a running loadout server needs of a store beyond skills:
// bearer tokens, activation receipts and a feed of changes made by any
// instance sharing the database.
type Server interface {
	// CreateToken makes a token with scopes ("admin" or "agent:ID") and
	// returns its secret, which is shown once: only its sha256 is kept.
	CreateToken(ctx context.Context, name string, scopes []string) (secret string, tok Token, err error)
	// TokenBySecret finds the token a bearer secret belongs to (not_found
	// if none, or if it was revoked) and records its last use.
	TokenBySecret(ctx context.Context, secret string) (*Token, error)
	Tokens(ctx context.Context) ([]Token, error)
	RevokeToken(ctx context.Context, id string) error

	// AddReceipts appends receipts in one transaction.
	AddReceipts(ctx context.Context, rs []Receipt) error
	// Receipts lists receipts, newest first.
	Receipts(ctx context.Context, q ReceiptQuery) ([]Receipt, error)

	// Changes sends after every committed write to skills, files or
	// overrides, by this or any other instance sharing the database
	// (PostgreSQL: LISTEN/NOTIFY; SQLite: the database's change counter,
	// polled). Sends coalesce; the channel closes when ctx ends.
	Changes(ctx context.Context) (<-chan struct{}, error)
}

// Token is a bearer token, without its secret.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"createdAt"`
	LastUsed  *time.Time `json:"lastUsed,omitempty"`
}

// Receipt records one activation or file read, over any transport.
type Receipt struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Agent     string    `json:"agent"`
	Skill     string    `json:"skill"`
	Action    string    `json:"action"` // "load" or "read"
	Path      string    `json:"path,omitempty"`
	Source    string    `json:"source"` // folder, store or plugin
	Plugin    string    `json:"plugin,omitempty"`
	Trust     string    `json:"trust,omitempty"`
	Digest    string    `json:"digest,omitempty"` // the skill version's digest
	Transport string    `json:"transport"`        // http, mcp-http, mcp-stdio, cli
	Outcome   string    `json:"outcome"`          // ok, not_found, refused, too_large, error
	Token     string    `json:"token,omitempty"`  // the token's id, never its secret
}

// ReceiptQuery filters Receipts; zero fields match everything.
type ReceiptQuery struct {
	Agent, Skill string
	Since        time.Time
	Limit        int // default 100, at most 10,000
}
