// Command gentree writes a deterministic tree of Agent Skills for
// benchmarks (see package bench/gen):
//
//	go run ./bench/cmd/gentree -n 10000 -out DIR [-seed 1]
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
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gentree -n N -out DIR [-seed S]")
		os.Exit(2)
	}
	start := time.Now()
	st, err := gen.TreeStats(*out, *n, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
	fmt.Printf("gentree: %d skills, %d files, %d dirs, %.1f MB (SKILL.md avg %d B) in %s, seed %d, %s\n",
		st.Skills, st.Files, st.Dirs, float64(st.Bytes)/1e6, st.SkillBytes/int64(max(st.Skills, 1)),
		*out, *seed, time.Since(start).Round(time.Millisecond))
}
