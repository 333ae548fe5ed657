package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/store"
)

func init() {
	commands["receipts"] = command{"list activation receipts (which agent loaded or read which skill)", runReceipts}
}

func runReceipts(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var q store.ReceiptQuery
	var since string
	var asJSON bool
	fs := newFlags(e, "receipts", "[--agent A] [--skill S] [--since DURATION|RFC3339] [--limit N] [--json] [--db D]",
		"Lists activation receipts, newest first: every skill load and file read the server\nanswered, over any transport, with the skill's digest and the outcome.")
	sf.register(fs)
	fs.StringVar(&q.Agent, "agent", "", "only this agent's receipts")
	fs.StringVar(&q.Skill, "skill", "", "only this skill's receipts")
	fs.StringVar(&since, "since", "", "only receipts from this long ago (a duration: 90m, 24h) or from this time on (RFC 3339)")
	fs.IntVar(&q.Limit, "limit", 100, "at most `N` receipts (at most 10000)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	return serverRun(ctx, e, &sf, fs, args, 0, func(srv store.Server) int {
		if since != "" {
			t, err := parseSince(since, time.Now())
			if err != nil {
				return fail(e, err)
			}
			q.Since = t
		}
		if q.Limit <= 0 || q.Limit > 10000 {
			return fail(e, fmt.Errorf("--limit %d: give 1 to 10000", q.Limit))
		}
		rs, err := srv.Receipts(ctx, q)
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		if asJSON {
			writeJSON(e.stdout, map[string]any{"receipts": rs})
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tAGENT\tSKILL\tACTION\tPATH\tSOURCE\tPLUGIN\tTRUST\tDIGEST\tTRANSPORT\tOUTCOME")
		for _, r := range rs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
				orDash(r.Agent), orDash(r.Skill), orDash(r.Action), orDash(r.Path), orDash(r.Source), orDash(r.Plugin),
				orDash(r.Trust), orDash(shortDigest(r.Digest)), orDash(r.Transport), orDash(r.Outcome))
		}
		tw.Flush()
		return 0
	})
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %s: give a positive duration (how long ago)", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration (90m, 24h) or a time (2026-01-02T15:04:05Z, 2026-01-02)", s)
}

// shortDigest keeps the algorithm and 12 hex digits: sha256:0123456789ab.
func shortDigest(d string) string {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok {
		alg, hex = "", d
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if alg == "" {
		return hex
	}
	return alg + ":" + hex
}
