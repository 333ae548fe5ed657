package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/render"
)

// prefixTable prints, for every size, budget and format, how much of the
// listing a change keeps as its byte prefix (what a model provider's
// prompt cache reuses): loadout's listing kept on its plan (render.Basis,
// what the service serves) after one skill is added, one is removed, and
// the usage counts are refreshed; beside it the same change with the
// listing planned afresh (no Basis: what every change cost before). Each
// figure is the least of trials changes (a random skill added or removed;
// usage redrawn). It also prints what the plan's reserve costs: skills
// described (at the floor, as measure counts) by the stable plan against
// one that fills the whole budget. It returns the cells under 90%.
func prefixTable(w *bufio.Writer, cats map[int]*cat, sizes, budgets []int, formats []string, floor, trials int, seed uint64) []string {
	var missed []string
	fmt.Fprintf(w, "\n# prefix kept: the least share of the listing's bytes a change keeps as its prefix, over %d changes each; kept = on its plan (render.Basis), fresh = planned afresh\n", trials)
	fmt.Fprintf(w, "%6s %6s %-12s %8s %8s %8s %8s %8s %8s %12s %9s\n", "skills", "budget", "format", "add", "remove", "usage", "add", "remove", "usage", "described", "replans")
	fmt.Fprintf(w, "%6s %6s %-12s %26s %26s %12s %9s\n", "", "", "", "kept", "fresh", "stable/full", "")
	for _, n := range sizes {
		c := cats[n]
		if c == nil {
			continue
		}
		for _, b := range budgets {
			for _, f := range formats {
				r := rand.New(rand.NewPCG(seed, uint64(n*31+b)))
				opt := render.Options{Format: f, Budget: b, Priority: c.priority, DescriptionFloor: floor, Stable: true, Domains: c.domains}
				base, rep := render.Prompt(c.entries, nil, opt)
				full, _ := render.Prompt(c.entries, nil, render.Options{Format: f, Budget: b, Priority: c.priority, DescriptionFloor: floor, Domains: c.domains})
				kept := [3]float64{1, 1, 1}
				fresh := [3]float64{1, 1, 1}
				replans := 0
				for t := range trials {
					for kind := range 3 {
						es, prio := c.entries, c.priority
						switch kind {
						case 0: // one skill added, at its place by name
							area := gen.Categories[r.IntN(len(gen.Categories))]
							name := fmt.Sprintf("%s-new%d", genName(r, area), t)
							e := render.Entry{Name: name, Description: description(r, name), Dir: root + "/" + name, Location: root + "/" + name + "/SKILL.md"}
							i, _ := slices.BinarySearchFunc(es, name, func(x render.Entry, s string) int { return strings.Compare(x.Name, s) })
							es = slices.Insert(slices.Clone(es), i, e)
						case 1: // one skill removed
							i := r.IntN(len(es))
							es = slices.Delete(slices.Clone(es), i, i+1)
						case 2: // usage refreshed: the counts redrawn
							prio = redrawUsage(c, r)
						}
						o := opt
						o.Priority, o.Basis = prio, rep.Basis
						text, next := render.Prompt(es, nil, o)
						if next.Replan != "" {
							replans++
						}
						kept[kind] = min(kept[kind], prefixShare(base, text))
						o.Basis = nil
						text, _ = render.Prompt(es, nil, o)
						fresh[kind] = min(fresh[kind], prefixShare(base, text))
					}
				}
				fs, ff := measure(c, base, floor), measure(c, full, floor)
				fmt.Fprintf(w, "%6d %6d %-12s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %5d/%-6d %9d\n", n, b, f,
					100*kept[0], 100*kept[1], 100*kept[2], 100*fresh[0], 100*fresh[1], 100*fresh[2], fs.described, ff.described, replans)
				for kind, what := range []string{"an added skill", "a removed skill", "a usage refresh"} {
					if kept[kind] < 0.9 {
						missed = append(missed, fmt.Sprintf("%d skills, %s, budget %d: %s keeps %.1f%% of the listing as its prefix, under 90%%", n, f, b, what, 100*kept[kind]))
					}
				}
			}
		}
	}
	return missed
}

// prefixShare is the share of a's bytes that b keeps as its prefix.
func prefixShare(a, b string) float64 {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if len(a) == 0 {
		return 1
	}
	return float64(n) / float64(len(a))
}

// redrawUsage is a priority (used skills, most used first) from Zipf
// counts over another random order of the catalog: a usage refresh that
// moves every count.
func redrawUsage(c *cat, r *rand.Rand) []string {
	order := r.Perm(len(c.entries))
	var prio []string
	for k, i := range order {
		if 300/float64(k+1) >= 1 {
			prio = append(prio, c.entries[i].Name)
		}
	}
	return prio
}
