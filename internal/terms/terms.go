// Package terms is how loadout turns text into search terms: words (runs
// of letters and digits, lowercased), English stopwords and request
// fillers left out, each word as its Snowball English stem. The search
// index (package catalog) and the listing's summary of the skills it
// leaves out (package render) share it, so that every word the listing
// shows the model is one the search matches.
package terms

import (
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Words calls f with each word of s (a run of letters and digits),
// lowercased.
func Words(s string, f func(w string)) {
	start := -1
	for i, r := range s {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		if ok && start < 0 {
			start = i
		}
		if !ok && start >= 0 {
			f(strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		f(strings.ToLower(s[start:]))
	}
}

// Append appends the search terms of s to out: its words, stopwords and
// fillers left out, each as its stem (Term).
func Append(s string, out []string) []string {
	Words(s, func(w string) {
		if t := Term(w); t != "" {
			out = append(out, t)
		}
	})
	return out
}

// fillers are words that say nothing of which skill a request needs: the
// way people ask ("please help, I need to...") and the boilerplate of
// descriptions ("Use when the user asks..."). With the English stopwords
// they are left out of both the index and the query: in 370 requests
// over the public collections, "my" matched setup-my-iq and "make"
// make-repo-contribution ahead of the skill asked for (bench/cmd/findability).
var fillers = map[string]bool{
	"please": true, "help": true, "need": true, "needs": true, "want": true, "wants": true,
	"use": true, "used": true, "uses": true, "using": true, "user": true, "users": true,
	"ask": true, "asks": true, "asked": true,
	"request": true, "requests": true, "requested": true, "make": true, "get": true,
	"let": true, "also": true, "like": true, "just": true, "really": true,
	"thing": true, "things": true, "stuff": true, "something": true,
}

// Stop reports whether w (lowercase) is left out of search: an English
// stopword or a filler.
func Stop(w string) bool { return english.IsStopWord(w) || fillers[w] }

// stems caches Term's stems: a catalog's vocabulary is a few tens of
// thousands of words, and stemming each occurrence again was most of an
// index build. It starts over past maxStems.
var stems struct {
	sync.Mutex
	m map[string]string
}

const maxStems = 1 << 16

// MaxStemmedLen is the longest word whose stem is cached: the cache then
// holds at most about 6 MB.
const MaxStemmedLen = 24

// Term is the search term of a lowercase word: "" for a stopword or a
// filler, else its English (Snowball) stem, so that "spreadsheets" finds
// "spreadsheet" and "formulas" "formula".
func Term(w string) string {
	if Stop(w) {
		return ""
	}
	if len(w) <= 3 {
		return undouble(w)
	}
	if digits(w) {
		// Its own stem (Snowball's rules end in letters), not cached:
		// the numbers in 50,000 skills' names filled 2.5 MB of the cache.
		return w
	}
	if len(w) > MaxStemmedLen {
		// Not cached: a query's words come from clients, and 65,536
		// words of a kilobyte would hold 128 MB.
		return stem(w)
	}
	stems.Lock()
	t, ok := stems.m[w]
	stems.Unlock()
	if ok {
		return t
	}
	t = stem(w)
	stems.Lock()
	if stems.m == nil || len(stems.m) >= maxStems {
		stems.m = make(map[string]string)
	}
	stems.m[strings.Clone(w)] = t
	stems.Unlock()
	return t
}

// cached reports whether w's stem is in the cache (for tests).
func cached(w string) bool {
	stems.Lock()
	defer stems.Unlock()
	_, ok := stems.m[w]
	return ok
}

// stem is w's Snowball English stem, made to agree with itself in two
// places it does not:
//   - Snowball undoubles a final consonant when it takes off -ing or -ed
//     ("adding" and "added" are "ad") but not on the bare word ("add"), so
//     a stem ending in bb, dd, ff, gg, mm, nn, pp, rr or tt is undoubled
//     too;
//   - it keeps the "s" of an acronym's plural ("pdfs", "pngs": there is
//     no vowel before it), so a word of four or more letters ending in
//     "s" with no vowel before it loses the "s".
func stem(w string) string {
	if n := len(w); n >= 4 && w[n-1] == 's' && !strings.ContainsAny(w[:n-1], "aeiouy") {
		return w[:n-1]
	}
	return undouble(english.Stem(w, true))
}

// undouble drops the last letter of a word ending in a double consonant
// Snowball undoubles (bb dd ff gg mm nn pp rr tt).
func undouble(t string) string {
	if n := len(t); n >= 3 && t[n-1] == t[n-2] && strings.IndexByte("bdfgmnprt", t[n-1]) >= 0 {
		return t[:n-1]
	}
	return t
}

// digits reports whether w is ASCII digits only.
func digits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}
