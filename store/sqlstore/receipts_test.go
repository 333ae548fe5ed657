package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// TestReceiptCountMigration: a store made by the previous schema (up to
// migration 0005: receipts without count), holding receipts, is migrated
// by the next Open; its receipts read back with count 1, are counted once
// each by Usage and the rollup, and new receipts keep their count.
func TestReceiptCountMigration(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		db := s.DB()
		// Back to the schema of 0005.
		for _, q := range []string{
			`ALTER TABLE receipts DROP COLUMN count`,
			`DELETE FROM schema_migrations WHERE version = 6`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		now := time.Now().UnixMicro()
		for i, agent := range []string{"a", "a", "b"} {
			if _, err := db.ExecContext(ctx, `INSERT INTO receipts (time, agent, skill, action, source, transport, outcome, code, origin)
VALUES ($1, $2, 'deploy', 'load', 'folder', 'http', 'ok', '', '')`, now+int64(i), agent); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()

		s = open(t, 0)
		var v int
		if err := s.DB().QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v < 6 {
			t.Fatalf("schema version %d (%v), want at least 6", v, err)
		}
		rs, err := s.Receipts(ctx, store.ReceiptQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 3 {
			t.Fatalf("%d receipts after the migration, want 3", len(rs))
		}
		for _, r := range rs {
			if r.Count != 1 {
				t.Errorf("receipt %d of %s: count %d after the migration, want 1", r.ID, r.Agent, r.Count)
			}
		}
		if err := s.AddReceipts(ctx, []store.Receipt{{Agent: "a", Skill: "deploy", Action: "load", Source: "folder", Transport: "http", Outcome: "ok", Count: 40}}); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"a": 42, "b": 1}
		check := func(when string) {
			t.Helper()
			us, err := s.Usage(ctx, store.UsageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, u := range us {
				got[u.Agent] += u.Count
			}
			if len(got) != len(want) || got["a"] != want["a"] || got["b"] != want["b"] {
				t.Errorf("%s: usage %v, want %v", when, got, want)
			}
		}
		check("raw")
		res, err := s.MaintainReceipts(ctx, store.Retention{})
		if err != nil {
			t.Fatal(err)
		}
		if res.RolledUp != 43 {
			t.Errorf("rolled up %d, want 43 loads (3 old rows of 1, one new row of 40)", res.RolledUp)
		}
		check("rolled up")
	})
}

// TestUsageSumsCounts: Usage sums the receipts' count, over raw receipts,
// over the daily counts they were rolled into, and over both at once;
// MaintainReceipts reports the loads it rolled up, and MaxRows prunes
// rows, not loads.
func TestUsageSumsCounts(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		base := store.Receipt{Agent: "ops", Skill: "deploy", Action: "load", Source: "folder", Transport: "http", Outcome: "ok"}
		add := func(counts ...int64) {
			t.Helper()
			rs := make([]store.Receipt, len(counts))
			for i, n := range counts {
				rs[i] = base
				rs[i].Count = n
			}
			if err := s.AddReceipts(ctx, rs); err != nil {
				t.Fatal(err)
			}
		}
		total := func() int64 {
			t.Helper()
			us, err := s.Usage(ctx, store.UsageQuery{Daily: true})
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			for _, u := range us {
				n += u.Count
			}
			return n
		}
		add(5, 0, 7) // 0 is 1
		if got := total(); got != 13 {
			t.Errorf("raw: usage %d, want 13", got)
		}
		rs, err := s.Receipts(ctx, store.ReceiptQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var counts []int64
		for _, r := range rs {
			counts = append(counts, r.Count)
		}
		if len(counts) != 3 || counts[0]+counts[1]+counts[2] != 13 || min(counts[0], counts[1], counts[2]) != 1 {
			t.Errorf("receipts' counts %v, want 5, 1 and 7", counts)
		}
		res, err := s.MaintainReceipts(ctx, store.Retention{MaxRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.RolledUp != 13 || res.Pruned != 1 {
			t.Errorf("maintenance rolled up %d loads and pruned %d rows, want 13 and 1 (MaxRows 2 counts rows)", res.RolledUp, res.Pruned)
		}
		if got := total(); got != 13 {
			t.Errorf("rolled up: usage %d, want 13", got)
		}
		add(100)
		if got := total(); got != 113 {
			t.Errorf("rolled up and raw: usage %d, want 113", got)
		}
	})
}

// TestReceiptBytesMigration: a store made before receipt_bytes (schema 6),
// whose receipts were counted into the daily counts, gets their size as
// one chunk from migration 0007, the same as store.ReceiptBytes sums, so
// that MaxBytes bounds them too.
func TestReceiptBytesMigration(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		rs := []store.Receipt{
			{Agent: "a", Skill: "deploy", Action: "load", Source: "folder", Transport: "http", Outcome: "ok"},
			{Agent: "a", Skill: "deploy", Action: "read", Path: "références/é.md", Source: "folder", Transport: "http", Outcome: "not_found"},
		}
		var want int64
		for i := range rs {
			want += store.ReceiptBytes(&rs[i])
		}
		if err := s.AddReceipts(ctx, rs); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MaintainReceipts(ctx, store.Retention{}); err != nil {
			t.Fatal(err)
		}
		db := s.DB()
		for _, q := range []string{`DROP TABLE receipt_bytes`, `DELETE FROM schema_migrations WHERE version = 7`} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		s.Close()
		s = open(t, 0)
		res, err := s.MaintainReceipts(ctx, store.Retention{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Bytes != want {
			t.Errorf("after the migration: %+v, want %d bytes", res, want)
		}
		if _, err := s.MaintainReceipts(ctx, store.Retention{MaxBytes: want - 1}); err != nil {
			t.Fatal(err)
		}
		if rs, err := s.Receipts(ctx, store.ReceiptQuery{}); err != nil || len(rs) != 1 || rs[0].Path == "" {
			t.Errorf("MaxBytes one byte under the migrated chunk left %+v (%v), want the newest receipt only", rs, err)
		}
	})
}

// TestMaintainCountsTransactions: MaintainReceipts reports every
// transaction it took: on an empty store one per step (roll up, prune by
// age, prune the daily counts, forget the sizes of chunks), and a size
// bound that ends inside a chunk takes two more (the delete and the
// chunk's new size), while one that every chunk fits in exactly takes
// none.
func TestMaintainCountsTransactions(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		res, err := s.MaintainReceipts(ctx, store.Retention{})
		if err != nil || res.Transactions != 4 {
			t.Fatalf("empty store: %+v %v, want 4 transactions", res, err)
		}
		now := time.Now().UTC()
		for c := range 2 {
			rs := make([]store.Receipt, 10)
			for i := range rs {
				rs[i] = store.Receipt{Time: now.Add(time.Duration(c*10+i-20) * time.Millisecond), Agent: "a", Skill: "s", Action: "read", Path: "p", Outcome: "ok"}
			}
			if err := s.AddReceipts(ctx, rs); err != nil {
				t.Fatal(err)
			}
			if res, err = s.MaintainReceipts(ctx, store.Retention{}); err != nil || res.Transactions != 4 {
				t.Fatalf("rolling up chunk %d: %+v %v, want 4 transactions", c, res, err)
			}
		}
		// Both chunks fit exactly: no size work, no more transactions.
		row := store.ReceiptBytes(&store.Receipt{Agent: "a", Skill: "s", Action: "read", Path: "p", Outcome: "ok"})
		if res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: 20 * row}); err != nil || res.Pruned != 0 || res.Transactions != 4 {
			t.Fatalf("a size bound both chunks fit in exactly: %+v %v, want none pruned and 4 transactions", res, err)
		}
		// Half of the newest chunk and more fit: the older chunk goes.
		res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: 15 * row})
		if err != nil || res.Pruned != 5 || res.Bytes != 15*row || res.Transactions != 6 {
			t.Fatalf("a size bound inside the older chunk: %+v %v, want 5 pruned, %d bytes, 6 transactions", res, err, 15*row)
		}
	})
}

