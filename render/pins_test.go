package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// pinCatalog is n skills whose names alone are over an 8,000-character
// budget (as 427 real skills are), three of them with long descriptions.
func pinCatalog(n int) ([]Entry, []string) {
	es := make([]Entry, n)
	for i := range es {
		name := fmt.Sprintf("skill-number-%04d-x", i)
		d := fmt.Sprintf("Does task %d with care, and says what it did in plain words for the reader.", i)
		if i%100 == 7 && i < 300 {
			d = strings.Repeat(fmt.Sprintf("Pinned skill %d explains its work at length. ", i), 8)
		}
		es[i] = Entry{Name: name, Description: d, Location: "/s/" + name + "/SKILL.md", Dir: "/s/" + name}
	}
	return es, []string{"skill-number-0007-x", "skill-number-0107-x", "skill-number-0207-x"}
}

// TestPinsDescribedWhole: pinned skills are described whole whenever
// their whole descriptions fit, in every format, even when the names of
// the others alone are over the budget (they were names only before).
func TestPinsDescribedWhole(t *testing.T) {
	es, pins := pinCatalog(600)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		for _, b := range []int{4000, 8000, 30000, 60000} {
			// Priority names other skills first: pins still lead.
			_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: pins, Priority: []string{"skill-number-0001-x"}})
			for _, p := range pins {
				if tier := rep.Tier(p); tier != TierFull {
					t.Errorf("%s, budget %d: pinned %s is %s, want full", f, b, p, tier)
				}
			}
			if rep.Chars > b {
				t.Errorf("%s, budget %d: %d characters", f, b, rep.Chars)
			}
			// Without pins, the same budget leaves them less.
			_, un := Prompt(es, nil, Options{Format: f, Budget: b})
			if b == 8000 && un.Tier(pins[0]) == TierFull {
				t.Errorf("%s, budget 8000: %s full without a pin; the test shows nothing", f, pins[0])
			}
		}
	}
}

// TestPinsAtTheLimit: the least budget at which every pin is whole is the
// length of that listing; one less and they are not all whole, and no
// budget gives a listing over it.
func TestPinsAtTheLimit(t *testing.T) {
	es, pins := pinCatalog(600)
	d := NewDomains(es) // once, not for each of the 3,200 budgets
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		whole := func(b int) (bool, Report) {
			_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: pins, Domains: d})
			for _, p := range pins {
				if rep.Tier(p) != TierFull {
					return false, rep
				}
			}
			return true, rep
		}
		least := -1
		for b := 800; b <= 4000; b++ {
			ok, rep := whole(b)
			if rep.Chars > b && !rep.TooSmall {
				t.Fatalf("%s, budget %d: %d characters", f, b, rep.Chars)
			}
			if ok && least < 0 {
				least = b
			}
			if !ok && least >= 0 {
				t.Fatalf("%s: pins whole at %d, not at %d", f, least, b)
			}
		}
		if least < 0 {
			t.Fatalf("%s: pins never whole up to 4,000", f)
		}
		_, at := whole(least)
		if ok, _ := whole(least - 1); ok {
			t.Errorf("%s: whole one under the least budget", f)
		}
		// At the least budget the listing is just the pins, the frame and
		// the line about the rest: it uses the budget to the character
		// (catalog and progressive have no folder prefixes to misjudge).
		if f != FormatPi && at.Chars != least {
			t.Errorf("%s: %d characters at the least budget %d", f, at.Chars, least)
		}
		if at.Listed != len(pins) {
			t.Errorf("%s: %d listed at the least budget, want the %d pins", f, at.Listed, len(pins))
		}
	}
}

// TestPinsTooLong: pins whose whole descriptions cannot fit still come
// first: the first pin keeps the most, and the listing stays in budget.
func TestPinsTooLong(t *testing.T) {
	es, pins := pinCatalog(600)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		b := MinBudget(len(es), Options{Format: f}) + 300
		_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: pins})
		if rep.Chars > b {
			t.Errorf("%s: %d characters", f, rep.Chars)
		}
		if rep.Tier(pins[2]) == TierFull {
			t.Errorf("%s: the third pin whole at %d", f, b)
		}
		if rep.Tier(pins[0]) == TierGrouped || rep.Tier(pins[0]) == TierOmitted {
			t.Errorf("%s: the first pin left out: %s", f, rep.Tier(pins[0]))
		}
	}
}

