package main

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadout/loadout/render"
)

// peerCat is a catalog of the given skills (name: description) under root,
// with usage counts.
func peerCat(skills map[string]string, usage map[string]int) *cat {
	c := &cat{usage: usage}
	for name, d := range skills {
		dir := root + "/" + name
		c.entries = append(c.entries, render.Entry{Name: name, Description: d, Dir: dir, Location: dir + "/SKILL.md"})
	}
	slices.SortFunc(c.entries, func(a, b render.Entry) int { return strings.Compare(a.Name, b.Name) })
	c.rank()
	return c
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// bareCost is what Codex charges for a line with no description.
func bareCost(l codexLine) int { return runes(l.render(0)) + 1 }

func TestCodexRoundRobin(t *testing.T) {
	lines := []codexLine{{"a", "abcdef", "p/a"}, {"b", "xy", "p/b"}, {"c", "pqrstu", "p/c"}}
	bare := 0
	for _, l := range lines {
		bare += bareCost(l)
	}
	for _, c := range []struct {
		extra int
		want  []string // descriptions shown
	}{
		// A first character costs two, every further one one.
		{9, []string{"ab", "xy", "pq"}},
		// "xy" is whole after two rounds: its share goes on to the others.
		{10, []string{"abc", "xy", "pq"}},
		{12, []string{"abcd", "xy", "pqr"}},
		// One character left and "c" still needs its first (two): it gets
		// nothing, while "a", already started, takes one more.
		{5, []string{"ab", "x", ""}},
		{0, []string{"", "", ""}},
	} {
		f := codexFitLines(lines, bare+c.extra)
		var got []string
		for i, l := range f.lines {
			d := strings.TrimSuffix(strings.TrimPrefix(l, "- "+lines[i].name+": "), " (file: "+lines[i].path+")")
			if d == "(file: "+lines[i].path+")" {
				d = ""
			}
			got = append(got, d)
		}
		if !slices.Equal(got, c.want) || f.included != 3 || f.omitted != 0 {
			t.Errorf("bare+%d: descriptions %q, %d included, %d omitted; want %q, all included", c.extra, got, f.included, f.omitted, c.want)
		}
		if f.cost > bare+c.extra {
			t.Errorf("bare+%d: cost %d over the limit", c.extra, f.cost)
		}
	}
}

func TestCodexRegimes(t *testing.T) {
	lines := []codexLine{{"alpha", "first one.", "r/alpha/SKILL.md"}, {"beta", "second one.", "r/beta/SKILL.md"}}
	full, bare := 0, 0
	for _, l := range lines {
		full += runes(l.render(runes(l.desc))) + 1
		bare += bareCost(l)
	}
	// Exactly the full cost: every line whole; one less: all listed, one
	// description character cut.
	if f := codexFitLines(lines, full); f.truncDsc != 0 || f.cost != full || !strings.Contains(f.lines[1], "second one.") {
		t.Errorf("at the full cost: %+v", f)
	}
	if f := codexFitLines(lines, full-1); f.truncDsc != 1 || f.included != 2 {
		t.Errorf("one under the full cost: %+v, want one character cut", f)
	}
	// Exactly the bare cost: both listed, no description; one less: no
	// description at all and the second line left out, every description
	// character counted as cut.
	if f := codexFitLines(lines, bare); f.included != 2 || f.truncDsc != 21 || f.cost != bare {
		t.Errorf("at the bare cost: %+v", f)
	}
	f := codexFitLines(lines, bare-1)
	if f.included != 1 || f.omitted != 1 || f.truncDsc != 21 || strings.Contains(strings.Join(f.lines, "\n"), "first") {
		t.Errorf("one under the bare cost: %+v, want alpha bare, beta left out", f)
	}
	// A line too long is skipped and a later, shorter one still goes in.
	long := []codexLine{{strings.Repeat("x", 40), "d", "r/x/SKILL.md"}, {"y", "d", "r/y/SKILL.md"}}
	f = codexFitLines(long, bareCost(long[1])+5)
	if f.included != 1 || f.omitted != 1 || !strings.HasPrefix(f.lines[0], "- y: ") {
		t.Errorf("oversized first line: %+v, want only y", f)
	}
}

func TestCodexOrderAliasesAndWarning(t *testing.T) {
	skills := map[string]string{}
	for i := range 30 {
		skills[fmt.Sprintf("skill-%02d", i)] = fmt.Sprintf("Does thing number %d in a way worth describing at length.", i)
	}
	// The most used skill sorts last by name: Codex pays no heed to use.
	c := peerCat(skills, map[string]int{"skill-29": 100})
	fit := codex(c, 100000)
	if strings.Contains(fit.text, "r0") || fit.note != "" || !strings.Contains(fit.text, "(file: "+root+"/skill-00/SKILL.md)") {
		t.Errorf("everything fits: want absolute paths, no alias, no note; got note %q", fit.note)
	}
	if !(strings.Index(fit.text, "skill-00") < strings.Index(fit.text, "skill-29")) {
		t.Error("not in name order")
	}
	// Too small for every bare absolute line, large enough for the
	// aliased ones and the roots table: the aliased listing names more.
	abs, al := 0, 0
	for name := range skills {
		abs += bareCost(codexLine{name, "", root + "/" + name + "/SKILL.md"})
		al += bareCost(codexLine{name, "", "r0/" + name + "/SKILL.md"})
	}
	table := codexAliasFixed + runes("- `r0` = `"+root+"`") + 1
	budget := al + table
	if budget >= abs {
		t.Fatalf("fixture: aliased %d + table %d not below absolute %d", al, table, abs)
	}
	fit = codex(c, budget)
	named, _ := countNamed(c, fit.text)
	if named != 30 || !strings.Contains(fit.text, "- `r0` = `"+root+"`") || !strings.Contains(fit.text, "(file: r0/skill-07/SKILL.md)") || fit.chars != budget {
		t.Errorf("aliases: %d named, chars %d of %d; text:\n%s", named, fit.chars, budget, fit.text)
	}
	// One character less: one skill left out, the last by name, though
	// it is the most used; the user is told, the model is not.
	fit = codex(c, budget-1)
	want := "Exceeded skills context budget. All skill descriptions were removed and 1 additional skill was not included in the model-visible skills list."
	if !strings.HasPrefix(fit.note, want) || strings.Contains(fit.text, "skill-29") || strings.Contains(fit.text, "Exceeded") {
		t.Errorf("one short: note %q; skill-29 listed: %v", fit.note, strings.Contains(fit.text, "skill-29"))
	}
}

func TestCodexLoaderLimits(t *testing.T) {
	c := peerCat(map[string]string{
		"at-limit":              strings.Repeat("a", 1024),
		"over-limit":            strings.Repeat("b", 1025),
		strings.Repeat("n", 64): "name at its limit.",
		strings.Repeat("m", 65): "name over its limit.",
		"folded":                "two\n  lines",
	}, nil)
	fit := codex(c, 1000000)
	for _, want := range []string{"- at-limit: ", "- " + strings.Repeat("n", 64) + ": ", "- folded: two lines (file:"} {
		if !strings.Contains(fit.text, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, not := range []string{"over-limit", strings.Repeat("m", 65)} {
		if strings.Contains(fit.text, not) {
			t.Errorf("%q listed: Codex does not load it", not[:min(len(not), 12)])
		}
	}
	if !strings.Contains(fit.note, "2 skills not loaded") {
		t.Errorf("note %q", fit.note)
	}
}

func TestClaude(t *testing.T) {
	skills := map[string]string{"apple": "Apples.", "berry": "Berries.", "cherry": "Cherries.", "date": "Dates."}
	// cherry is used most, apple next; berry and date never (date, later
	// by name, loses its description first).
	c := peerCat(skills, map[string]int{"cherry": 5, "apple": 1})
	total := 0
	for name, d := range skills {
		total += runes("- "+name+": "+d) + 1
	}
	all := claude(c, total)
	if all.chars != total || all.note != "" || !strings.Contains(all.text, "- date: Dates.\n") {
		t.Errorf("at the exact total: chars %d, note %q", all.chars, all.note)
	}
	one := claude(c, total-1)
	if strings.Contains(one.text, "Dates.") || !strings.Contains(one.text, "- date\n") || !strings.Contains(one.text, "Berries.") || one.chars > total-1 {
		t.Errorf("one under: want only date's description dropped:\n%s", one.text)
	}
	// Only cherry's description fits beside the names.
	names := 0
	for name := range skills {
		names += runes("- "+name) + 1
	}
	two := claude(c, names+runes(": Cherries."))
	if !strings.Contains(two.text, "- cherry: Cherries.\n") || strings.Contains(two.text, "Apples.") {
		t.Errorf("most used kept first:\n%s", two.text)
	}
	// Names alone over the budget: every name still listed, over it.
	over := claude(c, 10)
	n, _ := countNamed(c, over.text)
	if n != 4 || over.chars != names || !strings.Contains(over.note, "over the budget") {
		t.Errorf("names over the budget: %d named, chars %d, note %q", n, over.chars, over.note)
	}
	// The per-entry cap.
	long := peerCat(map[string]string{"long": strings.Repeat("x", claudeDescMax) + "YZ"}, nil)
	if l := claude(long, 100000); !strings.Contains(l.text, strings.Repeat("x", claudeDescMax)+"\n") || strings.Contains(l.text, "Y") {
		t.Error("description not capped at 1,536 characters")
	}
}

func TestBetterPeerWithinBudget(t *testing.T) {
	claudeOver := figures{named: 400, described: 0, chars: 8700}
	codexIn := figures{named: 120, described: 3, chars: 7990}
	if b := betterPeer(8000, claudeOver, codexIn); b.named != 120 || b.described != 3 {
		t.Errorf("a peer over its budget counted: %+v", b)
	}
	if b := betterPeer(8700, claudeOver, codexIn); b.named != 400 {
		t.Errorf("a peer at its budget not counted: %+v", b)
	}
}

func TestMeasureUsed(t *testing.T) {
	c := peerCat(map[string]string{"alpha": "Alpha does it.", "beta": "Beta does it."}, map[string]int{"alpha": 3})
	f := measure(c, "- alpha: Alpha does it.\n- beta: Beta does it.\n", 60)
	if f.described != 2 || f.usedDescribed != 1 || f.usesDescribed != 3 {
		t.Errorf("%+v", f)
	}
	if f := measure(c, "- alpha\n- beta: Beta does it.\n", 60); f.usedDescribed != 0 || f.described != 1 {
		t.Errorf("%+v", f)
	}
}

func countNamed(c *cat, text string) (named, described int) {
	f := measure(c, text, 60)
	return f.named, f.described
}

func TestSummaryMarksOver(t *testing.T) {
	c := peerCat(map[string]string{"alpha": "Alpha does it.", "beta": "Beta does it."}, map[string]int{"alpha": 3})
	var b strings.Builder
	w := bufio.NewWriter(&b)
	printSummary(w, []sumRow{
		{2, 8000, "Claude Code (docs)", figures{named: 2, chars: 8001}},
		{2, 8000, "Codex (render.rs)", figures{named: 1, described: 1, usedDescribed: 1, usesDescribed: 3, chars: 8000}},
	}, map[int]*cat{2: c}, 8000)
	w.Flush()
	out := b.String()
	if !strings.Contains(out, "| 2 | Claude Code (docs) | 100.0% | 0.0% | 0 of 1 (0%) | 0.0% | 8001 / 8000 **over** |") ||
		!strings.Contains(out, "| 2 | Codex (render.rs) | 50.0% | 50.0% | 1 of 1 (100%) | 100.0% | 8000 / 8000 |") {
		t.Errorf("summary:\n%s", out)
	}
}
