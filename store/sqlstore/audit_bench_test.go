package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/pgtest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// auditRows is the trail's size in BenchmarkAuditMillion; LOADOUT_AUDIT_ROWS
// overrides it (for a quick run).
func auditRows() int {
	if n, err := strconv.Atoi(os.Getenv("LOADOUT_AUDIT_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// fillAudit appends n records, chained, in batches: 50 actors, 20
// actions, 5,000 targets, a second apart, ending now.
func fillAudit(b *testing.B, s *sqlstore.Store, n int) {
	ctx := context.Background()
	start := time.Now().Add(-time.Duration(n) * time.Second)
	const batch = 20_000
	rs := make([]store.AuditRecord, 0, batch)
	t0 := time.Now()
	for i := 0; i < n; i += batch {
		rs = rs[:0]
		for j := i; j < min(n, i+batch); j++ {
			rs = append(rs, store.AuditRecord{Time: start.Add(time.Duration(j) * time.Second), ActorToken: fmt.Sprintf("tok%02d", j%50),
				Actor: fmt.Sprintf("actor-%02d", j%50), Role: "admin", Action: fmt.Sprintf("action.%02d", j%20),
				Target: fmt.Sprintf("skill:s%04d", j%5000), Before: "b3f1c0ffee", After: "a7e2c0ffee", Client: "10.0.0.1",
				Transport: "http", Detail: "a benchmark record"})
		}
		if err := s.AddAuditChain(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: inserted %d records in %s", s.Dialect().Name, n, time.Since(t0).Round(time.Millisecond))
}

// BenchmarkAuditMillion times, on a trail of a million records (SQLite,
// and PostgreSQL when LOADOUT_TEST_POSTGRES is set), the first page of
// the list (no filter; by actor; by action and since; by target) and a
// verification of the whole chain, with the heap the verification held
// at most (sampled). Run it with
//
//	go test ./store/sqlstore -run '^$' -bench AuditMillion -benchtime 3x -v
func BenchmarkAuditMillion(b *testing.B) {
	n := auditRows()
	b.Run("sqlite", func(b *testing.B) {
		// LOADOUT_AUDIT_BENCH_DB keeps the filled file for the next run.
		path := os.Getenv("LOADOUT_AUDIT_BENCH_DB")
		if path == "" {
			path = filepath.Join(b.TempDir(), "audit.db")
		}
		s, err := sqlite.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchAudit(b, s, n)
	})
	b.Run("postgres", func(b *testing.B) {
		raw := os.Getenv("LOADOUT_TEST_POSTGRES")
		if raw == "" {
			testutil.Unavailable(b, "LOADOUT_TEST_POSTGRES is not set")
		}
		s, err := postgres.Open(context.Background(), pgtest.Schema(b, raw, "loadout_auditbench_"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchAudit(b, s, n)
	})
}

func benchAudit(b *testing.B, s *sqlstore.Store, n int) {
	ctx := context.Background()
	if v, err := s.VerifyAudit(ctx); err != nil || !v.OK || v.Records != int64(n) {
		fillAudit(b, s, n-int(v.Records))
	}
	since := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		name string
		q    store.AuditQuery
	}{
		{"list", store.AuditQuery{Limit: 100}},
		{"list-actor", store.AuditQuery{Actor: "actor-07", Limit: 100}},
		{"list-action-since", store.AuditQuery{Action: "action.03", Since: since, Limit: 100}},
		{"list-target", store.AuditQuery{Target: "skill:s0042", Limit: 100}},
		{"list-actor-page-5000", store.AuditQuery{Actor: "actor-07", Before: int64(n / 2), Limit: 100}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				rs, err := s.ListAudit(ctx, c.q)
				if err != nil || len(rs) == 0 {
					b.Fatal(len(rs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
		})
	}
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			stop := make(chan struct{})
			peak := make(chan uint64)
			go func() {
				var m runtime.MemStats
				var hi uint64
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-stop:
						peak <- hi
						return
					case <-t.C:
						runtime.ReadMemStats(&m)
						hi = max(hi, m.HeapInuse)
					}
				}
			}()
			cpu := testutil.CPUTime()
			v, err := s.VerifyAudit(ctx)
			// This process's CPU (a shared machine's wall time varies with
			// its load; PostgreSQL's own CPU is not counted).
			b.ReportMetric(float64((testutil.CPUTime() - cpu).Milliseconds()), "cpu-ms/verify")
			close(stop)
			hi := <-peak
			if err != nil || !v.OK || v.Records != int64(n) {
				b.Fatal(v, err)
			}
			b.ReportMetric(float64(hi-min(hi, base.HeapInuse))/(1<<20), "MB-heap-growth")
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/verify")
	})
}
