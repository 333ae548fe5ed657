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
	// byPair lists the keywords starting with each byte pair, by id.
	byPair [1 << 16][]int16
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
	for _, r := range injectionRules {
		registerKeys(r.keys...)
	}
	for _, r := range scriptRules {
		registerKeys(r.keys...)
	}
	for _, r := range secretRules {
		registerKeys(r.keys...)
	}
	registerKeys(pathRefKeys...)
	registerKeys("](", "]:")
}

// keyHit is one keyword found at a byte offset.
type keyHit struct {
	off int32
	key int16
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

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
	prev := lowerByte(s[0])
	for i := 1; i < len(s); i++ {
		c := lowerByte(s[i])
		ids := byPair[uint16(prev)<<8|uint16(c)]
		prev = c
		if ids == nil {
			continue
		}
		start := i - 1
		for _, id := range ids {
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
