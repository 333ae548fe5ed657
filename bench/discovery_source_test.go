package bench_test

import (
	"context"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// checkResult fails the benchmark unless discovery found exactly n skills
// and reported no error diagnostics.
func checkResult(b *testing.B, res *source.Result, n int) {
	b.Helper()
	var errs []skill.Diagnostic
	for _, d := range res.Diagnostics {
		if d.Severity == skill.Error {
			errs = append(errs, d)
		}
	}
	if len(res.Skills) != n || len(errs) > 0 {
		for i, d := range errs {
			if i == 5 {
				b.Logf("... and %d more errors", len(errs)-5)
				break
			}
			b.Log(d.String())
		}
		b.Fatalf("discovery found %d skills with %d error diagnostics (of %d); want %d skills, no errors",
			len(res.Skills), len(errs), len(res.Diagnostics), n)
	}
}

// BenchmarkColdDiscovery10k scans the tree with no cache: every folder is
// read, every SKILL.md read and parsed, every manifest built.
func BenchmarkColdDiscovery10k(b *testing.B) {
	dir, n := benchTree(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res := source.ScanFolder(ctx, dir, source.Options{})
		checkResult(b, res, n)
	}
	b.ReportMetric(float64(n), "skills/op")
}

// BenchmarkRescan10k scans an unchanged tree again with the cache filled by
// a first scan (done before timing starts).
func BenchmarkRescan10k(b *testing.B) {
	dir, n := benchTree(b)
	ctx := context.Background()
	cache := source.NewCache()
	checkResult(b, source.ScanFolder(ctx, dir, source.Options{Cache: cache}), n)
	b.ReportAllocs()
	for b.Loop() {
		res := source.ScanFolder(ctx, dir, source.Options{Cache: cache})
		checkResult(b, res, n)
	}
	b.ReportMetric(float64(n), "skills/op")
}
