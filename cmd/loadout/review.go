package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

func init() {
	commands["review"] = command{"list, show, approve or reject drafts of stored skills awaiting review", runReview}
}

// cliAuthor is who the command line acts as: the operating system user,
// as the token "cli:USER", so review.distinct tells a CLI reviewer from an
// API author (and from another user at the same machine).
func cliAuthor(e *env) store.Author {
	name := e.getenv("USER")
	if u, err := user.Current(); name == "" && err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = fmt.Sprintf("uid-%d", os.Getuid())
	}
	return store.Author{Token: "cli:" + name, Name: name}
}

// cliDraft marks the command's store writes as drafts when the config
// requires review.
func cliDraft(ctx context.Context, e *env, f *config.File) context.Context {
	if f == nil || !f.Review.Required {
		return ctx
	}
	return store.WithDraft(ctx, cliAuthor(e))
}

func runReview(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var state, skillName, comment string
	var asJSON bool
	fs := newFlags(e, "review", "list [--state S] [--skill NAME] | show ID | approve ID [--comment C] | reject ID [--comment C]  [--json] [--db D]",
		"Drafts of stored skills awaiting review (with \"review\": {\"required\": true} in the\nconfig every save is one). list shows them, pending first; show prints a draft's\nfiles against the published version and its safety findings; approve publishes\nexactly that version (refused when another version was published since the\ndraft was made, and, with review.distinct, to the draft's own author); reject\ncloses it. The command line acts as cli:USER.")
	sf.register(fs)
	fs.StringVar(&state, "state", "", "list: only reviews in this state (pending, approved, rejected, withdrawn)")
	fs.StringVar(&skillName, "skill", "", "list: only this skill's reviews")
	fs.StringVar(&comment, "comment", "", "approve, reject: the reviewer's comment")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	// Flags may come after the subcommand and its ID.
	var pos []string
	rest := args
	for len(rest) > 0 {
		if code := parseFlags(fs, rest); code >= 0 {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) == 0 {
		return fail(e, fmt.Errorf("review: give list, show ID, approve ID or reject ID"))
	}
	verb := pos[0]
	want := 2
	if verb == "list" {
		want = 1
	}
	switch verb {
	case "list", "show", "approve", "reject":
	default:
		return fail(e, fmt.Errorf("review %s: give list, show ID, approve ID or reject ID", verb))
	}
	if len(pos) != want {
		if want == 1 {
			return fail(e, fmt.Errorf("review list takes no arguments (got %q)", strings.Join(pos[1:], " ")))
		}
		return fail(e, fmt.Errorf("review %s: give one review ID (from 'loadout review list')", verb))
	}
	mode := readOnly
	st, cfg, _, err := sf.openStoreOnly(ctx, e, mode)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	d, ok := st.(store.Drafts)
	if !ok {
		return fail(e, fmt.Errorf("this store keeps no reviews"))
	}
	out := func(v any) int {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fail(e, err)
		}
		return 0
	}
	switch verb {
	case "list":
		rs, err := d.Reviews(ctx, store.ReviewFilter{State: state, Skill: skillName})
		if err != nil {
			return fail(e, err)
		}
		if asJSON {
			return out(rs)
		}
		if len(rs) == 0 {
			fmt.Fprintln(e.stdout, "no reviews")
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSKILL\tVERSION\tBASE\tSTATE\tAUTHOR\tREVIEWER\tCREATED")
		for _, r := range rs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.ID, termText(r.Skill), r.Version, r.Base, r.State,
				termText(r.Author), termText(r.Reviewer), r.CreatedAt.Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
		return 0
	case "show":
		r, err := d.Review(ctx, pos[1])
		if err != nil {
			return fail(e, err)
		}
		b, rec, err := st.Bundle(ctx, r.Skill, r.Version)
		if err != nil {
			return fail(e, err)
		}
		cur, err := st.Get(ctx, r.Skill)
		if err != nil {
			return fail(e, err)
		}
		old := &skill.Bundle{}
		if cur.Published > 0 {
			if old, _, err = st.Bundle(ctx, r.Skill, cur.Published); err != nil {
				return fail(e, err)
			}
		}
		det := service.ReviewDetail{Review: *r, Published: cur.Published, Files: service.DiffBundles(old, b), Findings: []skill.Diagnostic{}}
		var pol *safety.Policy
		if cfg != nil {
			pol = cfg.SafetyPolicy()
		}
		for _, f := range safety.Check(safety.Input{Name: rec.Name, Description: rec.Description, Content: b.Content, Files: b.Files}, pol) {
			f.Skill = rec.Name
			det.Findings = append(det.Findings, f)
		}
		if asJSON {
			return out(det)
		}
		fmt.Fprintf(e.stdout, "review %s: %s version %d (made from %d; published now %d), %s, by %s\n", r.ID, termText(r.Skill), r.Version, r.Base, cur.Published, r.State, termText(r.Author))
		for _, f := range det.Files {
			if f.Status == "unchanged" {
				continue
			}
			fmt.Fprintf(e.stdout, "\n%s %s (%d -> %d bytes)\n", f.Status, termText(f.Path), f.OldSize, f.NewSize)
			if f.Note != "" {
				fmt.Fprintf(e.stdout, "  (%s)\n", f.Note)
			}
			for _, l := range strings.SplitAfter(f.Diff, "\n") {
				if l != "" {
					fmt.Fprintln(e.stdout, termText(strings.TrimSuffix(l, "\n")))
				}
			}
		}
		fmt.Fprintf(e.stdout, "\n%d safety finding(s)\n", len(det.Findings))
		for _, f := range det.Findings {
			fmt.Fprintf(e.stdout, "  %s %s: %s\n", f.Severity, f.Code, termText(f.Message))
		}
		return 0
	}
	// approve, reject
	if len(comment) > service.MaxReviewComment {
		return fail(e, fmt.Errorf("--comment is %d bytes, over %d: shorten it", len(comment), service.MaxReviewComment))
	}
	r, err := d.Review(ctx, pos[1])
	if err != nil {
		return fail(e, err)
	}
	me := cliAuthor(e)
	distinct := cfg == nil || cfg.Review.Distinct == nil || *cfg.Review.Distinct
	if distinct && r.AuthorToken == me.Token {
		return fail(e, fmt.Errorf("%s wrote draft %d of %q and may not %s it: another reviewer must (review.distinct is on)", me.Token, r.Version, r.Skill, verb))
	}
	var got *store.Review
	before := 0
	if verb == "approve" {
		got, before, err = d.Approve(ctx, r.ID, me, comment)
	} else {
		got, err = d.Reject(ctx, r.ID, me, comment)
	}
	if err != nil {
		return fail(e, err)
	}
	if a, ok := st.(store.Auditor); ok {
		rec := store.AuditRecord{ActorToken: me.Token, Actor: me.Name, Role: "admin", Action: "review." + verb, Target: "skill:" + r.Skill,
			After: r.Digest, Transport: "cli", Detail: fmt.Sprintf("review %s, version %d: %s", r.ID, r.Version, comment)}
		if before > 0 {
			if _, brec, err := st.Bundle(ctx, r.Skill, before); err == nil {
				rec.Before = brec.Digest
			}
		}
		if verb == "reject" {
			rec.After = rec.Before
		}
		if _, err := a.AppendAudit(ctx, rec); err != nil {
			fmt.Fprintf(e.stderr, "loadout: the audit record was not written: %v\n", err)
		}
	}
	if asJSON {
		return out(got)
	}
	if verb == "approve" {
		fmt.Fprintf(e.stdout, "approved: %s version %d is published (was %d)\n", termText(r.Skill), r.Version, before)
	} else {
		fmt.Fprintf(e.stdout, "rejected: %s version %d (still published: %d)\n", termText(r.Skill), r.Version, before)
	}
	return 0
}
