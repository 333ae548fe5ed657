package service

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout/loadout/internal/linediff"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// ReviewOptions configure drafts and review (the config's "review").
type ReviewOptions struct {
	// Required makes every save by the API, UI and CLI a draft: a new
	// version awaiting review, while agents keep the published one.
	// Off (the default), every save publishes, as it always has.
	Required bool
	// AllowSelf lets the author of a draft approve or reject it
	// (review.distinct false). Off (the default), a reviewer must be
	// another principal, told apart by token id.
	AllowSelf bool
}

// ReviewRequired reports whether saves are drafts awaiting review.
func (s *Service) ReviewRequired() bool { return s.opt.Review.Required }

// draft marks ctx's store writes as drafts by p when review is required.
func (s *Service) draft(ctx context.Context, p Principal) context.Context {
	if !s.opt.Review.Required {
		return ctx
	}
	return store.WithDraft(ctx, author(p))
}

func author(p Principal) store.Author { return store.Author{Token: p.TokenID, Name: p.Name} }

// drafts is the store's review side, or an error saying there is none.
func (s *Service) drafts() (store.Drafts, error) {
	d, ok := s.opt.Store.(store.Drafts)
	if s.opt.Store == nil || !ok {
		return nil, errorf(CodeNoStore, "this server has no store that keeps drafts and reviews: start it with --db or set \"store\" in the config")
	}
	return d, nil
}

// Reviews lists reviews, pending first (reviewer role): every review for
// a reviewer of every skill, and only those of the skills it reviews for
// a reviewer limited to some (by name glob or tag).
func (s *Service) Reviews(ctx context.Context, p Principal, f store.ReviewFilter) ([]store.Review, error) {
	all := p.Allows(RoleReviewer, "", nil)
	if !all && !atLeast(p.Role(), RoleReviewer) {
		return nil, errorf(CodeForbidden, "listing reviews needs the reviewer role")
	}
	d, err := s.drafts()
	if err != nil {
		return nil, err
	}
	rs, err := d.Reviews(ctx, f)
	if err != nil || all {
		return rs, AsErrorOrNil(err)
	}
	mine := []store.Review{}
	for _, r := range rs {
		if rec, err := s.opt.Store.Get(ctx, r.Skill); err == nil && p.Allows(RoleReviewer, r.Skill, rec.Tags) {
			mine = append(mine, r)
		}
	}
	return mine, nil
}

// atLeast reports whether role holds want (viewer < author < reviewer <
// admin).
func atLeast(role, want string) bool {
	rank := map[string]int{RoleViewer: 1, RoleAuthor: 2, RoleReviewer: 3, RoleAdmin: 4}
	return rank[role] >= rank[want] && rank[want] > 0
}

// ReviewDetail is a review with what it would change: the files of the
// draft against the version published now, and the draft's safety
// findings.
type ReviewDetail struct {
	store.Review
	// Published is the version agents are served now (0: none).
	Published int                `json:"published"`
	Files     []FileChange       `json:"files"`
	Findings  []skill.Diagnostic `json:"findings"`
}

// FileChange is one file of a draft against the published version.
type FileChange struct {
	Path string `json:"path"`
	// Status is added, removed, changed or unchanged.
	Status  string `json:"status"`
	OldSize int    `json:"oldSize"`
	NewSize int    `json:"newSize"`
	// Diff is a unified line diff of a changed text file ("" when a file
	// is binary or too large for one: see Note).
	Diff string `json:"diff,omitempty"`
	Note string `json:"note,omitempty"`
}

// Review returns one review with its diff and findings (reviewer role).
func (s *Service) Review(ctx context.Context, p Principal, id string) (*ReviewDetail, error) {
	d, err := s.drafts()
	if err != nil {
		return nil, err
	}
	r, err := d.Review(ctx, id)
	if err != nil {
		return nil, AsError(err)
	}
	b, rec, err := s.opt.Store.Bundle(ctx, r.Skill, r.Version)
	if err != nil {
		return nil, AsError(err)
	}
	if !p.Allows(RoleReviewer, r.Skill, rec.Tags) {
		return nil, errorf(CodeForbidden, "reading review %s needs the reviewer role for skill %q", id, r.Skill)
	}
	cur, err := s.opt.Store.Get(ctx, r.Skill)
	if err != nil {
		return nil, AsError(err)
	}
	old := &skill.Bundle{}
	if cur.Published > 0 {
		if old, _, err = s.opt.Store.Bundle(ctx, r.Skill, cur.Published); err != nil {
			return nil, AsError(err)
		}
	}
	out := &ReviewDetail{Review: *r, Published: cur.Published, Files: DiffBundles(old, b), Findings: []skill.Diagnostic{}}
	in := safety.Input{Name: rec.Name, Description: rec.Description, Content: b.Content, Files: b.Files}
	for _, f := range safety.Check(in, s.SafetyPolicy()) {
		f.Skill = rec.Name
		out.Findings = append(out.Findings, f)
	}
	return out, nil
}

