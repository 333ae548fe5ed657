package store

import (
	"context"
	"time"
)

// Server is what a running loadout server needs of a store beyond skills:
// bearer tokens, activation receipts with their daily usage counts, and
// feeds of the changes made by any instance sharing the database.
type Server interface {
	// CreateToken makes a token with scopes ("admin" or "agent:ID") and
	// returns its secret, which is shown once: only its sha256 is kept.
	CreateToken(ctx context.Context, name string, scopes []string) (secret string, tok Token, err error)
	// TokenBySecret finds the token a bearer secret belongs to (not_found
	// if none, or if it was revoked) and records its last use.
	TokenBySecret(ctx context.Context, secret string) (*Token, error)
	Tokens(ctx context.Context) ([]Token, error)
	RevokeToken(ctx context.Context, id string) error

	// AddReceipts appends receipts in one transaction. An error of code
	// Invalid says the database refused their values (writing them again
	// fails again); any other error may pass.
	AddReceipts(ctx context.Context, rs []Receipt) error
	// Receipts lists the raw receipts still kept, newest first.
	Receipts(ctx context.Context, q ReceiptQuery) ([]Receipt, error)
	// Usage counts receipts per day, agent, skill, action and outcome,
	// from the daily rollups (kept longer than raw receipts) and the
	// receipts not yet rolled up, so it is exact at any time.
	Usage(ctx context.Context, q UsageQuery) ([]Usage, error)
	// MaintainReceipts rolls new receipts up into the daily counts, then
	// deletes raw receipts beyond the retention's window and count, and
	// daily counts beyond its usage window: in short transactions, so that
	// it never holds up other writes for long. It deletes no receipt
	// before it is counted.
	MaintainReceipts(ctx context.Context, r Retention) (MaintainResult, error)

	// Changes sends after every committed write to skills, files or
	// overrides, by this or any other instance sharing the database
	// (PostgreSQL: LISTEN/NOTIFY; SQLite: the database's change counter,
	// polled). Sends coalesce; the channel closes when ctx ends.
	Changes(ctx context.Context) (<-chan struct{}, error)
	// TokenChanges is Changes for tokens: it sends after every token is
	// created or revoked, by this or any other instance, so that caches
	// of token lookups can drop what they hold.
	TokenChanges(ctx context.Context) (<-chan struct{}, error)
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
	Outcome   string    `json:"outcome"`          // ok, not_found, refused, too_large, blocked, error
	Token     string    `json:"token,omitempty"`  // the token's id, never its secret
	// Code is why a load or read was refused or failed (the path check's
	// path-*, symlink-escapes, range-invalid, too-large...); empty for ok
	// and not_found.
	Code string `json:"code,omitempty"`
	// Origin is where the skill came from beyond Source: a remote skill's
	// "URL@REF REVISION PATH", a plugin's version; empty otherwise.
	Origin string `json:"origin,omitempty"`
	// Count is how many loads or reads this receipt stands for: receipts
	// identical in every field but Time that were recorded within one
	// flush of the server's receipt buffer (at most 50 ms apart) are kept
	// as one, with the first one's Time. Zero means 1 when adding; read
	// back it is at least 1.
	Count int64 `json:"count"`
}

// ReceiptQuery filters Receipts; zero fields match everything.
type ReceiptQuery struct {
	Agent, Skill string
	Since        time.Time
	Limit        int // default 100, at most 10,000
}

// UsageQuery filters Usage; zero fields match everything.
type UsageQuery struct {
	Agent, Skill string
	// Since is the first day counted (its UTC day; the time of day is
	// ignored).
	Since time.Time
	// Daily keeps one row per day; otherwise the days are summed.
	Daily bool
	Limit int // default 1,000, at most 100,000
}

// Usage is how many receipts one agent recorded for one skill, action and
// outcome, on one UTC day (Daily) or over the days asked for. Receipts for
// a name that matched no skill (no Source) count under the skill "", so
// that made-up names cannot grow the counts.
type Usage struct {
	Day     time.Time `json:"day,omitzero"` // midnight UTC; zero when summed
	Agent   string    `json:"agent"`
	Skill   string    `json:"skill"`
	Action  string    `json:"action"`
	Outcome string    `json:"outcome"`
	Count   int64     `json:"count"`
}

