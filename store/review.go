package store

import (
	"context"
	"time"
)

// Drafts and review. A stored skill has a latest version (Record.Version,
// what authors edit) and a published one (Record.Published, what agents
// are served). Without review every save publishes the version it makes.
// A save made with a context from WithDraft leaves the published version
// where it is and opens a pending Review of the new version instead;
// approving it publishes exactly that version.

// Author is who made or decided a draft: a token's id and name, or a
// signed-in subject as Token.
type Author struct {
	Token, Name string
}

type draftKey struct{}

// WithDraft marks the store writes made with ctx as drafts by a: each new
// version is left unpublished, with a pending Review. Stores that do not
// implement Drafts ignore it.
func WithDraft(ctx context.Context, a Author) context.Context {
	return context.WithValue(ctx, draftKey{}, a)
}

// DraftOf returns the author WithDraft set on ctx.
func DraftOf(ctx context.Context) (Author, bool) {
	a, ok := ctx.Value(draftKey{}).(Author)
	return a, ok
}

// Review states.
const (
	ReviewPending   = "pending"
	ReviewApproved  = "approved"
	ReviewRejected  = "rejected"
	ReviewWithdrawn = "withdrawn"
)

// Review is one draft version of a stored skill and what became of it.
type Review struct {
	ID    string `json:"id"`
	Skill string `json:"skill"`
	// Version is the draft; Base the published version it was made from
	// (0: none, a skill created as a draft). Approval is refused with a
	// "conflict" when Base is no longer the published version.
	Version     int    `json:"version"`
	Base        int    `json:"base"`
	Digest      string `json:"digest"`
	AuthorToken string `json:"authorToken,omitempty"`
	Author      string `json:"author"`
	State       string `json:"state"`
	// The reviewer who approved or rejected it, and their comment.
	ReviewerToken string    `json:"reviewerToken,omitempty"`
	Reviewer      string    `json:"reviewer,omitempty"`
	Comment       string    `json:"comment,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	DecidedAt     time.Time `json:"decidedAt,omitzero"`
}

// ReviewFilter selects reviews: by State and Skill when set, at most Limit
// (0: 1,000).
type ReviewFilter struct {
	State, Skill string
	Limit        int
}

// Pin follows. An agent without a Pin for a skill follows "published".
const (
	FollowPublished = "published"
	FollowLatest    = "latest"
	FollowVersion   = "version"
)

// Pin says which version of a stored skill an agent is served.
type Pin struct {
	Agent string `json:"agent"`
	Skill string `json:"skill"`
	// Follow is FollowVersion (Version is set), FollowPublished or
	// FollowLatest.
	Follow    string    `json:"follow"`
	Version   int       `json:"version,omitempty"`
	Actor     string    `json:"actor,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Drafts is implemented by stores that keep drafts, reviews, pins and
// withdrawals (store/sqlstore's is one).
type Drafts interface {
	// Reviews lists reviews, pending first, then newest first.
	Reviews(ctx context.Context, f ReviewFilter) ([]Review, error)
	// Review returns one review, or a "not_found" Error.
	Review(ctx context.Context, id string) (*Review, error)
	// Approve publishes exactly the review's version and marks it
	// approved, in one transaction: a "conflict" Error when the review is
	// no longer pending or its base is no longer the published version
	// (another draft was approved first). It returns the review and the
	// version published before.
	Approve(ctx context.Context, id string, by Author, comment string) (*Review, int, error)
	// Reject marks a pending review rejected (a "conflict" when it is no
	// longer pending). Nothing is published.
	Reject(ctx context.Context, id string, by Author, comment string) (*Review, error)
	// Withdraw marks a skill withdrawn (or not): it leaves listings and
	// refuses new exact pins; existing pins keep being served.
	Withdraw(ctx context.Context, name string, withdrawn bool) error
	// SetPin stores an agent's pin of a skill (FollowPublished too: it
	// overrides a pin in the config).
	// An exact version must exist, and a withdrawn skill refuses a new one.
	SetPin(ctx context.Context, p Pin) (Pin, error)
	// Pins lists every pin, by agent then skill; of one skill when skill
	// is set.
	Pins(ctx context.Context, skill string) ([]Pin, error)
}
