package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// TestAuditCommands: the CLI's own writes are audited (transport cli);
// audit lists them, filters them, exports them as JSON lines; verify
// exits 0 on the intact chain and 1 naming the first edited record.
func TestAuditCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "loadout.db")
	r := runCLI(t, "token", "create", "--db", db, "--scope", "admin", "--name", "ops\x1b[31m\u202e")
	if r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	r = runCLI(t, "token", "create", "--db", db, "--scope", "admin", "--name", "second")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	r = runCLI(t, "token", "list", "--db", db, "--json")
	var listed struct{ Tokens []store.Token }
	json.Unmarshal([]byte(r.stdout), &listed)
	if len(listed.Tokens) != 2 {
		t.Fatalf("tokens: %s", r.stdout)
	}
	if r = runCLI(t, "token", "revoke", "--db", db, listed.Tokens[0].ID); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// A failed revocation records nothing.
	if r = runCLI(t, "token", "revoke", "--db", db, "nope"); r.code == 0 {
		t.Fatal("revoking an unknown token succeeded")
	}

	r = runCLI(t, "audit", "--db", db)
	if r.code != 0 {
		t.Fatalf("audit: %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SEQ") || !strings.Contains(lines[1], "token.revoke") || !strings.Contains(lines[1], "cli") {
		t.Fatalf("audit:\n%s", r.stdout)
	}
	// The control and bidi characters of the name are shown escaped.
	if strings.ContainsAny(r.stdout, "\x1b\u202e") || !strings.Contains(r.stdout, `ops\x1b[31m\u202e`) {
		t.Fatalf("the token's name is not shown escaped:\n%q", r.stdout)
	}
	r = runCLI(t, "audit", "--db", db, "--action", "token.create", "--json")
	var got struct{ Records []store.AuditRecord }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Records) != 2 || got.Records[0].Seq != 2 {
		t.Fatalf("audit --action --json: %v %s", err, r.stdout)
	}
	if rec := got.Records[1]; rec.Transport != "cli" || rec.Role != "admin" || !strings.HasPrefix(rec.Actor, "cli") || rec.Hash != store.AuditHash(rec) {
		t.Fatalf("record: %+v", rec)
	}
	if r = runCLI(t, "audit", "--db", db, "--limit", "0"); r.code != 2 && r.code != 1 || !strings.Contains(r.stderr, "--limit 0") {
		t.Fatalf("--limit 0: %d %s", r.code, r.stderr)
	}

	r = runCLI(t, "audit", "export", "--db", db)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	ex := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(ex) != 3 {
		t.Fatalf("export: %q", r.stdout)
	}
	var first store.AuditRecord
	if err := json.Unmarshal([]byte(ex[0]), &first); err != nil || first.Seq != 1 {
		t.Fatalf("export line 1: %v %s", err, ex[0])
	}

	if r = runCLI(t, "audit", "verify", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "3 records") {
		t.Fatalf("verify: %d %s %s", r.code, r.stdout, r.stderr)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE audit_log SET target = 'token:other' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r = runCLI(t, "audit", "verify", "--db", db)
	if r.code != 1 || !strings.Contains(r.stderr, "record 2:") || !strings.Contains(r.stderr, "does not match its fields") {
		t.Fatalf("verify of an edited record: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "audit", "verify", "--db", db, "--json")
	var v store.AuditVerify
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 1 || v.OK || v.BadSeq != 2 {
		t.Fatalf("verify --json: %d %s", r.code, r.stdout)
	}
}

// TestAuditPrune: `audit prune` deletes what is older than --keep-days
// (or the config's audit.keepDays), leaves a record naming it, and the
// chain still verifies; without either it prunes nothing.
func TestAuditPrune(t *testing.T) {
	db := filepath.Join(t.TempDir(), "loadout.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	var rs []store.AuditRecord
	for i := range 5 {
		rs = append(rs, store.AuditRecord{Time: old.Add(time.Duration(i) * time.Minute), Actor: "a", Action: "skill.save", Target: "skill:x", Transport: "http"})
	}
	rs = append(rs, store.AuditRecord{Time: time.Now(), Actor: "b", Action: "skill.save", Target: "skill:y", Transport: "http"})
	if err := st.AddAuditChain(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if r := runCLI(t, "audit", "prune", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "nothing pruned: no audit.keepDays") {
		t.Fatalf("prune without a retention: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "audit", "prune", "--db", db, "--keep-days", "-1"); r.code == 0 {
		t.Fatalf("--keep-days -1 was taken")
	}
	r := runCLI(t, "audit", "prune", "--db", db, "--keep-days", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "pruned 5 records (seq 1 to 5") {
		t.Fatalf("prune: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "audit", "verify", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "2 records, seq 6 to 7") {
		t.Fatalf("verify after the prune: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "audit", "--db", db, "--action", "audit.prune", "--json")
	var got struct{ Records []store.AuditRecord }
	if json.Unmarshal([]byte(r.stdout), &got) != nil || len(got.Records) != 1 || got.Records[0].Target != "audit:1-5" || got.Records[0].Before != rs[4].Hash {
		t.Fatalf("the prune's record: %s", r.stdout)
	}
}

// TestAuditCLISync: `loadout sync` records each source it synced in the
// store's trail (pins before and after); --check records nothing.
func TestAuditCLISync(t *testing.T) {
	g, cfg, _ := lockFixture(t)
	db := filepath.Join(filepath.Dir(cfg), "loadout.db")
	if r := runCLI(t, "token", "create", "--db", db, "--scope", "admin"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	env := func(string) string { return "" }
	if r := runCLIEnv(t, env, "sync", "--config", cfg); r.code != 0 {
		t.Fatalf("sync: %d %s %s", r.code, r.stdout, r.stderr)
	}
	pushLint(t, g, cfg)
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--check"); r.code != 0 {
		t.Fatalf("check: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r := runCLI(t, "audit", "--db", db, "--action", "source.sync", "--json")
	var got struct{ Records []store.AuditRecord }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Records) != 2 {
		t.Fatalf("the sync's records: %v %s %s", err, r.stdout, r.stderr)
	}
	if rec := got.Records[0]; rec.Target != "source:team" || rec.After == "" || rec.After == rec.Before || rec.Transport != "cli" || !strings.Contains(rec.Detail, "lint") {
		t.Fatalf("the record: %+v", rec)
	}
}