// TestPrefaceCounted: the preface is written first and counted in the
// budget, to the character: a listing with a preface of P characters is
// the listing of budget B-P behind it, and never over B.
func TestPrefaceCounted(t *testing.T) {
	es, _ := pinCatalog(300)
	preface := "This server holds the skills of agent \"a\"; call load_skill with a name.\n\n"
	p := len([]rune(preface))
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		for _, b := range []int{3000, 8000} {
			with, rw := Prompt(es, nil, Options{Format: f, Budget: b, Preface: preface})
			without, ro := Prompt(es, nil, Options{Format: f, Budget: b - p})
			if with != preface+without {
				t.Errorf("%s, %d: the preface's listing differs from the listing of budget %d", f, b, b-p)
			}
			if rw.Chars != ro.Chars+p || rw.Chars > b {
				t.Errorf("%s, %d: %d characters with the preface, %d without", f, b, rw.Chars, ro.Chars)
			}
			if rw.Budget != b {
				t.Errorf("%s: Report.Budget %d, want %d", f, rw.Budget, b)
			}
		}
		if got, want := MinBudget(300, Options{Format: f, Preface: preface}), MinBudget(300, Options{Format: f})+p; got != want {
			t.Errorf("%s: MinBudget %d, want %d", f, got, want)
		}
		// A budget below the preface leaves the listing nothing: too small.
		if _, rep := Prompt(es, nil, Options{Format: f, Budget: p - 1, Preface: preface}); !rep.TooSmall {
			t.Errorf("%s: budget under the preface is not too small", f)
		}
	}
}

// TestLeadDescribed: when the names fill the budget, the first skills of
// Priority (the most used) are still described at the floor, in at most
// 1/LeadShare of the budget; without a priority none is described.
func TestLeadDescribed(t *testing.T) {
	es, _ := pinCatalog(2000)
	prio := []string{"skill-number-1500-x", "skill-number-0042-x", "skill-number-0999-x", "skill-number-0007-x"}
	for _, f := range formats {
		for _, b := range []int{4000, 8000} {
			_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Priority: prio})
			described := 0
			for i, tier := range rep.Tiers {
				if tier == TierFull || tier == TierShortened {
					described++
					if !slices.Contains(prio, rep.Names[i]) {
						t.Errorf("%s %d: %s described, not in the priority", f, b, rep.Names[i])
					}
				}
			}
			if described < 2 || rep.Chars > b {
				t.Errorf("%s %d: %d of the priority described, %d characters", f, b, described, rep.Chars)
			}
			if rep.Tier(prio[0]) == TierName || rep.Tier(prio[0]) == TierGrouped {
				t.Errorf("%s %d: the most used is %s", f, b, rep.Tier(prio[0]))
			}
			_, none := Prompt(es, nil, Options{Format: f, Budget: b})
			if len(none.Shortened) > 0 || none.Listed == 0 {
				t.Errorf("%s %d: without a priority %d shortened, %d listed", f, b, len(none.Shortened), none.Listed)
			}
			// What leading costs: fewer names, never more than the share.
			if rep.Listed >= none.Listed {
				t.Errorf("%s %d: %d listed with the lead, %d without", f, b, rep.Listed, none.Listed)
			}
		}
	}
}

// TestEveryPinned: every skill pinned, the budget too small for them
// all: the listing stays in budget (and the pins lead every tier).
func TestEveryPinned(t *testing.T) {
	es, _ := pinCatalog(50)
	var all []string
	for _, e := range es {
		all = append(all, e.Name)
	}
	for _, f := range formats {
		for _, b := range []int{2000, 100000} {
			_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: all})
			if rep.Chars > b || rep.Listed == 0 {
				t.Errorf("%s %d: %d characters, %d listed", f, b, rep.Chars, rep.Listed)
			}
			if b == 100000 && len(rep.Shortened)+len(rep.NameOnly) > 0 {
				t.Errorf("%s %d: pins not whole with room for all", f, b)
			}
		}
	}
}

// leadCatalog is n skills whose descriptions are "word word …" (a word
// boundary every five characters): in the catalog format a description
// cut at the floor of 60 keeps 64 characters and its ellipsis, so
// describing a named skill at the floor adds exactly 73 characters
// ("- **NAME**: " + 65 + "\n" against "NAME" and a space).
func leadCatalog(n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		name := fmt.Sprintf("lead-skill-%04d", i)
		es[i] = Entry{Name: name, Description: strings.TrimSpace(strings.Repeat("word ", 40)), Location: "/s/" + name + "/SKILL.md"}
	}
	return es
}

// TestLeadExact: the most used are described at the floor while they fit
// in a fifth of the budget, counted exactly: the block's closing line
// (1) and 73 characters each. A share of 730 holds 9, of 731 holds 10.
func TestLeadExact(t *testing.T) {
	es := leadCatalog(2000)
	var prio []string
	for i := 0; i < 30; i++ {
		prio = append(prio, es[i*50].Name)
	}
	d := NewDomains(es)
	for _, c := range []struct{ budget, want int }{{3650, 9}, {3655, 10}, {3659, 10}, {3660, 10}, {5*(1+73*12) - 1, 11}, {5 * (1 + 73*12), 12}} {
		_, rep := Prompt(es, nil, Options{Format: FormatCatalog, Budget: c.budget, Priority: prio, Domains: d})
		described := 0
		for i, tier := range rep.Tiers {
			if tier == TierShortened || tier == TierFull {
				described++
				if !slices.Contains(prio[:c.want], rep.Names[i]) {
					t.Errorf("budget %d: %s described, not one of the first %d used", c.budget, rep.Names[i], c.want)
				}
			}
		}
		if described != c.want || rep.Chars > c.budget {
			t.Errorf("budget %d (share %d): %d described, want %d; %d characters", c.budget, c.budget/LeadShare, described, c.want, rep.Chars)
		}
	}
	// With a pin, its whole description comes first and the lead's share
	// does not count the closing line again.
	pin := []string{es[1].Name}
	_, rep := Prompt(es, nil, Options{Format: FormatCatalog, Budget: 5 * 73 * 10, Priority: prio, Pinned: pin, Domains: d})
	if rep.Tier(pin[0]) != TierFull || len(rep.Shortened) != 10 {
		t.Errorf("with a pin: %s, %d shortened, want full and 10", rep.Tier(pin[0]), len(rep.Shortened))
	}
}

