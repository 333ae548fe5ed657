package safety

import "strings"

// The rules' keywords are found in one pass over a text: every rule names
// lower-case ASCII keywords one of which each of its matches contains, and
// its regular expression runs only near them (text.find). The pass looks
// up each pair of bytes (ASCII case folded) in a table of the keywords'
// first two bytes and compares the rest only there.

var (
	allKeys []string
	keyIDs  = map[string]int16{}
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
		p := uint16(k[0])<<8 | uint16(k[1])
		byPair[p] = append(byPair[p], id)
		pairBits[p/64] |= 1 << (p % 64)
	}
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
	}
	for i := range scriptRules {
		scriptRules[i].spec = newSpec(scriptRules[i].keys, scriptRules[i].also)
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
	alsoWords []string
	alsoBytes string
}

func newSpec(keys, also []string) *keySpec {
	registerKeys(keys...)
	sp := &keySpec{}
	for _, k := range keys {
		sp.ids = append(sp.ids, keyID(k))
	}
	for _, w := range also {
		if len(w) == 1 {
			sp.alsoBytes += w
			continue
		}
		sp.alsoWords = append(sp.alsoWords, w)
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
		c := lowerTable[w[i]]
		for _, a := range sp.alsoWords {
			if a[0] == c && hasPrefixFold(w[i:], a) {
				return true
			}
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
	for i := 1; i < len(s); i++ {
		p = p<<8 | uint16(lowerTable[s[i]])
		if pairBits[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		start := i - 1
		for _, id := range byPair[p] {
			if hasPrefixFold(s[start:], allKeys[id]) {
				t.hits = append(t.hits, keyHit{off: int32(start), key: id})
			}
		}
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
