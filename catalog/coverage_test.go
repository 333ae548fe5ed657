package catalog

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// coverageLoadout: gig-prints matches four words of a request about a
// band's gig poster; each *-agent skill matches one, a weekday, rare and
// in its name, so that by BM25 alone the four weekday skills score more
// (7.3 against 5.2); twenty fillers share the common words.
func coverageLoadout(t *testing.T) *Loadout {
	dir := t.TempDir()
	files := map[string]string{
		"gig-prints/SKILL.md": md("gig-prints", "Lays out a poster for a band's next gig."),
	}
	for _, n := range []string{"friday", "saturday", "sunday", "monday"} {
		files[n+"-agent/SKILL.md"] = md(n+"-agent", "Runs the weekly agent on "+n+"s.")
	}
	for i := range 20 {
		n := fmt.Sprintf("filler-%02d", i)
		files[n+"/SKILL.md"] = md(n, []string{"Prints a poster of the band", "Books a gig for a band", "Frames a gig poster"}[i%3]+fmt.Sprintf(", take %d.", i))
	}
	write(t, dir, files)
	return agent(t, newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}), "a")
}

func hitNames(hs []Hit) string {
	var s []string
	for _, h := range hs {
		s = append(s, h.Name)
	}
	return strings.Join(s, " ")
}

// TestSearchCoverage: a skill that matches more of the query's words
// ranks above one that matches a single rarer word better (the score
// times the words matched), at every limit, limit 1 included (the best
// 30 by BM25 are ranked again, not the best 3); matching as many words,
// BM25 decides.
func TestSearchCoverage(t *testing.T) {
	l := coverageLoadout(t)
	q := "print a band gig poster: friday, saturday, sunday or monday"
	for _, limit := range []int{1, 3, 10} {
		if got := l.Search(q, limit); len(got) == 0 || got[0].Name != "gig-prints" {
			t.Errorf("Search(%q, %d) = %s, want gig-prints first (four words matched, against one)", q, limit, hitNames(got))
		}
	}
	if got := hitNames(l.Search(q, 5)); got != "gig-prints friday-agent monday-agent saturday-agent sunday-agent" {
		t.Errorf("Search(%q, 5) = %s, want gig-prints then the weekday skills (one rare word each) by name", q, got)
	}
	// One word each: the rarer word, in a name, wins.
	if got := l.Search("friday poster", 3); len(got) == 0 || got[0].Name != "friday-agent" {
		t.Errorf("Search(friday poster) = %s, want friday-agent first (one word each: BM25 decides)", hitNames(got))
	}
	// The factor, exactly: a skill that matches two words scores twice
	// what each gives it alone, summed; a prefix match ("post" of
	// "poster") counts for its word.
	score := func(q string) float64 {
		for _, h := range l.Search(q, 30) {
			if h.Name == "gig-prints" {
				return h.Score
			}
		}
		t.Fatalf("Search(%q): no gig-prints", q)
		return 0
	}
	for _, p := range [][2]string{{"band", "gig"}, {"band", "post"}} {
		got, want := score(p[0]+" "+p[1]), 2*(score(p[0])+score(p[1]))
		if math.Abs(got-want) > 0.01 {
			t.Errorf("Search(%q) scores gig-prints %.3f, want %.3f (twice the sum of each word's)", p[0]+" "+p[1], got, want)
		}
	}
	// A whole-name match is still first.
	if got := l.Search("filler-07", 3); len(got) == 0 || got[0].Name != "filler-07" {
		t.Errorf("Search(filler-07) = %s, want filler-07 first", hitNames(got))
	}
}

// TestSearchUsage: usage breaks near-ties (the weekday skills score the
// same: the used one first, the most used first) and does not outweigh
// matching more of the query's words.
func TestSearchUsage(t *testing.T) {
	l := coverageLoadout(t)
	q := "print a band gig poster: friday, saturday, sunday or monday"
	got := hitNames(l.SearchWith(q, 5, SearchOptions{Usage: map[string]int{"sunday-agent": 1, "monday-agent": 3, "gig-prints": 0}}))
	if want := "gig-prints monday-agent sunday-agent friday-agent saturday-agent"; got != want {
		t.Errorf("with usage: %s, want %s", got, want)
	}
	got = hitNames(l.SearchWith(q, 2, SearchOptions{Usage: map[string]int{"friday-agent": 1 << 20}}))
	if got != "gig-prints friday-agent" {
		t.Errorf("heavy usage of a skill matching one word: %s, want gig-prints still first", got)
	}
	if a, b := hitNames(l.SearchWith(q, 5, SearchOptions{})), hitNames(l.Search(q, 5)); a != b {
		t.Errorf("no usage: %s, Search: %s", a, b)
	}
	for uses, want := range map[int]float64{-2: 1, 0: 1, 1: 1.05, 3: 1.1, 31: 1.25, 1000: 1.25} {
		if got := usagePrior(uses); got != want {
			t.Errorf("usagePrior(%d) = %v, want %v", uses, got, want)
		}
	}
}
