package bench_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/loadout/loadout/bench/floor"
	"github.com/loadout/loadout/bench/gen"
)

// The tree is made once per process, on first use, so "go test ./bench"
// without -bench costs nothing. LOADOUT_BENCH_N sets its size (default
// 10000); LOADOUT_BENCH_TREE names a tree already made by gentree with that
// many skills, which is then used as is (and checked to hold N SKILL.md).
//
// Every benchmark runs with the tree in the OS page cache (it was just
// written, or just walked): "cold" means no loadout cache, not a cold disk.
var (
	treeOnce sync.Once
	treeDir  string
	treeN    int
	treeErr  error
	treeTemp string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if treeTemp != "" {
		os.RemoveAll(treeTemp)
	}
	os.Exit(code)
}

func benchTree(b *testing.B) (dir string, n int) {
	b.Helper()
	treeOnce.Do(func() {
		treeN = 10000
		if s := os.Getenv("LOADOUT_BENCH_N"); s != "" {
			treeN, treeErr = strconv.Atoi(s)
			if treeErr != nil || treeN <= 0 {
				treeErr = fmt.Errorf("LOADOUT_BENCH_N=%q: want a positive number", s)
				return
			}
		}
		if d := os.Getenv("LOADOUT_BENCH_TREE"); d != "" {
			treeDir = d
		} else {
			treeTemp, treeErr = os.MkdirTemp("", "loadout-bench-")
			if treeErr != nil {
				return
			}
			treeDir = treeTemp + "/skills"
			if treeErr = gen.Tree(treeDir, treeN, 1); treeErr != nil {
				return
			}
			syncDisk()
		}
		// Check the tree, and bring it into the page cache for every
		// benchmark alike.
		files, _, err := floor.Walk(treeDir)
		if err != nil {
			treeErr = err
		} else if files != treeN {
			treeErr = fmt.Errorf("tree %s holds %d SKILL.md, LOADOUT_BENCH_N says %d", treeDir, files, treeN)
		}
	})
	if treeErr != nil {
		b.Fatal(treeErr)
	}
	return treeDir, treeN
}

// BenchmarkFloor10k is the baseline: a serial walk that reads every
// SKILL.md and parses nothing.
func BenchmarkFloor10k(b *testing.B) {
	dir, n := benchTree(b)
	var files int
	var size int64
	for b.Loop() {
		var err error
		files, size, err = floor.Walk(dir)
		if err != nil {
			b.Fatal(err)
		}
		if files != n {
			b.Fatalf("floor read %d SKILL.md, want %d", files, n)
		}
	}
	b.SetBytes(size)
	b.ReportMetric(float64(files), "skills/op")
}
