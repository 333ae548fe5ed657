package terms

import (
	"fmt"
	"strings"
	"testing"
)

// TestStemCacheBound: a word longer than MaxStemmedLen is stemmed but
// never cached (clients choose query words), one at the bound is.
func TestStemCacheBound(t *testing.T) {
	at := strings.Repeat("ta", (MaxStemmedLen-4)/2) + "ings"
	past := "x" + at
	if len(at) != MaxStemmedLen || Term(at) == at || Term(past) == past {
		t.Fatalf("stems: %q of %q, %q of %q", Term(at), at, Term(past), past)
	}
	if !cached(at) || cached(past) {
		t.Errorf("cached: at the bound %v (want true), past it %v (want false)", cached(at), cached(past))
	}
}

// TestTerms: words split on what is not a letter or digit, lowercased;
// stopwords and fillers give no term; other words their stems.
func TestTerms(t *testing.T) {
	got := strings.Join(Append("Please help: Fills PDF-forms, extracts tables2 from the ümlaut docs", nil), " ")
	if want := "fill pdf form extract tables2 ümlaut doc"; got != want {
		t.Errorf("Append = %q, want %q", got, want)
	}
	for _, w := range []string{"the", "please", "user", "asks"} {
		if Term(w) != "" || !Stop(w) {
			t.Errorf("Term(%q) = %q, Stop %v: want a stopword", w, Term(w), Stop(w))
		}
	}
	if Stop("skill") || Term("skills") != "skill" {
		t.Errorf("skill: Stop %v, Term %q", Stop("skill"), Term("skills"))
	}
}

// TestStemAgrees: a word and its forms share a term where Snowball alone
// splits them: an undoubled final consonant ("add", "adding", "added")
// and an acronym's plural ("pdfs"); the "no" cases keep their letters.
func TestStemAgrees(t *testing.T) {
	for _, group := range [][]string{
		{"add", "adding", "added", "adds"},
		{"pdf", "pdfs", "PDFs"},
		{"png", "pngs"},
		{"http", "https"},
		{"run", "running"},
		{"ship", "shipping", "ships"},
	} {
		want := Term(strings.ToLower(group[0]))
		for _, w := range group[1:] {
			if got := Term(strings.ToLower(w)); got != want {
				t.Errorf("Term(%q) = %q, Term(%q) = %q: want the same", group[0], want, w, got)
			}
		}
	}
	for w, want := range map[string]string{
		"gps":  "gps",  // three letters: no "s" taken
		"bus":  "bus",  // a vowel before the s
		"mass": "mass", // ss is not undoubled
		"all":  "",     // a stopword
		"egg":  "eg",   // gg is
		"ab":   "ab",   // too short to undouble
		"jazz": "jazz", // zz is not in Snowball's list
	} {
		if got := Term(w); got != want {
			t.Errorf("Term(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestWordsAtTheEnds: a word that starts the text and one that ends it
// are words; three letters are kept as they are ("ads" is not "ad").
func TestWordsAtTheEnds(t *testing.T) {
	if got := strings.Join(Append("pdf", nil), " "); got != "pdf" {
		t.Errorf("Append(pdf) = %q", got)
	}
	if got := strings.Join(Append("forms", nil), " "); got != "form" {
		t.Errorf("Append(forms) = %q", got)
	}
	if Term("ads") != "ads" || Term("adds") != "ad" {
		t.Errorf("Term(ads) = %q, Term(adds) = %q", Term("ads"), Term("adds"))
	}
}

// TestStemCacheStartsOver: the cache holds at most maxStems words; the
// one past it starts it over.
func TestStemCacheStartsOver(t *testing.T) {
	stems.Lock()
	stems.m = nil
	stems.Unlock()
	for i := range maxStems {
		Term(fmt.Sprintf("word%06dz", i))
	}
	stems.Lock()
	full := len(stems.m)
	stems.Unlock()
	Term("onemorewordz")
	stems.Lock()
	after := len(stems.m)
	stems.Unlock()
	if full != maxStems || after != 1 {
		t.Errorf("cache: %d words at the bound (want %d), %d after one more (want 1)", full, maxStems, after)
	}
}

// TestDigitsNotCached: a word of digits is its own term, as stemming it
// gives, and is not cached (the numbers in skills' names filled it); a
// word of digits and a letter is stemmed and cached as before.
func TestDigitsNotCached(t *testing.T) {
	for _, w := range []string{"13318", "2024", "00000", "1234567890123456789012345"} {
		if got, want := Term(w), stem(w); got != w || want != w {
			t.Errorf("Term(%q) = %q, stem %q: want the word", w, got, want)
		}
		if cached(w) {
			t.Errorf("%q cached", w)
		}
	}
	for _, w := range []string{"13318s", "x2024"} {
		if Term(w) != stem(w) || !cached(w) {
			t.Errorf("Term(%q) = %q (stem %q), cached %v: want stemmed and cached", w, Term(w), stem(w), cached(w))
		}
	}
}