// TestReceiptBytesForgottenWhenAllPruned: once every raw receipt is
// pruned (by age here), the sizes of their chunks are forgotten too: the
// size reported is 0 and receipt_bytes is empty, so that no bound is
// spent on receipts that are gone.
func TestReceiptBytesForgottenWhenAllPruned(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		old := time.Now().UTC().Add(-30 * 24 * time.Hour)
		rs := []store.Receipt{
			{Time: old, Agent: "a", Skill: "s", Action: "load", Outcome: "ok"},
			{Time: old.Add(time.Second), Agent: "a", Skill: "t", Action: "load", Outcome: "ok"},
		}
		if err := s.AddReceipts(ctx, rs); err != nil {
			t.Fatal(err)
		}
		res, err := s.MaintainReceipts(ctx, store.Retention{KeepDays: 7})
		if err != nil || res.Pruned != 2 || res.Remaining != 0 || res.Bytes != 0 {
			t.Fatalf("every receipt past KeepDays: %+v %v, want 2 pruned, none left, 0 bytes", res, err)
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM receipt_bytes`).Scan(&n); err != nil || n != 0 {
			t.Errorf("receipt_bytes holds %d rows (%v), want none", n, err)
		}
	})
}

// TestReceiptBytesAfterPruneByCount: rows pruned by MaxRows leave their
// chunk's recorded size too large; a size bound that the rows left fit
// in prunes nothing more (no delete is even tried) and corrects the
// chunk's size to what is left of it.
func TestReceiptBytesAfterPruneByCount(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store) {
		ctx := context.Background()
		s := open(t, 0)
		now := time.Now().UTC()
		rc := store.Receipt{Agent: "a", Skill: "s", Action: "read", Path: "p", Outcome: "ok"}
		row := store.ReceiptBytes(&rc)
		for c := range 2 {
			rs := make([]store.Receipt, 10)
			for i := range rs {
				rs[i] = rc
				rs[i].Time = now.Add(time.Duration(c*10+i-20) * time.Millisecond)
			}
			if err := s.AddReceipts(ctx, rs); err != nil {
				t.Fatal(err)
			}
			if _, err := s.MaintainReceipts(ctx, store.Retention{}); err != nil {
				t.Fatal(err)
			}
		}
		// Roll up, prune 5 by count, size: the older chunk is recorded
		// as 10 rows but holds 5, which fit: only its size changes.
		res, err := s.MaintainReceipts(ctx, store.Retention{MaxRows: 15, MaxBytes: 15 * row})
		if err != nil || res.Pruned != 5 || res.Bytes != 15*row || res.Transactions != 6 {
			t.Fatalf("%+v %v, want 5 pruned (by count), %d bytes, 6 transactions (roll up, count, the size, age, days, sizes)", res, err, 15*row)
		}
	})
}
