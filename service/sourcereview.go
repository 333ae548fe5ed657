package service

import (
	"context"
	"fmt"
	"time"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// SourceReview is a remote source's change that awaits review (with
// review.required on, a sync that would move a pin records one instead):
// the pin it would move from and to, and each skill it adds, removes or
// changes with its files' diffs and the safety checks' findings.
type SourceReview struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// From and To are the revisions; FromDigest and ToDigest the
	// snapshots' digests. From is "" for a source not pinned yet.
	From       string    `json:"from,omitempty"`
	FromDigest string    `json:"fromDigest,omitempty"`
	To         string    `json:"to"`
	ToDigest   string    `json:"toDigest"`
	Recorded   time.Time `json:"recorded"`
	// State is pending or rejected (a rejected change stays so that the
	// same snapshot is not queued again); Note is the rejection's reason.
	State  string        `json:"state"`
	Note   string        `json:"note,omitempty"`
	Skills []SkillChange `json:"skills"`
}

// SkillChange is one skill of a source's change.
type SkillChange struct {
	Name string `json:"name"`
	// Status is added, removed or changed; Digest the skill's new digest
	// (its old one when removed).
	Status   string             `json:"status"`
	Digest   string             `json:"digest"`
	Files    []FileChange       `json:"files"`
	Findings []skill.Diagnostic `json:"findings"`
	// Note says why Files is empty for a skill that is not removed: the
	// proposed snapshot is no longer in the cache, or a folder did not
	// read.
	Note string `json:"note,omitempty"`
}

// SourceReviewer is what Remotes offers when its sources can be reviewed.
type SourceReviewer interface {
	// PendingChanges lists every source's change that awaits review.
	PendingChanges(ctx context.Context) ([]SourceReview, error)
	// Approve moves source id's pin to its pending change (rev, when
	// given, must be the change's revision).
	Approve(ctx context.Context, id, rev string) SourceSync
	// Reject marks source id's pending change rejected.
	Reject(ctx context.Context, id, rev, note string) error
}

func (s *Service) sourceReviewer() (SourceReviewer, error) {
	r, ok := s.getRemotes().(SourceReviewer)
	if !ok || r == nil {
		return nil, errorf(CodeNotFound, "this server has no remote sources to review (add {\"git\": URL} or {\"index\": URL} to an agent's skills)")
	}
	return r, nil
}

// SourceReviews lists the remote sources' changes that await review
// (reviewer role, over every skill).
func (s *Service) SourceReviews(ctx context.Context, p Principal) ([]SourceReview, error) {
	if !p.Allows(RoleReviewer, "", nil) {
		return nil, errorf(CodeForbidden, "the changes of remote sources are reviewed with the reviewer role over every skill")
	}
	r, err := s.sourceReviewer()
	if err != nil {
		return nil, err
	}
	out, err := r.PendingChanges(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	if out == nil {
		out = []SourceReview{}
	}
	return out, nil
}

// ApproveSource moves source id's pin to the change that awaits review,
// refreshes the catalog and audits it. A change whose base pin has moved,
// or whose content fetched again differs from what was reviewed, is
// refused with a conflict.
func (s *Service) ApproveSource(ctx context.Context, p Principal, id, rev, comment string) (SourceSync, error) {
	r, err := s.decideSource(p, comment)
	if err != nil {
		return SourceSync{}, err
	}
	res := r.Approve(ctx, id, rev)
	if res.Error != "" {
		return res, sourceError(res.Code, res.Error)
	}
	ar := store.AuditRecord{Action: "source.approve", Target: "source:" + id, Before: res.FromDigest, After: res.ToDigest,
		Detail: fmt.Sprintf("%s → %s: %s", short(res.From), short(res.To), comment)}
	if err := s.audit(ctx, p, ar); err != nil {
		s.log.Warn("audit", "action", ar.Action, "err", err)
	}
	s.Refresh(ctx, nil, "remote source approved: "+id)
	return res, nil
}

// RejectSource marks source id's pending change rejected, with comment.
func (s *Service) RejectSource(ctx context.Context, p Principal, id, rev, comment string) error {
	r, err := s.decideSource(p, comment)
	if err != nil {
		return err
	}
	if err := r.Reject(ctx, id, rev, comment); err != nil {
		return AsError(err)
	}
	ar := store.AuditRecord{Action: "source.reject", Target: "source:" + id, Detail: fmt.Sprintf("%s: %s", short(rev), comment)}
	if err := s.audit(ctx, p, ar); err != nil {
		s.log.Warn("audit", "action", ar.Action, "err", err)
	}
	return nil
}

func (s *Service) decideSource(p Principal, comment string) (SourceReviewer, error) {
	if !p.Allows(RoleReviewer, "", nil) {
		return nil, errorf(CodeForbidden, "approving or rejecting a remote source's change needs the reviewer role over every skill")
	}
	if len(comment) > MaxReviewComment {
		return nil, errorf(CodeInvalid, "the comment is %d bytes, over %d: shorten it", len(comment), MaxReviewComment)
	}
	return s.sourceReviewer()
}

// sourceError is a failed approval as the service's error: no change to
// approve is not_found, a change that no longer applies a conflict.
func sourceError(code, msg string) error {
	switch code {
	case "remote-no-pending":
		return errorf(CodeNotFound, "%s", msg)
	case "remote-conflict":
		return errorf(CodeConflict, "%s", msg)
	case "remote-invalid":
		return errorf(CodeNotFound, "%s", msg)
	}
	return errorf(CodeInvalid, "%s", msg)
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	if rev == "" {
		return "nothing"
	}
	return rev
}
