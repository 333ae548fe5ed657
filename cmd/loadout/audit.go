package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

func init() {
	commands["audit"] = command{"list, verify or export the audit trail (every write, hash-chained)", runAudit}
}

func runAudit(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "verify":
			return runAuditVerify(ctx, e, args[1:])
		case "export":
			return runAuditExport(ctx, e, args[1:])
		case "prune":
			return runAuditPrune(ctx, e, args[1:])
		}
	}
	return runAuditList(ctx, e, args)
}

// auditLog is the store's audit trail, or an error saying it has none.
func auditLog(st store.Store) (store.AuditLog, error) {
	a, ok := st.(store.AuditLog)
	if !ok {
		return nil, fmt.Errorf("this store (%T) keeps no audit trail: use a SQLite or PostgreSQL store", st)
	}
	return a, nil
}

func auditRun(ctx context.Context, e *env, sf *storeFlags, fn func(store.AuditLog, *config.File) int) int {
	st, cfg, _, err := sf.openStoreOnly(ctx, e, readOnly)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	a, err := auditLog(st)
	if err != nil {
		return fail(e, err)
	}
	return fn(a, cfg)
}

func runAuditList(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var q store.AuditQuery
	var since string
	var asJSON bool
	fs := newFlags(e, "audit", "[verify|export|prune] [--since DURATION|RFC3339] [--actor A] [--token ID] [--action A] [--target T] [--limit N] [--json] [--db D]",
		"Lists the audit trail, newest first: one record per write (a save, a token made or\nrevoked, a sync, an import, a config reload, a sign-in…), with who did it, with which\nrole, through which transport and from where, and the digests before and after.\n\n  loadout audit verify   checks the hash chain: exit 0 when it holds, 1 naming the\n                         first record that was edited, deleted or reordered\n  loadout audit export   prints every record, oldest first, as JSON lines\n  loadout audit prune    deletes the records older than the config's audit.keepDays\n                         now (the server does it by itself, hourly)")
	sf.register(fs)
	fs.StringVar(&since, "since", "", "only records from this long ago (a duration: 90m, 720h) or from this time on (RFC 3339, or a date)")
	fs.StringVar(&q.Actor, "actor", "", "only this actor (a token's name, or a signed-in subject)")
	fs.StringVar(&q.Token, "token", "", "only the records of this token `ID`")
	fs.StringVar(&q.Action, "action", "", "only this action (skill.save, token.create, source.sync…)")
	fs.StringVar(&q.Target, "target", "", "only this target (skill:NAME, token:ID, source:ID…)")
	fs.IntVar(&q.Limit, "limit", 100, fmt.Sprintf("at most `N` records (1 to %d)", sqlstore.MaxAuditList))
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	if q.Limit < 1 || q.Limit > sqlstore.MaxAuditList {
		return fail(e, fmt.Errorf("--limit %d: give 1 to %d", q.Limit, sqlstore.MaxAuditList))
	}
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			return fail(e, err)
		}
		q.Since = t
	}
	return auditRun(ctx, e, &sf, func(a store.AuditLog, _ *config.File) int {
		rs, err := a.ListAudit(ctx, q)
		if err != nil {
			return fail(e, err)
		}
		if asJSON {
			writeJSON(e.stdout, map[string]any{"records": rs})
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tTIME\tACTOR\tROLE\tACTION\tTARGET\tBEFORE\tAFTER\tTRANSPORT\tCLIENT\tDETAIL")
		for _, r := range rs {
			// Texts were escaped when the record was kept; termText
			// escapes again whatever reached the database another way.
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
				orDash(termText(r.Actor)), orDash(termText(r.Role)), orDash(termText(r.Action)), orDash(termText(r.Target)),
				orDash(shortDigest(termText(r.Before))), orDash(shortDigest(termText(r.After))), orDash(termText(r.Transport)),
				orDash(termText(r.Client)), orDash(termText(r.Detail)))
		}
		tw.Flush()
		return 0
	})
}

func runAuditVerify(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON bool
	fs := newFlags(e, "audit verify", "[--json] [--db D]",
		"Walks the audit chain in order and checks every record's hash and link to the one\nbefore. Exit 0 when it holds (the head hash printed is worth keeping elsewhere: a\nchain rewritten to its end is told from the original only by it); exit 1 naming the\nfirst record that was edited, deleted or reordered, and why.")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	return auditRun(ctx, e, &sf, func(a store.AuditLog, _ *config.File) int {
		start := time.Now()
		v, err := a.VerifyAudit(ctx)
		if err != nil {
			return fail(e, err)
		}
		code := 0
		if !v.OK {
			code = 1
		}
		if asJSON {
			writeJSON(e.stdout, v)
			return code
		}
		took := time.Since(start).Round(time.Millisecond)
		if !v.OK {
			fmt.Fprintf(e.stderr, "loadout: the audit trail does not verify: record %d: %s (checked %d records in %s)\n", v.BadSeq, v.Reason, v.Records, took)
			return code
		}
		if v.Records == 0 {
			fmt.Fprintf(e.stdout, "the audit trail is empty\n")
			return 0
		}
		fmt.Fprintf(e.stdout, "the audit trail verifies: %d records, seq %d to %d, head %s (%s)\n", v.Records, v.First, v.Last, v.Head, took)
		return 0
	})
}

func runAuditExport(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	fs := newFlags(e, "audit export", "[--db D]", "Prints every audit record, oldest first, one JSON object a line (streamed).")
	sf.register(fs)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	return auditRun(ctx, e, &sf, func(a store.AuditLog, _ *config.File) int {
		bw := bufio.NewWriterSize(e.stdout, 64<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		err := a.ExportAudit(ctx, func(r store.AuditRecord) error { return enc.Encode(r) })
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			return fail(e, err)
		}
		return 0
	})
}

