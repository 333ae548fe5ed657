package render

import (
	"fmt"
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
