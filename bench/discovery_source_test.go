package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/cputime"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// checkResult fails the benchmark unless discovery found exactly n skills,
// reported no error diagnostics, and listed every skill's manifest: the
// three supporting files gen writes into each skill folder, with their
// sizes and kinds. Without that last check, a scan that skipped the
// manifest walk (the larger part of the work) would pass.
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
	files := 0
	for _, sk := range res.Skills {
		files += len(sk.Files)
		if err := checkManifest(sk); err != nil {
			b.Fatalf("skill %s: %v", sk.Dir, err)
		}
	}
	if files != 3*n {
		b.Fatalf("discovery listed %d supporting files, want %d (3 per skill)", files, 3*n)
	}
}

// checkManifest checks one skill's manifest against what gen writes:
// assets/data.json, references/guide.md and scripts/run.sh (mode 0755),
// sorted by path, none of them empty.
func checkManifest(sk *skill.Skill) error {
	want := []string{"assets/data.json", "references/guide.md", "scripts/run.sh"}
	if len(sk.Files) != len(want) {
		return fmt.Errorf("manifest lists %d files, want %d: %v", len(sk.Files), len(want), sk.Files)
	}
	for i, f := range sk.Files {
		if f.Path != want[i] {
			return fmt.Errorf("manifest[%d] is %q, want %q", i, f.Path, want[i])
		}
		if f.Size <= 0 {
			return fmt.Errorf("%s has size %d in the manifest, want the file's size", f.Path, f.Size)
		}
		if script := f.Path == "scripts/run.sh"; f.Executable != script || f.Script != script {
			return fmt.Errorf("%s: executable %v, script %v in the manifest; want %v", f.Path, f.Executable, f.Script, script)
		}
	}
	return nil
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

// BenchmarkServeDiscovery10k scans the tree as serve's first start does:
// bodies kept in a body file, a fresh cache (filled as it goes), the
// manifest of every skill walked. It reports the process's CPU per scan,
// user and kernel apart (getrusage): on a warm page cache about half of
// a scan is system calls, which wall time on a busy machine hides.
// LOADOUT_BENCH_N=50000 LOADOUT_BENCH_TREE=DIR runs it on serve50k.sh's
// tree.
func BenchmarkServeDiscovery10k(b *testing.B) {
	dir, n := benchTree(b)
	ctx := context.Background()
	b.ReportAllocs()
	var user, sys time.Duration
	for b.Loop() {
		bf, err := skill.NewBodyFile(b.TempDir(), 0)
		if err != nil {
			b.Fatal(err)
		}
		u0, s0, _ := cputime.Process()
		res := source.ScanFolder(ctx, dir, source.Options{KeepBodies: true, Bodies: bf, Cache: source.NewCache()})
		u1, s1, _ := cputime.Process()
		user, sys = user+u1-u0, sys+s1-s0
		checkResult(b, res, n)
		bf.Close()
	}
	b.ReportMetric(float64(user.Milliseconds())/float64(b.N), "user-ms/op")
	b.ReportMetric(float64(sys.Milliseconds())/float64(b.N), "sys-ms/op")
	b.ReportMetric(float64(n), "skills/op")
}
