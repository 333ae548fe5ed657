package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

func appendN(t *testing.T, s *sqlstore.Store, n int, actor string) {
	t.Helper()
	for i := range n {
		if _, err := s.AppendAudit(context.Background(), store.AuditRecord{Actor: actor, Role: "admin", Action: "skill.save",
			Target: fmt.Sprintf("skill:s%d", i), Transport: "http"}); err != nil {
			t.Fatal(err)
		}
	}
}

func mustVerify(t *testing.T, s *sqlstore.Store) store.AuditVerify {
	t.Helper()
	v, err := s.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantBad(t *testing.T, s *sqlstore.Store, seq int64, reason string) {
	t.Helper()
	v := mustVerify(t, s)
	if v.OK || v.BadSeq != seq || !strings.Contains(v.Reason, reason) {
		t.Fatalf("verify = %+v, want seq %d bad with %q", v, seq, reason)
	}
}

func exec(t *testing.T, s *sqlstore.Store, q string, args ...any) {
	t.Helper()
	if _, err := s.DB().Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestAuditChainConcurrent: appends from 8 goroutines on each of two
// stores over one database form one chain, 1..N, that verifies.
func TestAuditChainConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		a, b := open(t, 0), open(t, 0)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 16 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 20 {
					if _, err := s.AppendAudit(context.Background(), store.AuditRecord{Actor: fmt.Sprint("g", i), Action: "x", Target: fmt.Sprint(j), Transport: "http"}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		v := mustVerify(t, a)
		if !v.OK || v.Records != 320 || v.First != 1 || v.Last != 320 {
			t.Fatalf("verify = %+v", v)
		}
	})
}

// TestAuditTamper: an edited, deleted, reordered, re-hashed or truncated
// chain fails verify naming the first bad record; an intact one passes.
func TestAuditTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, s *sqlstore.Store)
		seq    int64
		reason string
	}{
		{"intact", func(*testing.T, *sqlstore.Store) {}, 0, ""},
		{"edited", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `UPDATE audit_log SET actor = 'mallory' WHERE seq = 4`)
		}, 4, "does not match its fields"},
		{"edited twice, the first named", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `UPDATE audit_log SET detail = 'x' WHERE seq IN (3, 7)`)
		}, 3, "does not match its fields"},
		{"deleted", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `DELETE FROM audit_log WHERE seq = 5`)
		}, 6, "records 5 to 5 are missing"},
		{"first deleted", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `DELETE FROM audit_log WHERE seq <= 2`)
		}, 3, "records 1 to 2 are missing"},
		{"last deleted", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `DELETE FROM audit_log WHERE seq = 8`)
		}, 8, "records 8 to 8 are missing"},
		{"last deleted and head moved back", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `DELETE FROM audit_log WHERE seq = 8`)
			exec(t, s, `UPDATE audit_head SET seq = 7`)
		}, 7, "the head names seq 7"},
		{"reordered", func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, `UPDATE audit_log SET seq = -1 WHERE seq = 3`)
			exec(t, s, `UPDATE audit_log SET seq = 3 WHERE seq = 4`)
			exec(t, s, `UPDATE audit_log SET seq = 4 WHERE seq = -1`)
		}, 3, "prev_hash"},
		{"edited with its hash recomputed", func(t *testing.T, s *sqlstore.Store) {
			rs, _ := s.ListAudit(context.Background(), store.AuditQuery{Target: "skill:s4"})
			r := rs[0]
			r.Actor = "mallory"
			exec(t, s, `UPDATE audit_log SET actor = $1, hash = $2 WHERE seq = $3`, r.Actor, store.AuditHash(r), r.Seq)
		}, 6, "seq 5 was edited"},
	}
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := open(t, 0)
				exec(t, s, `DELETE FROM audit_log`)
				exec(t, s, `UPDATE audit_head SET seq = 0, hash = ''`)
				appendN(t, s, 8, "alice")
				c.tamper(t, s)
				if c.seq == 0 {
					if v := mustVerify(t, s); !v.OK || v.Records != 8 {
						t.Fatalf("verify = %+v", v)
					}
					return
				}
				wantBad(t, s, c.seq, c.reason)
			})
		}
	})
}

// TestAuditPrune: a prune deletes the old records and appends one naming
// them, so the chain still verifies; a deletion after it is still found,
// and so is the prune record's own deletion.
func TestAuditPrune(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		old := time.Now().Add(-48 * time.Hour)
		var rs []store.AuditRecord
		for i := range 5 {
			rs = append(rs, store.AuditRecord{Time: old.Add(time.Duration(i) * time.Second), Actor: "a", Action: "skill.save", Target: "skill:x", Transport: "cli"})
		}
		if err := s.AddAuditChain(ctx, rs); err != nil {
			t.Fatal(err)
		}
		appendN(t, s, 3, "bob")
		p, err := s.PruneAudit(ctx, time.Now().Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if p.Deleted != 5 || p.First != 1 || p.Last != 5 || p.LastHash != rs[4].Hash {
			t.Fatalf("prune = %+v", p)
		}
		if v := mustVerify(t, s); !v.OK || v.First != 6 || v.Last != 9 {
			t.Fatalf("verify after prune = %+v", v)
		}
		// Nothing more to prune: nothing appended.
		if p, err := s.PruneAudit(ctx, time.Now().Add(-24*time.Hour)); err != nil || p.Deleted != 0 {
			t.Fatalf("second prune = %+v, %v", p, err)
		}
		if v := mustVerify(t, s); v.Last != 9 {
			t.Fatalf("a prune of nothing appended: %+v", v)
		}
		exec(t, s, `DELETE FROM audit_log WHERE seq = 7`)
		wantBad(t, s, 8, "records 7 to 7 are missing")
		exec(t, s, `DELETE FROM audit_log WHERE action = 'audit.prune'`)
		wantBad(t, s, 6, "no audit.prune record accounts for them")
	})
}

