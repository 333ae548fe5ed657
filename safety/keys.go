package safety

import (
	"slices"
	"strings"
)

// The rules' keywords are found in one pass over a text: every rule names
// lower-case ASCII keywords one of which each of its matches contains, and
// its regular expression runs only near them (text.find). The pass looks
// up each pair of bytes (ASCII case folded) in a table of the keywords'
// anchor pairs and compares the whole keyword only there. A keyword's
// anchor is its rarest pair in prose (see commonPairs), not its first:
// indexed by their first pairs, "in" (invoke-), "at" (atob), "se"
// (secretly), "co" (covertly), "de" (developer) and "sk" (sk-) stopped
// the pass at most words of a text.

var (
	allKeys []string
	// anchor is where each keyword's indexed pair starts in it.
	anchor []int
	keyIDs = map[string]int16{}
	// byPair lists the keywords starting with each byte pair, by id;
	// pairBits marks the pairs that have any (8 KiB: stays in cache).
	byPair   [1 << 16][]int16
	pairBits [1 << 16 / 64]uint64
)

// registerKeys adds keywords to the index; called from init for every
// rule table.
func registerKeys(keys ...string) {
	for _, k := range keys {
		if _, ok := keyIDs[k]; ok {
			continue
		}
		if len(k) < 2 || strings.ToLower(k) != k {
			panic("safety: keyword " + k + " must be lower case and two bytes or more")
		}
		id := int16(len(allKeys))
		allKeys = append(allKeys, k)
		keyIDs[k] = id
		a := rarestPair(k)
		anchor = append(anchor, a)
		p := uint16(k[a])<<8 | uint16(k[a+1])
		byPair[p] = append(byPair[p], id)
		pairBits[p/64] |= 1 << (p % 64)
	}
}

// commonPairs are the most frequent byte pairs of English prose, most
// frequent first (the common letter bigrams).
var commonPairs = strings.Fields(`th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ck ew ki ga ua ob ue fu da ep pt ef up qu ps sk ys cu`)

// rarestPair returns the offset of the pair of k least common in prose:
// the pair not in commonPairs, or the one latest in it.
func rarestPair(k string) int {
	best, bestRank := 0, -1
	for j := 0; j+1 < len(k); j++ {
		rank := len(commonPairs)
		if i := slices.Index(commonPairs, k[j:j+2]); i >= 0 {
			rank = i
		}
		if rank > bestRank {
			best, bestRank = j, rank
		}
	}
	return best
}

func keyID(k string) int16 {
	id, ok := keyIDs[k]
	if !ok {
		panic("safety: keyword " + k + " not registered")
	}
	return id
}

func init() {
	for i := range injectionRules {
		injectionRules[i].spec = newSpec(injectionRules[i].keys, injectionRules[i].also)
		injectionRules[i].spec.alsoBound = injectionRules[i].alsoBound
	}
	for i := range scriptRules {
		scriptRules[i].spec = newSpec(scriptRules[i].keys, scriptRules[i].also)
		scriptRules[i].spec.alsoBound = scriptRules[i].alsoBound
	}
	for i := range secretRules {
		secretRules[i].spec = newSpec(secretRules[i].keys, nil)
	}
	linkSpec = newSpec([]string{"]("}, nil)
	refDefSpec = newSpec([]string{"]:"}, nil)
}

var linkSpec, refDefSpec *keySpec

// keySpec is a rule's keywords, by id, and its "also" words: the
// multi-byte ones by id (found by the same pass), single bytes as a
// string.
type keySpec struct {
	ids       []int16
	has       []uint64 // ids as a bit set: find tests every keyword hit against it
	alsoWords []string
	alsoBytes string
	alsoBound int // 0, wordStart or wholeWord (see rule.alsoBound)
	// alsoFirst marks the first bytes of alsoWords, both cases: most
	// bytes of a window start none.
	alsoFirst [256]bool
}

