package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/remote"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// maxReviewDiffSkills bounds the skills of one change given file diffs
// and findings: a change of a whole large repository still answers in
// bounded time and bytes. The rest are listed with their status and
// digest, and a note.
var maxReviewDiffSkills = 200

// PendingChanges is the remote sources' changes that await review, each
// skill with its files' diffs against what is served and its findings.
func (r remotesService) PendingChanges(ctx context.Context) ([]service.SourceReview, error) {
	pcs, err := r.m.PendingChanges(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]service.SourceReview, 0, len(pcs))
	for _, pc := range pcs {
		sr := service.SourceReview{ID: pc.To.ID, URL: pc.URL, From: pc.Base, FromDigest: pc.BaseDigest, To: pc.To.Revision,
			ToDigest: pc.To.Digest, Recorded: pc.Recorded, State: "pending", Note: pc.Note, Skills: []service.SkillChange{}}
		if pc.Rejected != nil {
			sr.State = "rejected"
		}
		add := func(name, status, digest string) {
			sc := service.SkillChange{Name: name, Status: status, Digest: digest, Files: []service.FileChange{}, Findings: []skill.Diagnostic{}}
			if len(sr.Skills) >= maxReviewDiffSkills {
				sc.Note = fmt.Sprintf("past the first %d skills of this change, skills are listed without their diffs and findings: review the rest in the repository, or with `loadout sync --pending --json` after a smaller upstream change", maxReviewDiffSkills)
				sr.Skills = append(sr.Skills, sc)
				return
			}
			old, oerr := bundleOf(pc.Served[name])
			cur, cerr := bundleOf(pc.Proposed[name])
			switch {
			case status != "removed" && pc.Proposed == nil:
				sc.Note = "the proposed snapshot is no longer in the cache: approving fetches it again and checks its digest"
			case oerr != nil:
				sc.Note = "the served skill did not read: " + oerr.Error()
			case cerr != nil:
				sc.Note = "the proposed skill did not read: " + cerr.Error()
			default:
				sc.Files = service.DiffBundles(old, cur)
			}
			if sk := pc.Proposed[name]; sk != nil && status != "removed" {
				p := r.policy
				if in, err := safety.FromSkill(sk, p); err == nil {
					for _, d := range safety.Check(in, p) {
						d.Skill = name
						sc.Findings = append(sc.Findings, d)
					}
				}
			}
			sr.Skills = append(sr.Skills, sc)
		}
		for _, n := range pc.Added {
			add(n, "added", pc.To.Skills[n])
		}
		for _, n := range pc.Changed {
			add(n, "changed", pc.To.Skills[n])
		}
		for _, n := range pc.Removed {
			d := ""
			if pin := r.m.Pin(pc.To.ID); pin != nil {
				d = pin.Skills[n]
			}
			add(n, "removed", d)
		}
		out = append(out, sr)
	}
	return out, nil
}

// bundleOf reads a skill's files (an empty bundle for none).
func bundleOf(sk *skill.Skill) (*skill.Bundle, error) {
	if sk == nil {
		return &skill.Bundle{}, nil
	}
	return sk.BundleWithin(skill.Limits{})
}

// Approve moves a source's pin to its pending change.
func (r remotesService) Approve(ctx context.Context, id, rev string) service.SourceSync {
	return sourceSync(r.m.Approve(ctx, id, rev))
}

// Reject marks a source's pending change rejected.
func (r remotesService) Reject(ctx context.Context, id, rev, note string) error {
	return r.m.Reject(ctx, id, rev, note)
}

var _ service.SourceReviewer = remotesService{}

// reviewSources is `loadout sync --pending | --approve ID | --reject ID`.
func reviewSources(ctx context.Context, e *env, m *remote.Manager, f *config.File, dsn string, pending bool, approve, reject, rev, comment string, asJSON bool) int {
	r := remotesService{m: m, policy: policyOf(f)}
	switch {
	case pending:
		list, err := r.PendingChanges(ctx)
		if err != nil {
			return fail(e, err)
		}
		if asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			enc.Encode(map[string]any{"lock": f.LockPath(), "changes": list})
		} else if len(list) == 0 {
			fmt.Fprintln(e.stdout, "no change of a remote source awaits review")
		}
		code := 0
		for _, c := range list {
			if c.State == "pending" {
				code = 1
			}
			if asJSON {
				continue
			}
			state := "awaits review"
			if c.State == "rejected" {
				state = "rejected: " + termText(c.Note)
			}
			fmt.Fprintf(e.stdout, "%s: %s → %s, %s (recorded %s)\n", c.ID, shortText(c.From), shortText(c.To), state, c.Recorded.Format(time.RFC3339))
			for _, sc := range c.Skills {
				mark := map[string]string{"added": "+", "removed": "-", "changed": "~"}[sc.Status]
				fmt.Fprintf(e.stdout, "  %s %s %s (%d files changed, %d findings)\n", mark, sc.Name, sc.Digest, changedFiles(sc.Files), len(sc.Findings))
			}
		}
		return code
	case approve != "":
		res := r.Approve(ctx, approve, rev)
		if res.Error != "" {
			fmt.Fprintf(e.stderr, "loadout sync --approve: %s\n", termText(res.Error))
			return 1
		}
		fmt.Fprintln(e.stdout, strings.Replace(res.Summary, ": ", ": approved, the pin moved ", 1))
		auditCLIRecords(ctx, dsn, f, store.AuditRecord{Action: "source.approve", Target: "source:" + approve, Before: res.FromDigest, After: res.ToDigest, Detail: res.Summary + ": " + comment})
	default:
		if err := r.Reject(ctx, reject, rev, comment); err != nil {
			fmt.Fprintf(e.stderr, "loadout sync --reject: %s\n", termText(err.Error()))
			return 1
		}
		fmt.Fprintf(e.stdout, "%s: the change awaiting review is rejected; the pin stays\n", reject)
		auditCLIRecords(ctx, dsn, f, store.AuditRecord{Action: "source.reject", Target: "source:" + reject, Detail: rev + ": " + comment})
	}
	fmt.Fprintf(e.stderr, "lock: %s (a running serve follows it)\n", f.LockPath())
	return 0
}

func changedFiles(fs []service.FileChange) int {
	n := 0
	for _, f := range fs {
		if f.Status != "unchanged" {
			n++
		}
	}
	return n
}

func shortText(rev string) string {
	if rev == "" {
		return "nothing"
	}
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
