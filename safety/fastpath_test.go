package safety

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// randomText builds texts from the rules' keywords, their pieces and
// the bytes around them, so that keywords overlap, straddle each other
// and touch the text's ends.
func randomText(r *rand.Rand) string {
	parts := []string{" ", "\n", "`", "``", "\"", "'", "+", "-", "_", "/", ":", "(", "]", "x", "US", "se", "Ab", "er", "in", "ov"}
	var b strings.Builder
	for n := r.Intn(40); n > 0; n-- {
		switch r.Intn(3) {
		case 0:
			k := allKeys[r.Intn(len(allKeys))]
			if r.Intn(2) == 0 {
				k = strings.ToUpper(k)
			}
			b.WriteString(k)
		case 1:
			k := allKeys[r.Intn(len(allKeys))]
			b.WriteString(k[r.Intn(len(k)):])
		default:
			b.WriteString(parts[r.Intn(len(parts))])
		}
	}
	return b.String()
}

// TestKeyHitsFindsEveryKeyword: the pass over anchor pairs finds exactly
// the keywords a plain search at every offset finds, in offset order.
func TestKeyHitsFindsEveryKeyword(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 20000 {
		s := randomText(r)
		var want []keyHit
		for i := range len(s) {
			for id, k := range allKeys {
				if hasPrefixFold(s[i:], k) {
					want = append(want, keyHit{off: int32(i), key: int16(id)})
				}
			}
		}
		got := slices.Clone((&text{s: s}).keyHits())
		if !slices.IsSortedFunc(got, func(a, b keyHit) int { return int(a.off - b.off) }) {
			t.Fatalf("%q: hits out of order: %v", s, got)
		}
		cmpHit := func(a, b keyHit) int { return int(a.off-b.off)*1000 + int(a.key-b.key) }
		slices.SortFunc(got, cmpHit)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", s, got, want)
		}
	}
}

// TestInlineCodeIsTheExpression: inlineCode finds what `[^`\n]+` finds.
func TestInlineCodeIsTheExpression(t *testing.T) {
	re := regexp.MustCompile("`[^`\n]+`")
	r := rand.New(rand.NewSource(2))
	alpha := []string{"`", "`", "a", " ", "\n", "é", "\xff"}
	for range 50000 {
		var b strings.Builder
		for n := r.Intn(16); n > 0; n-- {
			b.WriteString(alpha[r.Intn(len(alpha))])
		}
		s := b.String()
		var want [][2]int
		for _, m := range re.FindAllStringIndex(s, -1) {
			want = append(want, [2]int{m[0], m[1]})
		}
		if got := inlineCode(s); !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", s, got, want)
		}
	}
}

// TestAlsoBoundIsImplied: a window the word-bound filter skips is one the
// rule's expression does not match, for the rules that set alsoBound.
func TestAlsoBoundIsImplied(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	words := strings.Fields("do not don't dont never tell inform let the user user's their without knowledge telling secretly send upload ignore all previous instructions rules reveal your system prompt post secrets https://x.example notes nothing donut nevertheless")
	seps := []string{" ", "  ", "_", "x", ".", "\n", "'"}
	n := 0
	for range 40000 {
		var b strings.Builder
		for k := r.Intn(10); k > 0; k-- {
			b.WriteString(words[r.Intn(len(words))])
			b.WriteString(seps[r.Intn(len(seps))])
		}
		s := b.String()
		for _, ru := range injectionRules {
			if ru.alsoBound == 0 || !ru.re.MatchString(s) {
				continue
			}
			n++
			if !(&text{s: s}).holdsAlso(ru.spec, 0, len(s)) {
				t.Fatalf("%q matches %s, but its window is skipped", s, ru.re)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d matching texts: the generator does not reach the rules", n)
	}
}

// TestKeyHitsOverlappingPairs: every two keywords, one overlapping the
// other at every offset where they agree (or one after the other): the
// hits are those of a plain search, in offset order, however the anchors
// fall.
func TestKeyHitsOverlappingPairs(t *testing.T) {
	for _, a := range allKeys {
		for _, b := range allKeys {
			for d := 1; d <= len(a); d++ {
				// b starts at offset d of a; the text is their union.
				s := a
				if d+len(b) > len(a) {
					if !strings.HasPrefix(b, a[d:]) {
						continue
					}
					s = a + b[len(a)-d:]
				} else if a[d:d+len(b)] != b {
					continue
				}
				var want []keyHit
				for i := range len(s) {
					for id, k := range allKeys {
						if hasPrefixFold(s[i:], k) {
							want = append(want, keyHit{off: int32(i), key: int16(id)})
						}
					}
				}
				got := slices.Clone((&text{s: s}).keyHits())
				if !slices.IsSortedFunc(got, func(x, y keyHit) int { return int(x.off - y.off) }) {
					t.Fatalf("%q: hits out of order: %v", s, got)
				}
				slices.SortFunc(got, func(x, y keyHit) int { return int(x.off-y.off)*1000 + int(x.key-y.key) })
				if !slices.Equal(got, want) {
					t.Fatalf("%q: got %v, want %v", s, got, want)
				}
			}
		}
	}
}
