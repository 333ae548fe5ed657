// Command gentree writes a deterministic tree of Agent Skills for
// benchmarks (see package bench/gen):
//
//	go run ./bench/cmd/gentree -n 10000 -out DIR [-seed 1] [-findings 1]
//
// It prints one summary line.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/loadout/loadout/bench/gen"
)

func main() {
	n := flag.Int("n", 10000, "number of skills")
	out := flag.String("out", "", "folder to create (must be missing or empty)")
	seed := flag.Int64("seed", 1, "content seed; the same seed gives the same tree")
	findings := flag.Float64("findings", 0, "share of skills (0 to 1) with one warning each (a compatibility field that is a list, or a broken link)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gentree -n N -out DIR [-seed S] [-findings F]")
		os.Exit(2)
	}
	start := time.Now()
	st, err := gen.TreeWith(*out, *n, gen.Options{Seed: *seed, Findings: *findings})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
	fmt.Printf("gentree: %d skills, %d files, %d dirs, %.1f MB (SKILL.md avg %d B) in %s, seed %d, %s\n",
		st.Skills, st.Files, st.Dirs, float64(st.Bytes)/1e6, st.SkillBytes/int64(max(st.Skills, 1)),
		*out, *seed, time.Since(start).Round(time.Millisecond))
}