// decide is Approve and Reject: the reviewer role for the skill, and,
// unless AllowSelf, a reviewer who is not the draft's author.
func (s *Service) decide(ctx context.Context, p Principal, id, comment string, approve bool) (*store.Review, error) {
	d, err := s.drafts()
	if err != nil {
		return nil, err
	}
	if len(comment) > MaxReviewComment {
		return nil, errorf(CodeInvalid, "the comment is %d bytes, over %d: shorten it", len(comment), MaxReviewComment)
	}
	r, err := d.Review(ctx, id)
	if err != nil {
		return nil, AsError(err)
	}
	rec, err := s.opt.Store.Get(ctx, r.Skill)
	if err != nil {
		return nil, AsError(err)
	}
	verb := "approve"
	if !approve {
		verb = "reject"
	}
	if !p.Allows(RoleReviewer, r.Skill, rec.Tags) {
		return nil, errorf(CodeForbidden, "to %s a draft of %q needs the reviewer role for it", verb, r.Skill)
	}
	if !s.opt.Review.AllowSelf && sameActor(p, r) {
		return nil, errorf(CodeForbidden, "%s wrote draft %d of %q and may not %s it: another reviewer must (review.distinct is on)", actorName(p), r.Version, r.Skill, verb)
	}
	var got *store.Review
	before := rec.Published
	if approve {
		got, before, err = d.Approve(ctx, id, author(p), comment)
	} else {
		got, err = d.Reject(ctx, id, author(p), comment)
	}
	if err != nil {
		return nil, AsError(err)
	}
	old := ""
	if before > 0 {
		if _, brec, err := s.opt.Store.Bundle(ctx, r.Skill, before); err == nil {
			old = brec.Digest
		}
	}
	ar := store.AuditRecord{Action: "review." + verb, Target: "skill:" + r.Skill, Before: old, After: r.Digest,
		Detail: fmt.Sprintf("review %s, version %d: %s", id, r.Version, comment)}
	if !approve {
		ar.After = old // nothing published changed
	}
	if err := s.audit(ctx, p, ar); err != nil {
		s.log.Warn("audit", "action", ar.Action, "err", err)
	}
	if approve {
		s.RefreshStored(ctx, "approve "+r.Skill, r.Skill)
	}
	return got, nil
}

// MaxReviewComment bounds a review's comment, in bytes.
const MaxReviewComment = 4096

// Approve publishes exactly the draft of review id (reviewer role; never
// its own author unless AllowSelf). A draft whose base is no longer the
// published version is refused with a conflict.
func (s *Service) Approve(ctx context.Context, p Principal, id, comment string) (*store.Review, error) {
	return s.decide(ctx, p, id, comment, true)
}

// Reject closes the review of a draft without publishing it.
func (s *Service) Reject(ctx context.Context, p Principal, id, comment string) (*store.Review, error) {
	return s.decide(ctx, p, id, comment, false)
}

// sameActor reports whether p wrote r. Principals are told apart by token
// id; two principals without one (an open loopback server) cannot be, so
// they count as the same.
func sameActor(p Principal, r *store.Review) bool {
	return p.TokenID == r.AuthorToken
}

func actorName(p Principal) string {
	switch {
	case p.Name != "":
		return fmt.Sprintf("%q", p.Name)
	case p.TokenID != "":
		return "token " + p.TokenID
	}
	return "this caller (no token: review.distinct needs tokens to tell reviewers from authors)"
}

// DiffBundles compares two versions of a skill file by file, SKILL.md
// first, then by path.
func DiffBundles(old, cur *skill.Bundle) []FileChange {
	type side struct {
		data []byte
		ok   bool
	}
	files := map[string][2]side{}
	var paths []string
	add := func(b *skill.Bundle, i int) {
		put := func(p string, data []byte) {
			e, seen := files[p]
			if !seen {
				paths = append(paths, p)
			}
			e[i] = side{data, true}
			files[p] = e
		}
		if b.Content != nil || i == 1 {
			put("SKILL.md", b.Content)
		}
		for _, f := range b.Files {
			put(f.Path, f.Data)
		}
	}
	add(old, 0)
	add(cur, 1)
	sortPaths(paths)
	out := []FileChange{}
	for _, p := range paths {
		e := files[p]
		c := FileChange{Path: p, OldSize: len(e[0].data), NewSize: len(e[1].data)}
		switch {
		case !e[0].ok:
			c.Status = "added"
		case !e[1].ok:
			c.Status = "removed"
		case bytes.Equal(e[0].data, e[1].data):
			c.Status = "unchanged"
		default:
			c.Status = "changed"
		}
		if c.Status != "unchanged" {
			c.Diff, c.Note = unified(e[0].data, e[1].data)
		}
		out = append(out, c)
	}
	return out
}

// sortPaths sorts SKILL.md first, then bytewise.
func sortPaths(ps []string) {
	slices.SortFunc(ps, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "SKILL.md":
			return -1
		case b == "SKILL.md":
			return 1
		}
		return strings.Compare(a, b)
	})
}

// maxDiffBytes bounds a file given a review's line diff; the diff itself
// is bounded by internal/linediff (lines and edits).
const maxDiffBytes = 256 << 10

// unified is a line diff of a and b with every line marked " ", "-" or
// "+" (whole files: a skill's files are short), or a note saying why
// there is none.
func unified(a, b []byte) (string, string) {
	if len(a) > maxDiffBytes || len(b) > maxDiffBytes {
		return "", fmt.Sprintf("over %d bytes: no line diff", maxDiffBytes)
	}
	if bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
		return "", "binary: no line diff"
	}
	la, lb := linediff.Split(string(a)), linediff.Split(string(b))
	d, ok := linediff.Diff(la, lb)
	if !ok {
		return "", fmt.Sprintf("%d and %d lines, too long or too different for a line diff (over %d lines or %d changed lines)", len(la), len(lb), linediff.MaxLines, linediff.MaxEdits)
	}
	var sb strings.Builder
	for _, l := range d {
		sb.WriteByte(l.Op)
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
	return sb.String(), ""
}
