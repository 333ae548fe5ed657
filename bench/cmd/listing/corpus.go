package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"unicode/utf8"

	"github.com/loadout/loadout/bench/internal/corpus"
	"github.com/loadout/loadout/render"
)

// sample returns up to k skills of pool whose names are not in taken, in a
// random order that depends only on pool, seed and k. It returns fewer than
// k only when the pool has fewer such skills.
func sample(pool []corpus.Skill, taken map[string]bool, k int, seed uint64) []corpus.Skill {
	r := rand.New(rand.NewPCG(seed, uint64(k)))
	out := make([]corpus.Skill, 0, min(k, len(pool)))
	for _, i := range r.Perm(len(pool)) {
		if len(out) == k {
			break
		}
		if !taken[pool[i].Name] {
			out = append(out, pool[i])
		}
	}
	return out
}

// pct returns the p-th percentile (0-100) of sorted values.
func pct(sorted []int, p int) int {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)*p/100, len(sorted)-1)]
}

// lengthStats describes the name and description lengths (code points) of
// a set of skills in one line.
func lengthStats(names, descs []string) string {
	nl := make([]int, len(names))
	dl := make([]int, len(descs))
	nsum, dsum := 0, 0
	for i, s := range names {
		nl[i] = utf8.RuneCountInString(s)
		nsum += nl[i]
	}
	for i, s := range descs {
		dl[i] = utf8.RuneCountInString(s)
		dsum += dl[i]
	}
	slices.Sort(nl)
	slices.Sort(dl)
	mean := func(sum, n int) float64 { return float64(sum) / float64(max(n, 1)) }
	return fmt.Sprintf("names mean %.1f characters (p10 %d, p50 %d, p90 %d); descriptions mean %.0f (p10 %d, p50 %d, p90 %d, longest %d)",
		mean(nsum, len(nl)), pct(nl, 10), pct(nl, 50), pct(nl, 90),
		mean(dsum, len(dl)), pct(dl, 10), pct(dl, 50), pct(dl, 90), pct(dl, 100))
}

func entryStats(es []render.Entry) string {
	names := make([]string, len(es))
	descs := make([]string, len(es))
	for i, e := range es {
		names[i], descs[i] = e.Name, e.Description
	}
	return lengthStats(names, descs)
}
