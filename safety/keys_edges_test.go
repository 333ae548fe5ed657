package safety

import (
	"testing"
)

// TestHoldsAlsoBounds: an "also" word counts only where the rule's
// expression could use it: anywhere (no bound), at a word's start, or as
// a whole word; at the window's very start and end, in either case.
func TestHoldsAlsoBounds(t *testing.T) {
	anywhere := newSpec(nil, []string{"alpha", "zulu", "$("})
	start := newSpec(nil, []string{"alpha", "zulu"})
	start.alsoBound = wordStart
	whole := newSpec(nil, []string{"alpha", "zulu"})
	whole.alsoBound = wholeWord
	for _, tc := range []struct {
		sp   *keySpec
		text string
		want bool
	}{
		{anywhere, "ALPHA", true}, {anywhere, "Zulu", true}, {anywhere, "xalphax", true}, {anywhere, "echo $(x)", true}, {anywhere, "alph zul", false},
		{start, "alpha", true}, {start, "x alphas", true}, {start, "xalpha", false}, {start, "_zulu", false}, {start, "9zulu", false},
		{start, "Zzulu", false}, {start, "-zulu", true}, {start, "xzulu zulus", true},
		{whole, "alpha", true}, {whole, "x ZULU.", true}, {whole, "alphas", false}, {whole, "alpha_", false}, {whole, "alpha9", false},
		{whole, "alphaZ", false}, {whole, "alphaa alpha", true}, {whole, "xalpha", false}, {whole, "zulu-", true},
		{newSpec(nil, nil), "anything", true},
	} {
		if got := (&text{s: tc.text}).holdsAlso(tc.sp, 0, len(tc.text)); got != tc.want {
			t.Errorf("bound %d, %q: %v, want %v", tc.sp.alsoBound, tc.text, got, tc.want)
		}
	}
	// The window is what is searched, not the text around it.
	tx := &text{s: "xalpha alpha"}
	if !tx.holdsAlso(start, 1, 6) || tx.holdsAlso(whole, 0, 6) || !tx.holdsAlso(whole, 7, 12) {
		t.Errorf("windows of %q", tx.s)
	}
}

// TestIsRegexpWord: \w is ASCII letters, digits and underscore.
func TestIsRegexpWord(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if got := isRegexpWord(byte(c)); got != want {
			t.Errorf("%q: %v, want %v", rune(c), got, want)
		}
	}
}

// TestRarestPair: a keyword is indexed at its first pair that is not a
// common bigram, else at its least common one.
func TestRarestPair(t *testing.T) {
	for k, want := range map[string]int{
		"the":       1, // th (1st) he (2nd): he
		"he":        0,
		"invoke-":   1, // nv is not common
		"secretly":  2, // se and ec are common, cr is not
		"sk-":       1, // k- is not common
		"://":       0,
		"developer": 5, // every pair is common; op is the least
	} {
		if got := rarestPair(k); got != want {
			t.Errorf("%q: %d, want %d", k, got, want)
		}
	}
}
