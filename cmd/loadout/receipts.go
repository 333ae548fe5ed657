package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

func init() {
	commands["receipts"] = command{"list activation receipts (which agent loaded or read which skill)", runReceipts}
}

func runReceipts(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var q store.ReceiptQuery
	var since string
	var asJSON, usage, daily, maintain bool
	fs := newFlags(e, "receipts", "[--usage [--daily]] [--agent A] [--skill S] [--since DURATION|RFC3339] [--limit N] [--json] [--db D] | --maintain",
		"Lists activation receipts, newest first: every skill load and file read the server\nanswered, over any transport, with the skill's digest and the outcome (COUNT: identical\nreceipts recorded within one 50 ms flush are one row, with the first one's time). Raw\nreceipts are kept for the config's receipts.keepDays (default 7) and at most\nreceipts.maxRows rows (default 1,000,000) and receipts.maxBytes (default 256 MiB, as\nestimated: 128 bytes a row plus 1.25 times its text); --usage counts them per agent, skill, action and outcome, most used\nfirst, from daily counts kept for receipts.usageDays (default 400). The server keeps\nthem within bounds by itself; --maintain does it now.")
	sf.register(fs)
	fs.StringVar(&q.Agent, "agent", "", "only this agent's receipts")
	fs.StringVar(&q.Skill, "skill", "", "only this skill's receipts")
	fs.StringVar(&since, "since", "", "only receipts from this long ago (a duration: 90m, 720h) or from this time on (RFC 3339, or a date); --usage counts whole UTC days")
	fs.IntVar(&q.Limit, "limit", 0, "at most `N` rows (default 100, at most 10000; with --usage default 1000, at most 100000)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.BoolVar(&usage, "usage", false, "count receipts per agent, skill, action and outcome instead of listing them")
	fs.BoolVar(&daily, "daily", false, "with --usage: one row per UTC day")
	fs.BoolVar(&maintain, "maintain", false, "roll receipts up into the daily counts and delete what is beyond the retention, now")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	var sinceT time.Time
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			return fail(e, err)
		}
		sinceT = t
	}
	maxLimit := sqlstore.MaxReceiptLimit
	if usage {
		maxLimit = sqlstore.MaxUsageLimit
	}
	limitSet := false
	fs.Visit(func(f *flag.Flag) { limitSet = limitSet || f.Name == "limit" })
	if q.Limit < 0 || q.Limit > maxLimit || (limitSet && q.Limit == 0) {
		return fail(e, fmt.Errorf("--limit %d: give 1 to %d", q.Limit, maxLimit))
	}
	if daily && !usage {
		return fail(e, fmt.Errorf("--daily goes with --usage"))
	}
	mode := readOnly
	if maintain {
		mode = mayCreate
	}
	st, cfg, _, err := sf.openStoreOnly(ctx, e, mode)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	srv, err := serverStore(st)
	if err != nil {
		return fail(e, err)
	}
	switch {
	case maintain:
		ret := retentionOf(cfg)
		res, err := srv.MaintainReceipts(ctx, ret)
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		ret = ret.WithDefaults()
		if asJSON {
			writeJSON(e.stdout, map[string]any{"maintained": res, "retention": ret})
			return 0
		}
		fmt.Fprintf(e.stdout, "counted %d new loads and reads into the daily counts; deleted %d raw receipt rows (keeping %d days, at most %d rows and %d bytes) and %d daily counts (keeping %d days); at most %d raw receipts left, about %d bytes\n",
			res.RolledUp, res.Pruned, ret.KeepDays, ret.MaxRows, ret.MaxBytes, res.PrunedDays, ret.UsageDays, res.Remaining, res.Bytes)
		return 0
	case usage:
		us, err := srv.Usage(ctx, store.UsageQuery{Agent: q.Agent, Skill: q.Skill, Since: sinceT, Daily: daily, Limit: q.Limit})
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		if asJSON {
			writeJSON(e.stdout, map[string]any{"usage": us})
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		if daily {
			fmt.Fprint(tw, "DAY\t")
		}
		fmt.Fprintln(tw, "AGENT\tSKILL\tACTION\tOUTCOME\tCOUNT")
		for _, u := range us {
			if daily {
				fmt.Fprintf(tw, "%s\t", u.Day.Format(time.DateOnly))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", orDash(u.Agent), orDash(u.Skill), orDash(u.Action), orDash(u.Outcome), u.Count)
		}
		tw.Flush()
		return 0
	}
	q.Since = sinceT
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
	fmt.Fprintln(tw, "TIME\tAGENT\tSKILL\tACTION\tCOUNT\tPATH\tSOURCE\tPLUGIN\tTRUST\tDIGEST\tTRANSPORT\tOUTCOME")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
			orDash(r.Agent), orDash(r.Skill), orDash(r.Action), max(r.Count, 1), orDash(r.Path), orDash(r.Source), orDash(r.Plugin),
			orDash(r.Trust), orDash(shortDigest(r.Digest)), orDash(r.Transport), orDash(r.Outcome))
	}
	tw.Flush()
	return 0
}

// retentionOf is the config's receipts retention (zero fields: the
// store's defaults).
func retentionOf(f *config.File) store.Retention {
	if f == nil {
		return store.Retention{}
	}
	return store.Retention{KeepDays: f.Receipts.KeepDays, MaxRows: f.Receipts.MaxRows, MaxBytes: f.Receipts.MaxBytes, UsageDays: f.Receipts.UsageDays}
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