// TestAuditSlot: a write carrying a record (store.WithAudit) commits it in
// its transaction with the skill's digests; a refused write records
// nothing.
func TestAuditSlot(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		sl := &store.AuditSlot{Record: store.AuditRecord{Actor: "ann", Action: "skill.save", Target: "skill:alpha", Transport: "http"}}
		rec, err := s.Put(store.WithAudit(ctx, sl), bundle("alpha"), store.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !sl.Written || sl.Record.Seq != 1 || sl.Record.After != rec.Digest || sl.Record.Before != "" {
			t.Fatalf("slot = %+v, record digest %s", sl, rec.Digest)
		}
		sl2 := &store.AuditSlot{Record: store.AuditRecord{Actor: "ann", Action: "skill.save", Target: "skill:alpha", Transport: "http"}}
		if _, err := s.Put(store.WithAudit(ctx, sl2), bundle("alpha"), store.PutOptions{}); store.ErrorCode(err) != store.Conflict {
			t.Fatalf("a create over an existing skill: %v", err)
		}
		if sl2.Written {
			t.Fatal("a refused write wrote its record")
		}
		sl3 := &store.AuditSlot{Record: store.AuditRecord{Actor: "ann", Action: "skill.delete", Target: "skill:alpha", Transport: "http"}}
		if err := s.Delete(store.WithAudit(ctx, sl3), "alpha", -1); err != nil {
			t.Fatal(err)
		}
		if !sl3.Written || sl3.Record.Before != rec.Digest || sl3.Record.After != "" || sl3.Record.Seq != 2 {
			t.Fatalf("delete slot = %+v", sl3)
		}
		if v := mustVerify(t, s); !v.OK || v.Records != 2 {
			t.Fatalf("verify = %+v", v)
		}
	})
}

// TestAuditList: the filters and paging, newest first.
func TestAuditList(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		appendN(t, s, 5, "alice")
		appendN(t, s, 3, "bob")
		rs, err := s.ListAudit(ctx, store.AuditQuery{Actor: "alice", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Seq != 5 || rs[1].Seq != 4 {
			t.Fatalf("page 1 = %+v", rs)
		}
		rs, _ = s.ListAudit(ctx, store.AuditQuery{Actor: "alice", Limit: 10, Before: 4})
		if len(rs) != 3 || rs[0].Seq != 3 {
			t.Fatalf("page 2 = %+v", rs)
		}
		rs, _ = s.ListAudit(ctx, store.AuditQuery{Target: "skill:s1"})
		if len(rs) != 2 || rs[0].Actor != "bob" {
			t.Fatalf("by target = %+v", rs)
		}
		rs, _ = s.ListAudit(ctx, store.AuditQuery{Action: "nope"})
		if len(rs) != 0 {
			t.Fatalf("by unknown action = %+v", rs)
		}
		rs, _ = s.ListAudit(ctx, store.AuditQuery{Since: time.Now().Add(time.Hour)})
		if len(rs) != 0 {
			t.Fatalf("since the future = %+v", rs)
		}
		var n int
		if err := s.ExportAudit(ctx, func(r store.AuditRecord) error { n++; return nil }); err != nil || n != 8 {
			t.Fatalf("export: %d, %v", n, err)
		}
	})
}

// TestAuditMigration: a database at the schema before the audit trail
// (0007), with a skill and a token, takes migration 0008 at the next Open:
// the skill and token are kept, and the first write is record 1 of a
// chain that verifies.
func TestAuditMigration(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		if _, err := s.Put(ctx, bundle("kept"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateToken(ctx, "ops", []string{"admin"}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`DROP TABLE audit_log`, `DROP TABLE audit_head`, `DELETE FROM schema_migrations WHERE version = 8`} {
			exec(t, s, q)
		}
		s.Close()

		s = open(t, 0)
		if rec, err := s.Get(ctx, "kept"); err != nil || rec.Version != 1 {
			t.Fatalf("the skill after the migration: %v %v", rec, err)
		}
		if toks, err := s.Tokens(ctx); err != nil || len(toks) != 1 {
			t.Fatalf("the tokens after the migration: %v %v", toks, err)
		}
		if v := mustVerify(t, s); !v.OK || v.Records != 0 {
			t.Fatalf("an empty trail: %+v", v)
		}
		sl := &store.AuditSlot{Record: store.AuditRecord{Actor: "a", Action: "skill.save", Target: "skill:kept", Transport: "cli"}}
		if _, err := s.Put(store.WithAudit(ctx, sl), bundle("kept", "notes.md"), store.PutOptions{IfVersion: 1}); err != nil {
			t.Fatal(err)
		}
		if v := mustVerify(t, s); !v.OK || v.Records != 1 || sl.Record.Seq != 1 || sl.Record.Before == "" {
			t.Fatalf("after the first write: %+v %+v", v, sl.Record)
		}
	})
}
