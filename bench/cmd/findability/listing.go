package main

import (
	"fmt"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/render"
)

// endToEnd measures the listing and the search together: for each request, at each format and budget, the agent's listing
// (catalog.Loadout.Prompt: pins none, the usage given) either describes a
// right skill (whole or shortened), or names it or the domain it is
// counted in, and search_skills has it in its first three hits (found3).
// A right skill only counted in "other domains", or only in the count of
// skills left out, is a miss.
func endToEnd(l *catalog.Loadout, rs []request, right func(i int, name string) bool, found3 []bool, formats []string, budgets []int, usage map[string]int) {
	fmt.Printf("  listing and search, end to end (%d requests):\n", len(rs))
	fmt.Printf("  %-12s %6s %9s %9s %9s %9s %7s\n", "format", "budget", "described", "named", "domain", "neither", "e2e")
	for _, f := range formats {
		for _, b := range budgets {
			_, rep, _ := l.Prompt(catalog.PromptOptions{Format: f, Budget: b, Usage: usage})
			tiers := rep.TierMap()
			inGroup := map[string]bool{}
			for _, g := range rep.Groups {
				for _, name := range g.Skills {
					inGroup[name] = true
				}
			}
			var described, named, domain, neither, ok int
			for i := range rs {
				best := 3 // 0 described, 1 named, 2 in a named domain, 3 neither
				for name, t := range tiers {
					if !right(i, name) {
						continue
					}
					switch {
					case t == render.TierFull || t == render.TierShortened:
						best = 0
					case t == render.TierName:
						best = min(best, 1)
					case inGroup[name]:
						best = min(best, 2)
					}
				}
				switch best {
				case 0:
					described++
					ok++
				case 1:
					named++
				case 2:
					domain++
				default:
					neither++
				}
				if best == 1 || best == 2 {
					if found3[i] {
						ok++
					}
				}
			}
			pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(len(rs))) }
			fmt.Printf("  %-12s %6d %9s %9s %9s %9s %7s  (%d chars, %d domains named)\n", f, b, pct(described), pct(named), pct(domain), pct(neither), pct(ok), rep.Chars, len(rep.Groups))
		}
	}
}
