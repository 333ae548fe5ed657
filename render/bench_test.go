package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// bench100 is 100 skills with descriptions of realistic length (about 150
// to 400 characters), more than the default budget holds whole.
func bench100() []Entry {
	es := make([]Entry, 100)
	for i := range es {
		name := fmt.Sprintf("skill-%03d", i)
		es[i] = Entry{
			Name: name,
			Description: "Use when the user asks to work with " + name + " data: import, clean, convert & export it. " +
				strings.Repeat("Handles edge cases like <empty> rows and 'quoted' fields. ", 2+i%6),
			Location: "/home/user/.agents/skills/" + name + "/SKILL.md",
			Dir:      "/home/user/.agents/skills/" + name,
		}
	}
	return es
}

func BenchmarkPrompt100(b *testing.B) {
	es := bench100()
	b.ReportAllocs()
	for b.Loop() {
		Prompt(es, nil, Options{Format: FormatPi})
	}
}

func BenchmarkPrompt100Unlimited(b *testing.B) {
	es := bench100()
	b.ReportAllocs()
	for b.Loop() {
		Prompt(es, nil, Options{Format: FormatPi, Budget: -1})
	}
}

func BenchmarkPrompt10000(b *testing.B) {
	var es []Entry
	for range 100 {
		es = append(es, bench100()...)
	}
	b.ReportAllocs()
	for b.Loop() {
		Prompt(es, nil, Options{Format: FormatPi, Budget: 80000})
	}
}

// BenchmarkTiers10000 renders 10,000 realistic skills (genCatalog) in each
// format at the default budget and at 80,000 characters, sorted by name as
// the catalog passes them, and once unsorted (the priority order then
// needs a sort), each a fresh stable plan with the listing's domains made
// once, as catalog.Loadout keeps them (BenchmarkNewDomains times those).
// Target: under 5 ms.
func BenchmarkTiers10000(b *testing.B) {
	unsorted := genCatalog(rand.New(rand.NewPCG(10, 10000)), 10000)
	es := sortedByName(unsorted)
	d, du := NewDomains(es), NewDomains(unsorted)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		for _, budget := range []int{DefaultBudget, 80000} {
			b.Run(fmt.Sprintf("%s/%d", f, budget), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Prompt(es, nil, Options{Format: f, Budget: budget, Domains: d, Stable: true})
				}
			})
		}
	}
	b.Run("pi/80000/unsorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Prompt(unsorted, nil, Options{Format: FormatPi, Budget: 80000, Domains: du, Stable: true})
		}
	})
}

// BenchmarkFigures500 measures the README figures: 500 generated skills
// (genCatalog), budget 8,000 characters: the percent of skills named, and
// of skills described at the floor or better, in each format.
func BenchmarkFigures500(b *testing.B) {
	es := genCatalog(rand.New(rand.NewPCG(5, 500)), 500)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		b.Run(f, func(b *testing.B) {
			var rep Report
			for b.Loop() {
				_, rep = Prompt(es, nil, Options{Format: f, Budget: 8000})
			}
			described := rep.Listed - len(rep.NameOnly)
			b.ReportMetric(100*float64(rep.Listed)/float64(len(es)), "%named")
			b.ReportMetric(100*float64(described)/float64(len(es)), "%described")
			b.ReportMetric(float64(rep.Chars), "chars")
		})
	}
}