// Retention bounds the receipts kept. Zero fields take the defaults.
type Retention struct {
	// KeepDays is how long raw receipts are kept (default 7).
	KeepDays int `json:"keepDays,omitempty"`
	// MaxRows is the most raw receipts kept (default 1,000,000). It
	// counts rows: a row stands for Count loads (see Receipt.Count).
	MaxRows int64 `json:"maxRows,omitempty"`
	// MaxBytes is the most bytes of raw receipts kept (default 256 MiB),
	// as ReceiptBytes estimates them: whichever of MaxRows and MaxBytes
	// is reached first bounds them. At the caps on a receipt's name and
	// path a row takes about 1.4 KB (SQLite) to 1.7 KB (PostgreSQL), so
	// MaxRows alone would let a million of them take 1.7 GB.
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// UsageDays is how long the daily counts are kept (default 400).
	UsageDays int `json:"usageDays,omitempty"`
	// Duty, between 0 and 1, paces MaintainReceipts: after each of its
	// transactions it waits so that transactions take at most this share
	// of its time. A server sets it so that maintenance never holds the
	// database or a core for long while it serves; 0 (a command run by
	// hand) does not wait.
	Duty float64 `json:"-"`
}

// Retention defaults. A typical raw receipt (an agent, a skill, a digest,
// no path) takes 165 bytes on SQLite and 213 on PostgreSQL, with its
// index, so a million take 165 to 215 MB, within DefaultMaxBytes; rows
// near the caps on names and paths reach DefaultMaxBytes at about 150,000.
// A week is enough to look into what an agent did; the daily counts (one
// row per day, agent, skill, action and outcome) keep usage for over a
// year.
const (
	DefaultKeepDays  = 7
	DefaultMaxRows   = 1_000_000
	DefaultMaxBytes  = 256 << 20
	DefaultUsageDays = 400
)

// ReceiptBytes estimates the bytes one raw receipt row takes in the
// store, with its index: 128 plus 1.25 times the bytes of its text. It
// errs high: measured per row (100,000 rows, after a vacuum), a typical
// receipt (110 bytes of text, estimated 265) took 165 bytes on SQLite and
// 213 on PostgreSQL, and one at the name and path caps (1,314 bytes of
// text, estimated 1,770) took 1,388 and 1,669. The store computes the
// same sum in SQL (sqlstore's receiptBytesSQL); the two must agree.
func ReceiptBytes(r *Receipt) int64 {
	text := len(r.Agent) + len(r.Skill) + len(r.Action) + len(r.Path) + len(r.Source) + len(r.Plugin) + len(r.Trust) +
		len(r.Digest) + len(r.Transport) + len(r.Outcome) + len(r.Token) + len(r.Code) + len(r.Origin)
	return 128 + int64(text)*5/4
}

// WithDefaults returns r with its zero fields set to the defaults.
func (r Retention) WithDefaults() Retention {
	if r.KeepDays <= 0 {
		r.KeepDays = DefaultKeepDays
	}
	if r.MaxRows <= 0 {
		r.MaxRows = DefaultMaxRows
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = DefaultMaxBytes
	}
	if r.UsageDays <= 0 {
		r.UsageDays = DefaultUsageDays
	}
	return r
}

// MaintainResult says what MaintainReceipts did.
type MaintainResult struct {
	RolledUp   int64 // loads and reads newly counted in the daily counts (the sum of the rows' Count)
	Pruned     int64 // raw receipt rows deleted
	PrunedDays int64 // daily-count rows deleted
	Remaining  int64 // raw receipts left (an upper bound on PostgreSQL)
	// Bytes is the estimated size (ReceiptBytes) of the raw receipts
	// counted into the daily counts and still kept; those not yet
	// counted, fewer than one maintenance's worth, come on top.
	Bytes        int64
	Transactions int // how many it took
}
