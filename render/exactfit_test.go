package render

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDescCostAtEveryCut: what the planner reckons a description costs at
// each cut is what writing it costs, escapes and ellipsis included, at
// every cut: at an escaped character's own index (the exact fit of
// extraBefore's bounds) and one past it.
func TestDescCostAtEveryCut(t *testing.T) {
	for _, d := range []string{"", "plain", "&", "a&", "&a", "a&b<c", "&&", "a&b&c", "é&日<🙂>\"'x", "<<<>>>", "x&y z&w"} {
		var slab []special
		c := newDescCost(d, xmlExtra, &slab)
		n := utf8.RuneCountInString(d)
		if c.n != n {
			t.Fatalf("%q: n %d, want %d", d, c.n, n)
		}
		rs := []rune(d)
		for L := 0; L <= n+1; L++ {
			var b strings.Builder
			writeXML(&b, string(rs[:min(L, n)]))
			want := utf8.RuneCountInString(b.String())
			if L < n {
				want++ // the ellipsis
			}
			if got := c.at(slab, L); got != want {
				t.Errorf("%q cut at %d: costs %d, want %d (%q)", d, L, got, want, b.String())
			}
		}
	}
}

// TestFloorCapExact: the cut is the first word boundary at or after the
// floor (exactly at it, one before and one past it); a sentence's end
// shorter than the floor is no cut.
func TestFloorCapExact(t *testing.T) {
	for _, c := range []struct {
		d     string
		floor int
		want  int
	}{
		{"Abcd. efgh ijkl mnop", 5, 5},   // a sentence end exactly at the floor
		{"Abcd. efgh ijkl mnop", 6, 10},  // one under the floor: not a cut
		{"Abcd. efgh ijkl mnop", 4, 5},   // the first boundary at or after 4
		{"Abcd efgh ijkl mnop", 4, 4},    // a boundary exactly at the floor
		{"Abcd efgh ijkl mnop", 5, 9},    // one past it: the next
		{"Abcd efgh ijkl mnop", 3, 4},    // one before it: that one
		{"Abc! efgh ijkl mnop", 4, 4},    // "!" at the floor
		{"Abc? efgh ijkl mnop", 10, 14},  // "?" under the floor: not a cut
		{"Abcd efgh. ijkl mnop", 9, 10},  // past the first boundary: the next
		{"Abcd efgh. ijkl mnop", 10, 10}, // the sentence end at the floor
		{"Abcd efgh ijkl mnop", 15, 19},  // no boundary at or after: whole
		{"Abcdefgh", 4, 8},               // no boundary: whole
		{"Ab  cd", 2, 2},                 // a run of spaces cuts at its start
	} {
		if got := floorCap(c.d, c.floor); got != c.want {
			t.Errorf("floorCap(%q, %d) = %d, want %d", c.d, c.floor, got, c.want)
		}
	}
}

// TestExactFit: giving a listing exactly the characters it used fills
// them all again (the greedy planner may pick another listing of that
// size, as its thresholds move with the budget), and one fewer gives a
// smaller one. Every step of the
// planner (a description at its floor, a description extended whole or to
// the longest cut that fits, a name) accepts a fit to the character, so a
// planner that refuses an exact fit anywhere shows here.
func TestExactFit(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 24))
	checked, shorter := 0, 0
	for iter := range 600 {
		es := randomEntries(r)
		if len(es) == 0 {
			continue
		}
		// Short descriptions too: one character is the planner's lower
		// bound for a described entry, met exactly.
		for i := range es {
			if r.IntN(6) == 0 {
				es[i].Description = string("xé&"[r.IntN(2)])
			}
		}
		f := []string{FormatPi, FormatCatalog, FormatProgressive}[iter%3]
		full := chars(es, f)
		budget := 1 + r.IntN(full+20)
		out, rep := Prompt(es, nil, Options{Format: f, Budget: budget})
		if rep.TooSmall || rep.Chars == 0 || len(rep.Grouped)+len(rep.Omitted) > 0 {
			continue // whether to group moves with the budget (a share of it)
		}
		_, rep2 := Prompt(es, nil, Options{Format: f, Budget: rep.Chars})
		if rep2.Chars != rep.Chars {
			t.Fatalf("%s, %d entries: budget %d used %d chars; budget %d uses %d: an exact fit was refused (tiers %v, were %v)",
				f, len(es), budget, rep.Chars, rep.Chars, rep2.Chars, rep2.Tiers, rep.Tiers)
		}
		checked++
		less, rep3 := Prompt(es, nil, Options{Format: f, Budget: rep.Chars - 1})
		if !rep3.TooSmall && (less == out || rep3.Chars > rep.Chars-1) {
			t.Fatalf("%s: budget %d gives the listing of %d chars", f, rep.Chars-1, rep.Chars)
		}
		if rep.Chars < full {
			shorter++
		}
	}
	if checked < 200 || shorter < 50 {
		t.Fatalf("only %d listings checked, %d of them shortened", checked, shorter)
	}
}
