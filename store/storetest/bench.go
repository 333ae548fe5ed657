package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store"
)

// BenchAddReceipts measures what writing one receipt costs, in batches of
// the size the service flushes (250), on a table that already holds
// receipts. open must return a new, empty store. The figures that
// matter are ns/receipt (wall time) and cpu-ns/receipt (this process's
// CPU time: all of SQLite's work, the client's share of PostgreSQL's),
// which a busy machine disturbs less.
func BenchAddReceipts(b *testing.B, open func(tb testing.TB) store.Store) {
	for _, c := range []struct {
		name  string
		batch int
		// spread: one agent's loads with one token spread over many
		// skills (a spread load's flush: no two receipts merge, and
		// all share every field but time, skill and digest).
		spread bool
	}{{"batch-1", 1, false}, {"batch-250", 250, false}, {"spread-250", 250, true}, {"spread-1000", 1000, true}} {
		b.Run(c.name, func(b *testing.B) {
			s, ok := open(b).(store.Server)
			if !ok {
				b.Fatal("the store does not implement store.Server")
			}
			rs := benchReceipts(c.batch)
			if c.spread {
				for i := range rs {
					rs[i].Agent, rs[i].Action, rs[i].Path = "coder", "load", ""
					rs[i].Digest = fmt.Sprintf("sha256:%064x", i)
				}
			}
			// A table that is not empty, as a server's is.
			for range 20 {
				if err := s.AddReceipts(ctx, benchReceipts(1000)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			cpu := testutil.CPUTime()
			for b.Loop() {
				if err := s.AddReceipts(ctx, rs); err != nil {
					b.Fatal(err)
				}
				n += len(rs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/receipt")
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(n), "cpu-ns/receipt")
		})
	}
}

// benchReceipts are n receipts as a busy server records them: a few
// agents, many skills, mostly loads.
func benchReceipts(n int) []store.Receipt {
	rs := make([]store.Receipt, n)
	now := time.Now().UTC()
	for i := range rs {
		rs[i] = store.Receipt{Time: now, Agent: []string{"coder", "reviewer", "ops"}[i%3], Skill: fmt.Sprintf("skill-%04d", i*7919%5000),
			Action: "load", Source: "store", Digest: "sha256:6d1f0c6c1e2a9a5d3c4b7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3",
			Transport: "http", Outcome: "ok", Token: "a1b2c3d4e5f6"}
		if i%5 == 0 {
			rs[i].Action, rs[i].Path = "read", "references/guide.md"
		}
	}
	return rs
}

// BenchMaintainReceipts measures what maintenance (rolling receipts up
// into daily counts, then pruning) costs per receipt (cpu-ns/receipt;
// write-cpu-ns/receipt is what writing them cost), on receipts spread
// over 10,000 skills as a server's are under loads spread over its
// catalog: few rows of a chunk share a daily count. open must return a
// new, empty store.
func BenchMaintainReceipts(b *testing.B, open func(tb testing.TB) store.Store) {
	const rows = 100_000
	s, ok := open(b).(store.Server)
	if !ok {
		b.Fatal("the store does not implement store.Server")
	}
	now := time.Now().UTC()
	batch := make([]store.Receipt, 1000)
	n := 0
	b.ReportAllocs()
	var cpu, wcpu time.Duration
	for b.Loop() {
		b.StopTimer()
		w := testutil.CPUTime()
		for k := 0; k < rows; k += len(batch) {
			for i := range batch {
				j := n + k + i
				batch[i] = store.Receipt{Time: now, Agent: "bench", Skill: fmt.Sprintf("skill-%05d", j*7919%10000),
					Action: "load", Source: "folder", Digest: "sha256:6d1f0c6c1e2a9a5d3c4b7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3",
					Transport: "http", Outcome: "ok", Token: "a1b2c3d4e5f6"}
			}
			if err := s.AddReceipts(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		n += rows
		wcpu += testutil.CPUTime() - w
		b.StartTimer()
		c := testutil.CPUTime()
		if _, err := s.MaintainReceipts(ctx, store.Retention{}); err != nil {
			b.Fatal(err)
		}
		cpu += testutil.CPUTime() - c
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/receipt")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/receipt")
	b.ReportMetric(float64(wcpu.Nanoseconds())/float64(n), "write-cpu-ns/receipt")
}
