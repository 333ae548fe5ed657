package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout/loadout/store"
)

// Drafts, reviews, pins and withdrawals (store.Drafts). The drafts
// themselves are made by save, under store.WithDraft.

const reviewCols = `id, skill, version, base, digest, author_token, author, state, reviewer_token, reviewer, comment, created_at, decided_at`

func scanReview(scan func(...any) error) (store.Review, error) {
	var r store.Review
	var created, decided int64
	err := scan(&r.ID, &r.Skill, &r.Version, &r.Base, &r.Digest, &r.AuthorToken, &r.Author, &r.State,
		&r.ReviewerToken, &r.Reviewer, &r.Comment, &created, &decided)
	r.CreatedAt = fromMicros(created)
	if decided > 0 {
		r.DecidedAt = fromMicros(decided)
	}
	return r, err
}

// validState refuses a state filter that is not a review state.
func validState(st string) error {
	switch st {
	case "", store.ReviewPending, store.ReviewApproved, store.ReviewRejected, store.ReviewWithdrawn:
		return nil
	}
	return &store.Error{Code: store.Invalid, Field: "state",
		Message: fmt.Sprintf("state %q: give pending, approved, rejected or withdrawn", st)}
}

// Reviews lists reviews, pending first, then newest first.
func (s *Store) Reviews(ctx context.Context, f store.ReviewFilter) ([]store.Review, error) {
	if err := validState(f.State); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	var where []string
	var args []any
	if f.State != "" {
		args = append(args, f.State)
		where = append(where, fmt.Sprintf("state = $%d", len(args)))
	}
	if f.Skill != "" {
		args = append(args, f.Skill)
		where = append(where, fmt.Sprintf("skill = $%d", len(args)))
	}
	q := `SELECT ` + reviewCols + ` FROM reviews`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += fmt.Sprintf(` ORDER BY CASE WHEN state = 'pending' THEN 0 ELSE 1 END, created_at DESC, id LIMIT $%d`, len(args))
	out := []store.Review{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanReview(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c conn) review(id string, lock bool) (*store.Review, error) {
	q := `SELECT ` + reviewCols + ` FROM reviews WHERE id = $1`
	if lock {
		q += c.s.d.ForUpdate
	}
	var r store.Review
	var created, decided int64
	found, err := c.one(q, []any{id}, &r.ID, &r.Skill, &r.Version, &r.Base, &r.Digest, &r.AuthorToken, &r.Author, &r.State,
		&r.ReviewerToken, &r.Reviewer, &r.Comment, &created, &decided)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &store.Error{Code: store.NotFound, Field: "id", Message: fmt.Sprintf("no review has the id %q: list them with GET /v1/reviews or `loadout review list`", id)}
	}
	r.CreatedAt = fromMicros(created)
	if decided > 0 {
		r.DecidedAt = fromMicros(decided)
	}
	return &r, nil
}

// Review returns one review.
func (s *Store) Review(ctx context.Context, id string) (*store.Review, error) {
	var r *store.Review
	err := s.read(ctx, func(c conn) error {
		var err error
		r, err = c.review(id, false)
		return err
	})
	return r, err
}

// decide locks the skill row, then the review, checks it is pending, and
// marks it state.
func (s *Store) decide(ctx context.Context, id, state string, by store.Author, comment string, publish bool) (*store.Review, int, error) {
	var out *store.Review
	before := 0
	err := s.write(ctx, func(c conn) error {
		r, err := c.review(id, false)
		if err != nil {
			return err
		}
		// The skill row first, for update: two approvals of one skill's
		// drafts queue here, and the second sees the first's publish.
		cur, err := c.skillByName(r.Skill, true)
		if err != nil {
			return err
		}
		if r, err = c.review(id, true); err != nil {
			return err
		}
		if r.State != store.ReviewPending {
			return &store.Error{Code: store.Conflict, Field: "state",
				Message: fmt.Sprintf("review %s of %q version %d is %s, not pending: nothing to decide", r.ID, r.Skill, r.Version, r.State)}
		}
		if cur == nil {
			return notFound(r.Skill)
		}
		before = cur.published
		if publish {
			if cur.published != r.Base {
				return &store.Error{Code: store.Conflict, Field: "base", Current: cur.published,
					Message: fmt.Sprintf("the draft %d of %q was made from version %d, but version %d has been published since: review the newer draft, or edit the skill again and review that", r.Version, r.Skill, r.Base, cur.published)}
			}
			res, err := c.exec(`UPDATE skills SET published = $1, updated_at = $2 WHERE id = $3 AND published = $4`,
				r.Version, now(), cur.id, r.Base)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return &store.Error{Code: store.Conflict, Field: "base", Message: fmt.Sprintf("skill %q was published by another approval at the same time: reload the review queue", r.Skill)}
			}
		}
		t := now()
		if _, err := c.exec(`UPDATE reviews SET state = $1, reviewer_token = $2, reviewer = $3, comment = $4, decided_at = $5
WHERE id = $6 AND state = 'pending'`, state, by.Token, by.Name, comment, t, id); err != nil {
			return err
		}
		r.State, r.ReviewerToken, r.Reviewer, r.Comment, r.DecidedAt = state, by.Token, by.Name, comment, fromMicros(t)
		out = r
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, before, nil
}

// Approve publishes exactly the review's version.
func (s *Store) Approve(ctx context.Context, id string, by store.Author, comment string) (*store.Review, int, error) {
	return s.decide(ctx, id, store.ReviewApproved, by, comment, true)
}

// Reject marks a pending review rejected.
func (s *Store) Reject(ctx context.Context, id string, by store.Author, comment string) (*store.Review, error) {
	r, _, err := s.decide(ctx, id, store.ReviewRejected, by, comment, false)
	return r, err
}

// Withdraw marks a skill withdrawn, or not.
func (s *Store) Withdraw(ctx context.Context, name string, withdrawn bool) error {
	return s.setFlag(ctx, `UPDATE skills SET withdrawn = $1, updated_at = $2 WHERE name = $3`, name, withdrawn)
}

// SetPin stores an agent's pin of a skill.
func (s *Store) SetPin(ctx context.Context, p store.Pin) (store.Pin, error) {
	if strings.TrimSpace(p.Agent) == "" {
		return p, &store.Error{Code: store.Invalid, Field: "agent", Message: "give the agent's id"}
	}
	switch p.Follow {
	case store.FollowPublished, store.FollowLatest:
		p.Version = 0
	case store.FollowVersion:
		if p.Version < 1 {
			return p, &store.Error{Code: store.Invalid, Field: "version", Message: fmt.Sprintf("version %d: give a version number from 1, \"published\" or \"latest\"", p.Version)}
		}
	default:
		return p, &store.Error{Code: store.Invalid, Field: "version", Message: fmt.Sprintf("follow %q: give a version number, \"published\" or \"latest\"", p.Follow)}
	}
	t := now()
	err := s.write(ctx, func(c conn) error {
		cur, err := c.skillByName(p.Skill, true)
		if err != nil {
			return err
		}
		if cur == nil {
			return notFound(p.Skill)
		}
		if p.Follow == store.FollowVersion {
			var old int
			found, err := c.one(`SELECT version FROM agent_pins WHERE agent_id = $1 AND skill = $2 AND follow = 'version'`, []any{p.Agent, p.Skill}, &old)
			if err != nil {
				return err
			}
			if cur.withdrawn && (!found || old != p.Version) {
				return &store.Error{Code: store.Conflict, Field: "skill", Message: fmt.Sprintf("skill %q is withdrawn: it takes no new pins (existing pins keep working until moved)", p.Skill)}
			}
			if p.Version > cur.version {
				return noVersion(p.Skill, p.Version, cur.version)
			}
			if found, err := c.one(`SELECT version FROM skill_versions WHERE skill_id = $1 AND version = $2`, []any{cur.id, p.Version}, &old); err != nil {
				return err
			} else if !found {
				return noVersion(p.Skill, p.Version, cur.version)
			}
		}
		_, err = c.exec(`INSERT INTO agent_pins (agent_id, skill, follow, version, actor, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (agent_id, skill) DO UPDATE SET follow = excluded.follow, version = excluded.version, actor = excluded.actor, updated_at = excluded.updated_at`,
			p.Agent, p.Skill, p.Follow, p.Version, p.Actor, t)
		return err
	})
	p.UpdatedAt = fromMicros(t)
	return p, err
}

// Pins lists every pin (of one skill when skill is set), by agent then
// skill.
func (s *Store) Pins(ctx context.Context, skill string) ([]store.Pin, error) {
	q := `SELECT agent_id, skill, follow, version, actor, updated_at FROM agent_pins`
	var args []any
	if skill != "" {
		q += ` WHERE skill = $1`
		args = append(args, skill)
	}
	out := []store.Pin{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(q+` ORDER BY agent_id, skill`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p store.Pin
			var t int64
			if err := rows.Scan(&p.Agent, &p.Skill, &p.Follow, &p.Version, &p.Actor, &t); err != nil {
				return err
			}
			p.UpdatedAt = fromMicros(t)
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var _ store.Drafts = (*Store)(nil)
