package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// rollupCase writes receipts spread over many skills in batches, through
// one or two stores on the same SQLite file, and checks the daily counts
// against what was written.
type rollupCase struct {
	t      *testing.T
	path   string
	want   map[string]int64 // agent/skill/action/outcome -> loads
	total  int64
	serial int
}

func newRollupCase(t *testing.T) *rollupCase {
	return &rollupCase{t: t, path: filepath.Join(t.TempDir(), "r.db"), want: map[string]int64{}}
}

func (rc *rollupCase) open() *sqlstore.Store {
	s, err := sqlite.Open(rc.path)
	if err != nil {
		rc.t.Fatal(err)
	}
	rc.t.Cleanup(func() { s.Close() })
	return s
}

// write adds batches of n receipts through s, over skills distinct
// skills; every seventh is a refusal and every eleventh names no skill
// (no source: counted under ""), so that every part of the key is used.
func (rc *rollupCase) write(s *sqlstore.Store, batches, n, skills int) {
	ctx := context.Background()
	now := time.Now().UTC()
	for range batches {
		rs := make([]store.Receipt, n)
		for i := range rs {
			k := rc.serial
			rc.serial++
			r := store.Receipt{Time: now, Agent: fmt.Sprint("agent-", k%3), Skill: fmt.Sprintf("skill-%05d", k*7919%skills),
				Action: "load", Source: "folder", Transport: "http", Outcome: "ok", Count: int64(1 + k%2)}
			if k%7 == 0 {
				r.Outcome = "refused"
			}
			if k%11 == 0 {
				r.Source = ""
			}
			rs[i] = r
			skill := r.Skill
			if r.Source == "" {
				skill = ""
			}
			rc.want[r.Agent+"/"+skill+"/"+r.Action+"/"+r.Outcome] += r.Count
			rc.total += r.Count
		}
		if err := s.AddReceipts(ctx, rs); err != nil {
			rc.t.Fatal(err)
		}
	}
}

// check compares the counts with what was written, and says how far the
// daily counts (not the raw receipts) hold them.
func (rc *rollupCase) check(s *sqlstore.Store, when string) {
	rc.t.Helper()
	ctx := context.Background()
	got, err := s.Usage(ctx, store.UsageQuery{Limit: sqlstore.MaxUsageLimit})
	if err != nil {
		rc.t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, u := range got {
		seen[u.Agent+"/"+u.Skill+"/"+u.Action+"/"+u.Outcome] += u.Count
	}
	if len(seen) != len(rc.want) {
		rc.t.Errorf("%s: %d usage keys, want %d", when, len(seen), len(rc.want))
	}
	for k, n := range rc.want {
		if seen[k] != n {
			rc.t.Errorf("%s: %s counted %d, want %d", when, k, seen[k], n)
			return
		}
	}
	// Every receipt is in the daily counts now: none is above the mark.
	var daily, above int64
	db := s.DB()
	if err := db.QueryRowContext(ctx, `SELECT coalesce(sum(count), 0) FROM receipt_daily`).Scan(&daily); err != nil {
		rc.t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM receipts WHERE id > (SELECT last_id FROM receipt_rollup)`).Scan(&above); err != nil {
		rc.t.Fatal(err)
	}
	if daily != rc.total || above != 0 {
		rc.t.Errorf("%s: the daily counts hold %d loads, want %d; %d receipts above the mark, want 0", when, daily, rc.total, above)
	}
}

func maintain(t *testing.T, s *sqlstore.Store) store.MaintainResult {
	t.Helper()
	res, err := s.MaintainReceipts(context.Background(), store.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMemoryRollupMatchesTable: receipts counted in memory as they are
// written give the same daily counts as rolling them up from the table,
// in one transaction where the table took one per RollupChunk rows.
func TestMemoryRollupMatchesTable(t *testing.T) {
	rc := newRollupCase(t)
	s := rc.open()
	rc.write(s, 24, 500, 10000) // 12,000 receipts: three table chunks
	res := maintain(t, s)
	rc.check(s, "from memory")
	// One transaction to apply the span, then one per later step (prune
	// by age, the daily counts, the sizes of chunks).
	if res.Transactions != 4 || res.RolledUp != rc.total {
		t.Errorf("from memory: %+v, want 4 transactions rolling up %d loads", res, rc.total)
	}
	var sizes, bytes int64
	if err := s.DB().QueryRow(`SELECT count(*), sum(bytes) FROM receipt_bytes`).Scan(&sizes, &bytes); err != nil || sizes != 1 || bytes != res.Bytes || bytes == 0 {
		t.Errorf("receipt_bytes: %d chunks, %d bytes (%v); want one chunk of %d", sizes, bytes, err, res.Bytes)
	}

	// The same receipts again, then the process ends before maintaining:
	// the memory is gone, and the next process rolls them up from the
	// table, in chunks, to the same counts.
	rc.write(s, 24, 500, 10000)
	s.Close()
	s = rc.open()
	res = maintain(t, s)
	rc.check(s, "from the table after a restart")
	if res.Transactions != 6 {
		t.Errorf("from the table: %+v, want 6 transactions (three chunks)", res)
	}
	if maintain(t, s).RolledUp != 0 {
		t.Error("a second maintenance rolled up again")
	}
}

// TestMemoryRollupOtherWriters: another process's receipts between this
// one's, and another process's maintenance of this one's receipts, are
// counted once each.
func TestMemoryRollupOtherWriters(t *testing.T) {
	rc := newRollupCase(t)
	a, b := rc.open(), rc.open() // two stores: two processes' views
	rc.write(a, 3, 200, 500)
	rc.write(b, 1, 1, 500) // comes between a's receipts
	rc.write(a, 3, 200, 500)
	maintain(t, a)
	rc.check(a, "another writer between")

	// b maintains while a holds a span: a's span is dropped, not added.
	rc.write(a, 5, 300, 500)
	maintain(t, b)
	rc.check(b, "maintained by the other")
	if res := maintain(t, a); res.RolledUp != 0 {
		t.Errorf("a's maintenance after b's rolled up %d loads, want 0", res.RolledUp)
	}
	rc.check(a, "both maintained")

	// a's receipts after b's maintenance are counted from memory again.
	rc.write(a, 2, 100, 500)
	rc.write(b, 1, 3, 500)
	rc.write(a, 2, 100, 500)
	maintain(t, a)
	rc.check(a, "after both")
}

// TestMemoryRollupManyKeys: past a span's bound of daily rows a new span
// starts, and each is applied in its own transaction, in order.
func TestMemoryRollupManyKeys(t *testing.T) {
	rc := newRollupCase(t)
	s := rc.open()
	// 3 agents x 30,000 skills: 20,000 keys fill a span, the rest start
	// another.
	rc.write(s, 30, 1000, 30000)
	res := maintain(t, s)
	rc.check(s, "two spans")
	if res.Transactions != 5 {
		t.Errorf("%+v, want 5 transactions (two spans)", res)
	}
}

// TestMemoryRollupDuringMaintenance: receipts written while maintenance
// runs wait for the next one and are counted once.
func TestMemoryRollupDuringMaintenance(t *testing.T) {
	rc := newRollupCase(t)
	s := rc.open()
	rc.write(s, 10, 500, 10000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			if _, err := s.MaintainReceipts(context.Background(), store.Retention{}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	rc.write(s, 40, 100, 10000)
	<-done
	maintain(t, s)
	rc.check(s, "written during maintenance")
}
