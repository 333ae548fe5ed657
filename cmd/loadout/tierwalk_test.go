package main

import (
	"testing"

	"github.com/loadout/loadout/render"
)

// TestTierWalk: the tiers read in listing order are TierMap's, whether the
// report's names are in that order (pi, catalog), sorted (progressive:
// the walk falls back to the map), or hold a name twice (the map's tier is
// the last one's, so the walk is not used).
func TestTierWalk(t *testing.T) {
	tiers := []render.Tier{render.TierFull, render.TierShortened, render.TierName, render.TierGrouped, render.TierOmitted}
	for _, c := range []struct {
		name    string
		report  []string // rep.Names
		listing []string // the order prompt asks in
		unique  bool
	}{
		{"in order", []string{"c", "a", "b", "e", "d"}, []string{"c", "a", "b", "e", "d"}, true},
		{"sorted", []string{"a", "b", "c", "d", "e"}, []string{"c", "a", "b", "e", "d"}, true},
		{"twice", []string{"a", "b", "a", "c", "d"}, []string{"a", "b", "a", "c", "d"}, false},
	} {
		rep := render.Report{Names: c.report, Tiers: tiers}
		want := rep.TierMap()
		tier := tierWalk(rep, c.unique)
		for _, n := range c.listing {
			if got := tier(n); got != want[n] {
				t.Errorf("%s: %s is %q, want %q", c.name, n, got, want[n])
			}
		}
	}
}