// Where an "also" word must sit (rule.alsoBound).
const (
	wordStart = 1
	wholeWord = 2
)

// isRegexpWord is a byte of \w, what \b in package regexp looks at.
func isRegexpWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func newSpec(keys, also []string) *keySpec {
	registerKeys(keys...)
	sp := &keySpec{}
	for _, k := range keys {
		id := keyID(k)
		sp.ids = append(sp.ids, id)
		for int(id)/64 >= len(sp.has) {
			sp.has = append(sp.has, 0)
		}
		sp.has[id/64] |= 1 << (id % 64)
	}
	for _, w := range also {
		if len(w) == 1 {
			sp.alsoBytes += w
			continue
		}
		sp.alsoWords = append(sp.alsoWords, w)
		sp.alsoFirst[w[0]] = true
		if c := w[0]; c >= 'a' && c <= 'z' {
			sp.alsoFirst[c-'a'+'A'] = true
		}
	}
	return sp
}

// holdsAlso reports whether t.s[from:to] holds one of sp's "also" words
// (true when sp has none). The words are not in the keyword pass: many
// are common ("not", "cat") and would slow it for every text; a window is
// short, so it is searched directly.
func (t *text) holdsAlso(sp *keySpec, from, to int) bool {
	if len(sp.alsoWords) == 0 && sp.alsoBytes == "" {
		return true
	}
	w := t.s[from:to]
	if sp.alsoBytes != "" && strings.ContainsAny(w, sp.alsoBytes) {
		return true
	}
	for i := 0; i < len(w); i++ {
		if !sp.alsoFirst[w[i]] {
			continue
		}
		c := lowerTable[w[i]]
		for _, a := range sp.alsoWords {
			if a[0] != c || !hasPrefixFold(w[i:], a) {
				continue
			}
			if sp.alsoBound >= wordStart && i > 0 && isRegexpWord(w[i-1]) {
				continue
			}
			if sp.alsoBound == wholeWord && i+len(a) < len(w) && isRegexpWord(w[i+len(a)]) {
				continue
			}
			return true
		}
	}
	return false
}

// keyHit is one keyword found at a byte offset.
type keyHit struct {
	off int32
	key int16
}

// lowerTable folds ASCII upper case; a table lookup has no branch.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func lowerByte(c byte) byte { return lowerTable[c] }

// keyHits returns every keyword occurrence in t.s, in order of offset.
func (t *text) keyHits() []keyHit {
	if t.hitOK {
		return t.hits
	}
	t.hitOK = true
	s := t.s
	if len(s) < 2 {
		return nil
	}
	p := uint16(lowerTable[s[0]])
	sorted := true
	for i := 1; i < len(s); i++ {
		p = p<<8 | uint16(lowerTable[s[i]])
		if pairBits[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, id := range byPair[p] {
			start := i - 1 - anchor[id]
			if start >= 0 && hasPrefixFold(s[start:], allKeys[id]) {
				if n := len(t.hits); n > 0 && t.hits[n-1].off > int32(start) {
					sorted = false
				}
				t.hits = append(t.hits, keyHit{off: int32(start), key: id})
			}
		}
	}
	if !sorted {
		// Keywords are found at their anchors, not their starts.
		slices.SortStableFunc(t.hits, func(a, b keyHit) int { return int(a.off - b.off) })
	}
	return t.hits
}

// hasPrefixFold reports whether s starts with key, ASCII case folded (key
// is lower case).
func hasPrefixFold(s, key string) bool {
	if len(s) < len(key) {
		return false
	}
	for i := 0; i < len(key); i++ {
		if lowerByte(s[i]) != key[i] {
			return false
		}
	}
	return true
}

// holds reports whether id is one of sp's keywords.
func (sp *keySpec) holds(id int16) bool {
	w := int(id) / 64
	return w < len(sp.has) && sp.has[w]&(1<<(id%64)) != 0
}