// TestLeadFallsBack: when the lead's descriptions and the note on the
// rest do not fit, the listing names what fits instead of giving up.
func TestLeadFallsBack(t *testing.T) {
	es := leadCatalog(2000)
	prio := []string{es[7].Name, es[8].Name}
	for _, f := range formats {
		b := MinBudget(len(es), Options{Format: f}) + map[string]int{FormatPi: 110, FormatCatalog: 60, FormatProgressive: 60}[f]
		_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Priority: prio})
		if rep.TooSmall || rep.Listed == 0 || rep.Chars > b {
			t.Errorf("%s, budget %d: too small %v, %d listed, %d characters", f, b, rep.TooSmall, rep.Listed, rep.Chars)
		}
	}
	// Pins and a priority of the same length: both lead.
	_, rep := Prompt(es, nil, Options{Format: FormatCatalog, Budget: 8000, Priority: []string{es[9].Name}, Pinned: []string{es[3].Name}})
	if rep.Tier(es[3].Name) != TierFull || rep.Tier(es[9].Name) != TierShortened {
		t.Errorf("a pin and one used: %s, %s", rep.Tier(es[3].Name), rep.Tier(es[9].Name))
	}
}

// TestLeadSkipsEmpty: a used skill with no description is not "described"
// by an empty entry; the lead stops at it.
func TestLeadSkipsEmpty(t *testing.T) {
	es := leadCatalog(2000)
	es[50].Description = ""
	_, rep := Prompt(es, nil, Options{Format: FormatCatalog, Budget: 4000, Priority: []string{es[50].Name, es[100].Name}})
	if rep.Tier(es[50].Name) == TierFull || rep.Tier(es[50].Name) == TierShortened {
		t.Errorf("a used skill without a description is %s", rep.Tier(es[50].Name))
	}
}

// TestLeadFallbackKeepsPins: when the lead does not fit with the note,
// the listing falls back to names, and the pins stay whole.
func TestLeadFallbackKeepsPins(t *testing.T) {
	es := leadCatalog(2000)
	pin := es[3].Name
	prio := []string{es[7].Name, es[8].Name, es[9].Name, es[10].Name}
	for _, f := range formats {
		base := MinBudget(len(es), Options{Format: f})
		found := false
		for b := base; b < base+600; b += 7 {
			_, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: []string{pin}, Priority: prio})
			if rep.Tier(pin) != TierFull {
				continue
			}
			found = true
			if rep.Chars > b {
				t.Errorf("%s %d: %d characters", f, b, rep.Chars)
			}
		}
		// From the least budget that holds the pin whole, it stays whole.
		var first int
		for b := base; b < base+600; b++ {
			if _, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: []string{pin}}); rep.Tier(pin) == TierFull {
				first = b
				break
			}
		}
		for b := first; b < first+200 && first > 0; b += 3 {
			if _, rep := Prompt(es, nil, Options{Format: f, Budget: b, Pinned: []string{pin}, Priority: prio}); rep.Tier(pin) != TierFull {
				t.Errorf("%s %d: the pin is %s with a priority, whole without one from %d", f, b, rep.Tier(pin), first)
				break
			}
		}
		if !found || first == 0 {
			t.Errorf("%s: the pin never whole", f)
		}
	}
}

// TestLeadExactProgressive: in the progressive format the block closes
// the same with or without entries, so the lead's share counts only the
// entries: each adds the entry's frame and the 65 characters of its cut
// description, less the name's space in the names line.
func TestLeadExactProgressive(t *testing.T) {
	es := leadCatalog(2000)
	var prio []string
	for i := 0; i < 30; i++ {
		prio = append(prio, es[i*50].Name)
	}
	d := NewDomains(es)
	add := utf8.RuneCountInString("  <skill>\n    <id></id>\n    <description></description>\n  </skill>\n") + 64
	for _, c := range []struct{ share, want int }{{5 * add, 5}, {5*add - 1, 4}, {7 * add, 7}} {
		budget := c.share * LeadShare
		_, rep := Prompt(es, nil, Options{Format: FormatProgressive, Budget: budget, Priority: prio, Domains: d})
		if n := rep.Listed - len(rep.NameOnly); n != c.want {
			t.Errorf("share %d: %d described, want %d", c.share, n, c.want)
		}
	}
}
