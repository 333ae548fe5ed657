package catalog

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loadout/loadout/internal/textdist"
	"github.com/loadout/loadout/skill"
)

// "Did you mean" suggestions answer unknown names, which any agent token
// can send, so their cost is bounded whatever the name and however many
// skills there are.
const (
	// MaxSuggestRunes is the longest text (in runes) that gets suggestions:
	// a longer one is not compared with anything. Skill names are shorter
	// (skill.MaxNameLen, checked first for names); this bounds file paths.
	MaxSuggestRunes = 256
	// MaxSuggestDistance caps how many edits away a suggestion may be
	// (a third of the text's length, at least 2, at most this).
	MaxSuggestDistance = skill.MaxNameLen / 3
	// MaxSuggestCells caps the edit-distance work of one suggestion search
	// (cells of the distance table), about a millisecond. Candidates are
	// compared nearest length first, so a search cut short has compared
	// the likeliest ones.
	MaxSuggestCells = 1 << 18
)

// unknownName is the not_found message for a name the agent has no skill
// for, and the closest names the agent has. A name longer than a skill
// name can be is quoted shortened and gets no suggestions: it is never
// compared with anything.
func (l *Loadout) unknownName(name string) (string, []string) {
	if tooLongName(name) {
		return fmt.Sprintf("No skill named %s (%d characters) is available to this agent: skill names have at most %d characters.",
			quoteShort(name), utf8.RuneCountInString(name), skill.MaxNameLen), nil
	}
	msg := fmt.Sprintf("No skill named %q is available to this agent.", name)
	sugg := closest(name, l.names)
	if len(sugg) > 0 {
		msg += " Closest names: " + strings.Join(sugg, ", ") + "."
	}
	return msg, sugg
}

// tooLongName reports whether name is longer than skill.MaxNameLen code
// points, counting at most that many.
func tooLongName(name string) bool {
	if len(name) <= skill.MaxNameLen {
		return false
	}
	n := 0
	for range name {
		if n++; n > skill.MaxNameLen {
			return true
		}
	}
	return false
}

// quoteShort quotes the first skill.MaxNameLen runes of s, with an
// ellipsis when there were more.
func quoteShort(s string) string {
	n := 0
	for i := range s {
		if n == skill.MaxNameLen {
			return fmt.Sprintf("%q…", s[:i])
		}
		n++
	}
	return fmt.Sprintf("%q", s)
}

// closest returns up to three candidates near name, best first: by edit
// distance (at most a third of name's length, at least 2, at most
// MaxSuggestDistance), or containing it or contained in it (distance 1).
// Ties go to the name that sorts first. Its cost is bounded: a name over
// MaxSuggestRunes gets nothing, a candidate whose length is too different
// is never compared, each comparison stops once over the distance still
// worth finding, and all comparisons together take at most
// MaxSuggestCells steps.
func closest(name string, cands []string) []string {
	names, _ := closestWork(name, cands)
	return names
}

// closestWork is closest, and says how many cells of distance table it
// computed.
func closestWork(name string, cands []string) (names []string, cells int) {
	if len(name) > utf8.UTFMax*MaxSuggestRunes {
		return nil, 0
	}
	q := []rune(name)
	if len(q) > MaxSuggestRunes || len(q) == 0 {
		return nil, 0
	}
	k := min(max(2, len(q)/3), MaxSuggestDistance)
	var top best
	// First pass: containment, and each other candidate's length gap (the
	// fewest edits it can be away), so that the nearest lengths are
	// compared first and the bound shrinks early.
	gaps := make([]uint8, len(cands))
	count := make([]int32, k+2)
	for i, c := range cands {
		gaps[i] = uint8(k + 1) // not compared
		if c == name {
			top.add(c, 0)
			continue
		}
		if len(c) >= len(name) && strings.Contains(c, name) || len(c) < len(name) && strings.Contains(name, c) {
			top.add(c, 1)
			continue
		}
		// Byte lengths bound rune counts: runes ≤ bytes ≤ 4·runes.
		if len(c) < len(q)-k || len(c) > utf8.UTFMax*(len(q)+k) {
			continue
		}
		gap := utf8.RuneCountInString(c) - len(q)
		if gap < 0 {
			gap = -gap
		}
		if gap <= k {
			gaps[i] = uint8(gap)
			count[gap+1]++
		}
	}
	for g := 1; g < len(count); g++ {
		count[g] += count[g-1]
	}
	order := make([]int32, count[k+1])
	for i, g := range gaps {
		if int(g) <= k {
			order[count[g]] = int32(i)
			count[g]++
		}
	}
	// The runes of name, counted into buckets: a candidate whose bucket
	// counts differ by more than the bound from name's cannot be within it
	// (each edit changes one count of each by one), which costs a glance.
	var hist [64]int16
	for _, r := range q {
		hist[r&63]++
	}
	var buf [utf8.UTFMax * (MaxSuggestRunes + MaxSuggestDistance)]rune
	for _, i := range order {
		c := cands[i]
		limit := min(k, top.bound())
		if int(gaps[i]) > limit {
			break // no candidate at this gap or further can make the top three
		}
		if cells >= MaxSuggestCells {
			break
		}
		h := hist
		rc := buf[:0]
		extra := 0 // runes of c that name has not got (by bucket)
		for _, r := range c {
			rc = append(rc, r)
			if h[r&63]--; h[r&63] < 0 {
				extra++
			}
		}
		missing := len(q) - (len(rc) - extra) // runes of name that c has not got
		if max(extra, missing) > limit {
			continue
		}
		d, ok, n := textdist.Within(q, rc, limit)
		cells += n
		if ok {
			top.add(c, d)
		}
	}
	return top.names(), cells
}

// best keeps the three best candidates, by distance then name.
type best struct {
	s []string
	d []int
}

// bound is the largest distance that can still enter the top three.
func (b *best) bound() int {
	if len(b.s) < 3 {
		return MaxSuggestDistance
	}
	return b.d[2]
}

func (b *best) add(s string, d int) {
	for i := range b.s {
		if b.s[i] == s {
			if d >= b.d[i] {
				return
			}
			b.s = append(b.s[:i], b.s[i+1:]...)
			b.d = append(b.d[:i], b.d[i+1:]...)
			break
		}
	}
	i := len(b.s)
	for i > 0 && (d < b.d[i-1] || d == b.d[i-1] && s < b.s[i-1]) {
		i--
	}
	if i >= 3 {
		return
	}
	b.s = append(b.s[:i], append([]string{s}, b.s[i:]...)...)
	b.d = append(b.d[:i], append([]int{d}, b.d[i:]...)...)
	if len(b.s) > 3 {
		b.s, b.d = b.s[:3], b.d[:3]
	}
}

func (b *best) names() []string { return b.s }
