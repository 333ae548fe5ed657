package textdist

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"inline", "inlin", 1}, {"kitten", "sitting", 3}, {"café", "cafe", 1}, {"技能", "技", 1}} {
		if got := Levenshtein(c.a, c.b); got != c.d {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// Within agrees with Levenshtein wherever the distance is at most k, and
// says "over" everywhere else.
func TestWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab-é技")
	word := func() string {
		n := r.IntN(12)
		var s []rune
		for range n {
			s = append(s, alphabet[r.IntN(len(alphabet))])
		}
		return string(s)
	}
	for range 20000 {
		a, b := word(), word()
		want := Levenshtein(a, b)
		for k := 0; k <= 8; k++ {
			d, ok, _ := Within([]rune(a), []rune(b), k)
			if ok != (want <= k) || ok && d != want {
				t.Fatalf("Within(%q, %q, %d) = %d, %v; Levenshtein = %d", a, b, k, d, ok, want)
			}
		}
	}
}

// The work Within does is bounded by k and the shorter string, not by the
// longer one.
func TestWithinBounded(t *testing.T) {
	long := []rune(strings.Repeat("ab", 50_000))
	short := []rune(strings.Repeat("ba", 32))
	if _, ok, cells := Within(short, long, 21); ok || cells != 0 {
		t.Errorf("a length difference over k cost %d cells", cells)
	}
	a := []rune(strings.Repeat("x", 300))
	b := []rune(strings.Repeat("y", 300))
	_, ok, cells := Within(a, b, 5)
	if ok || cells > 11*6 {
		t.Errorf("two strings with nothing in common cost %d cells for k=5 (want at most %d: the rows stop once over k)", cells, 11*6)
	}
	c := []rune("y" + strings.Repeat("x", 298) + "y")
	d := []rune("z" + strings.Repeat("x", 298) + "z")
	if dist, ok, cells := Within(c, d, 21); !ok || dist != 2 || cells > 43*300 {
		t.Errorf("Within = %d, %v in %d cells; want 2 in at most %d (the band)", dist, ok, cells, 43*300)
	}
}