func runAuditPrune(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var days int
	fs := newFlags(e, "audit prune", "[--keep-days N] [--db D]",
		"Deletes the audit records older than the config's audit.keepDays (or --keep-days),\nand appends a record naming them and the last one's hash, so the chain still\nverifies. Without either, nothing is pruned: the trail is kept forever.")
	sf.register(fs)
	fs.IntVar(&days, "keep-days", 0, "keep `N` days of records (default: the config's audit.keepDays)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	if days < 0 {
		return fail(e, fmt.Errorf("--keep-days %d: give a positive number of days", days))
	}
	return auditRun(ctx, e, &sf, func(a store.AuditLog, cfg *config.File) int {
		if days == 0 && cfg != nil {
			days = cfg.Audit.KeepDays
		}
		if days == 0 {
			fmt.Fprintln(e.stdout, "nothing pruned: no audit.keepDays in the config and no --keep-days, so the trail is kept forever")
			return 0
		}
		p, err := a.PruneAudit(ctx, time.Now().Add(-time.Duration(days)*24*time.Hour))
		if err != nil {
			return fail(e, err)
		}
		if p.Deleted == 0 {
			fmt.Fprintf(e.stdout, "nothing pruned: no record is older than %d days\n", days)
			return 0
		}
		fmt.Fprintf(e.stdout, "pruned %d records (seq %d to %d, older than %d days); the chain goes on from hash %s\n", p.Deleted, p.First, p.Last, days, p.LastHash)
		return 0
	})
}

// pruneAuditLoop keeps the audit trail within keepDays: at start, then
// hourly, until ctx ends. Instances sharing a database may all run it:
// prunes take the chain's head lock, so the second finds nothing left.
func pruneAuditLoop(ctx context.Context, svc *service.Service, keepDays int, logger *slog.Logger) {
	admin := service.Principal{Name: "audit retention", Scopes: []string{"admin"}}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if p, err := svc.PruneAudit(ctx, admin, keepDays); err != nil {
			logger.Warn("audit: pruning failed; it is tried again in an hour", "err", err)
		} else if p.Deleted > 0 {
			logger.Info("audit: pruned old records", "deleted", p.Deleted, "first", p.First, "last", p.Last, "keep_days", keepDays)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// cliActor is who a CLI write is recorded as: the operating-system user
// running it (whoever can open the database acts as admin).
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	if n := os.Getenv("USER"); n != "" {
		return "cli:" + n
	}
	return "cli"
}

// cliAudited returns ctx carrying the audit record of a write the CLI
// makes straight to the store (transport cli), so the store writes it in
// the write's transaction (store.WithAudit); done appends it afterwards
// when the write made no transaction that took it, and only when the
// write succeeded.
func cliAudited(ctx context.Context, st any, r store.AuditRecord) (context.Context, func(error)) {
	a, ok := st.(store.Auditor)
	if !ok {
		return ctx, func(error) {}
	}
	r.Actor = service.AuditText(cliActor(), service.MaxAuditName)
	r.Role, r.Transport = service.RoleAdmin, "cli"
	r.Target = service.AuditText(r.Target, service.MaxReceiptPath)
	r.Detail = service.AuditText(r.Detail, service.MaxAuditDetail)
	slot := &store.AuditSlot{Record: r}
	return store.WithAudit(ctx, slot), func(err error) {
		if err == nil && !slot.Written {
			a.AppendAudit(ctx, slot.Record)
		}
	}
}

// auditImport records a CLI import, after it (a partial import is many
// transactions), naming the skills it wrote; an import that wrote
// nothing records nothing.
func auditImport(ctx context.Context, st any, results []store.ImportResult) {
	var wrote []string
	for _, r := range results {
		if r.Action == store.ActionCreated || r.Action == store.ActionUpdated {
			wrote = append(wrote, r.Name)
		}
	}
	if len(wrote) == 0 {
		return
	}
	_, done := cliAudited(ctx, st, store.AuditRecord{Action: "import", Target: "store", Detail: fmt.Sprintf("%d %s: %s", len(wrote), plural(len(wrote), "skill", "skills"), strings.Join(wrote, ", "))})
	done(nil)
}

// auditSyncs records a CLI sync's successful syncs in the store's trail,
// when the store exists (a sync needs none: without one, nothing is
// recorded, and it is not created for this).
func auditSyncs(ctx context.Context, e *env, dsn string, f *config.File, res []service.SourceSync) {
	var recs []store.AuditRecord
	for _, c := range res {
		if c.Error == "" {
			recs = append(recs, store.AuditRecord{Action: "source.sync", Target: "source:" + c.ID, Before: c.From, After: c.To, Detail: c.Summary})
		}
	}
	auditCLIRecords(ctx, dsn, f, recs...)
}

// auditCLIRecords appends records of CLI writes that are not store writes
// (syncs, source approvals) to the store's trail, when the store exists:
// without one, nothing is recorded, and it is not created for this.
func auditCLIRecords(ctx context.Context, dsn string, f *config.File, recs ...store.AuditRecord) {
	if dsn == "" || len(recs) == 0 {
		return
	}
	st, err := openStore(ctx, dsn, f, readOnly)
	if err != nil {
		return
	}
	defer st.Close()
	for _, r := range recs {
		_, done := cliAudited(ctx, st, r)
		done(nil)
	}
}
