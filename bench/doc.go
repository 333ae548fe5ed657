// Package bench holds loadout's discovery benchmark kit. The package itself
// is empty; the parts are:
//
//   - bench/gen: gen.Tree writes a deterministic tree of N skills
//     (bench/cmd/gentree is its command).
//   - bench/floor: floor.Walk, the serial "read every SKILL.md, parse
//     nothing" baseline that cold discovery is compared to, and
//     floor.WalkParallel, its parallel form for a cold page cache
//     (bench/cmd/coldfloor is its command).
//   - discovery_test.go: BenchmarkFloor10k, BenchmarkColdDiscovery10k,
//     BenchmarkRescan10k (tree size from LOADOUT_BENCH_N, default 10000;
//     LOADOUT_BENCH_TREE reuses a tree made by gentree).
//   - bench/cmd/peakmem: peak RSS of one cold discovery (or the floor) in a
//     fresh process.
//   - bench/pi: Pi's loader (pinned npm package) run on the same tree.
//   - discovery.sh: runs all of the above and prints a summary table.
package bench
