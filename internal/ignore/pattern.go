package ignore

import (
	"math/bits"
	"strings"
)

// pattern is one compiled line of an ignore file.
type pattern struct {
	text     string // the line as written (after trimming), for Explain
	line     int
	neg      bool // "!pattern"
	dirOnly  bool // "pattern/"
	anchored bool // contains a "/": matched against the path below the file's directory
	never    bool // malformed (e.g. an unterminated "[" class): matches nothing

	kind   matchKind
	lit    string  // kindLiteral: the whole pattern; kindSuffix: the suffix; kindGlob: literal prefix
	tokens []token // kindGlob: the pattern after lit
	tail   string  // kindGlob: literal bytes the pattern must end with, a cheap first test
}

type matchKind uint8

const (
	kindLiteral matchKind = iota // no wildcards: exact comparison
	kindSuffix                   // "*literal" on a base name
	kindGlob                     // anything else
)

type tokenKind uint8

const (
	tokLit      tokenKind = iota // one literal byte
	tokAny                       // "?": one byte other than "/"
	tokClass                     // "[...]": one byte of a set, never "/"
	tokStar                      // "*": any run of bytes without "/"
	tokStarStar                  // "**" at a segment boundary: any run of bytes
	tokSkip                      // matches nothing; may jump 3 tokens ahead (see "**/")
)

type token struct {
	kind tokenKind
	b    byte
	set  *byteSet
}

type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
}

func isSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// compile parses one trimmed, non-comment line. It reports false for lines
// that hold no pattern.
func compile(line string) (pattern, bool) {
	p := pattern{text: line}
	s := line
	if strings.HasPrefix(s, "!") {
		p.neg = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" {
		return p, false
	}
	if strings.IndexByte(s, '/') >= 0 {
		p.anchored = true
		s = strings.TrimPrefix(s, "/")
	}
	first := strings.IndexFunc(s, func(r rune) bool { return r < 0x80 && isSpecial(byte(r)) })
	switch {
	case first < 0:
		p.kind = kindLiteral
		p.lit = s
		return p, true
	case !p.anchored && first == 0 && s[0] == '*' && !strings.ContainsAny(s[1:], "*?[\\"):
		p.kind = kindSuffix
		p.lit = s[1:]
		return p, true
	}
	p.kind = kindGlob
	p.lit = s[:first]
	toks, ok := tokenize(s, first, p.anchored)
	if !ok {
		p.never = true
	}
	p.tokens = toks
	k := len(toks)
	// (The "/" of a "**/" does not count: "**/" may match nothing.)
	for k > 0 && toks[k-1].kind == tokLit && !(k >= 3 && toks[k-3].kind == tokSkip) {
		k--
	}
	tail := make([]byte, 0, len(toks)-k)
	for _, t := range toks[k:] {
		tail = append(tail, t.b)
	}
	p.tail = string(tail)
	return p, true
}

// tokenize compiles s[from:], where s[:from] is a literal prefix.
func tokenize(s string, from int, anchored bool) ([]token, bool) {
	var toks []token
	// A "**" is special only right after a "/" or at the start of the
	// pattern. Git compares an anchored pattern's literal prefix separately
	// and globs the rest as a pattern of its own, so there the end of the
	// literal prefix counts as a start too; this mirrors that.
	atBoundary := func(i int) bool {
		return i == 0 || s[i-1] == '/' || (anchored && i == from)
	}
	for i := from; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 >= len(s) {
				return nil, false // a trailing backslash matches nothing
			}
			toks = append(toks, token{kind: tokLit, b: s[i+1]})
			i += 2
		case '?':
			toks = append(toks, token{kind: tokAny})
			i++
		case '*':
			j := i
			for j < len(s) && s[j] == '*' {
				j++
			}
			if j-i >= 2 && atBoundary(i) {
				switch {
				case j == len(s):
					toks = append(toks, token{kind: tokStarStar})
					i = j
					continue
				case s[j] == '/':
					// "**/" matches "" or any run ending in "/".
					toks = append(toks, token{kind: tokSkip}, token{kind: tokStarStar}, token{kind: tokLit, b: '/'})
					i = j + 1
					continue
				case s[j] == '\\' && j+1 < len(s) && s[j+1] == '/':
					toks = append(toks, token{kind: tokStarStar})
					i = j
					continue
				}
			}
			toks = append(toks, token{kind: tokStar})
			i = j
		case '[':
			set, n, ok := parseClass(s[i:])
			if !ok {
				return nil, false
			}
			toks = append(toks, token{kind: tokClass, set: set})
			i += n
		default:
			toks = append(toks, token{kind: tokLit, b: c})
			i++
		}
	}
	return toks, true
}

// parseClass parses the bracket expression at the start of s and returns the
// set of bytes it matches and its length.
func parseClass(s string) (*byteSet, int, bool) {
	var set byteSet
	i := 1
	neg := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		neg = true
		i++
	}
	prev := -1 // previous member, a possible range start
	for first := true; ; first = false {
		if i >= len(s) {
			return nil, 0, false
		}
		c := s[i]
		if c == ']' && !first {
			i++
			break
		}
		switch {
		case c == '\\':
			i++
			if i >= len(s) {
				return nil, 0, false
			}
			set.add(s[i])
			prev = int(s[i])
			i++
		case c == '-' && prev >= 0 && i+1 < len(s) && s[i+1] != ']':
			i++
			hi := s[i]
			if hi == '\\' {
				i++
				if i >= len(s) {
					return nil, 0, false
				}
				hi = s[i]
			}
			if byte(prev) <= hi {
				set.addRange(byte(prev), hi)
			}
			prev = -1
			i++
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.IndexByte(s[i+2:], ']')
			if end < 0 {
				return nil, 0, false
			}
			name := s[i+2 : i+2+end]
			if !strings.HasSuffix(name, ":") {
				// Not a "[:name:]": the "[" is an ordinary member.
				set.add('[')
				prev = '['
				i++
				continue
			}
			if !addNamedClass(&set, name[:len(name)-1]) {
				return nil, 0, false
			}
			prev = -1
			i += 2 + end + 1
		default:
			set.add(c)
			prev = int(c)
			i++
		}
	}
	if neg {
		for k := range set {
			set[k] = ^set[k]
		}
	}
	set[0] &^= 1 << '/' // a class never matches a slash
	return &set, i, true
}

func addNamedClass(set *byteSet, name string) bool {
	var in func(c byte) bool
	switch name {
	case "alnum":
		in = func(c byte) bool { return isAlpha(c) || isDigit(c) }
	case "alpha":
		in = isAlpha
	case "blank":
		in = func(c byte) bool { return c == ' ' || c == '\t' }
	case "cntrl":
		in = func(c byte) bool { return c < 0x20 || c == 0x7f }
	case "digit":
		in = isDigit
	case "graph":
		in = func(c byte) bool { return c > 0x20 && c < 0x7f }
	case "lower":
		in = func(c byte) bool { return c >= 'a' && c <= 'z' }
	case "print":
		in = func(c byte) bool { return c >= 0x20 && c < 0x7f }
	case "punct":
		in = func(c byte) bool { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) }
	case "space":
		in = func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	case "upper":
		in = func(c byte) bool { return c >= 'A' && c <= 'Z' }
	case "xdigit":
		in = func(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
	default:
		return false
	}
	for c := 0; c < 0x80; c++ {
		if in(byte(c)) {
			set.add(byte(c))
		}
	}
	return true
}

func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// match reports whether name (a base name, or for anchored patterns the
// path below the ignore file's directory) matches the pattern.
func (p *pattern) match(name string) bool {
	switch p.kind {
	case kindLiteral:
		return name == p.lit
	case kindSuffix:
		return strings.HasSuffix(name, p.lit)
	}
	if p.never || !strings.HasPrefix(name, p.lit) || !strings.HasSuffix(name[len(p.lit):], p.tail) {
		return false
	}
	if len(p.tokens) < 64 {
		return matchSmall(p.tokens, name[len(p.lit):])
	}
	return matchTokens(p.tokens, name[len(p.lit):])
}

// matchSmall is matchTokens for fewer than 64 tokens, with the states in
// one word.
func matchSmall(toks []token, s string) bool {
	var stars, skips uint64 // states with empty transitions
	for k, t := range toks {
		switch t.kind {
		case tokStar, tokStarStar:
			stars |= 1 << k
		case tokSkip:
			skips |= 1 << k
		}
	}
	closure := func(v uint64) uint64 {
		// Empty transitions only go forward, so one pass in order suffices.
		for w := v & (stars | skips); w != 0; {
			k := bits.TrailingZeros64(w)
			w &= w - 1
			v |= 1 << (k + 1)
			if skips&(1<<k) != 0 {
				v |= 1 << (k + 3)
			}
			w |= v & (stars | skips) &^ (1<<(k+1) - 1)
		}
		return v
	}
	accept := uint64(1) << len(toks)
	cur := closure(1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		var next uint64
		for w := cur &^ accept; w != 0; w &= w - 1 {
			k := bits.TrailingZeros64(w)
			t := &toks[k]
			switch t.kind {
			case tokLit:
				if c == t.b {
					next |= 1 << (k + 1)
				}
			case tokAny:
				if c != '/' {
					next |= 1 << (k + 1)
				}
			case tokClass:
				if t.set.has(c) {
					next |= 1 << (k + 1)
				}
			case tokStar:
				if c != '/' {
					next |= 1 << k
				}
			case tokStarStar:
				next |= 1 << k
			}
		}
		if next == 0 {
			return false
		}
		cur = closure(next)
	}
	return cur&accept != 0
}

// matchTokens runs the tokens as a nondeterministic automaton over s, so
// the cost is bounded by len(tokens)*len(s) whatever the pattern.
// State k means "tokens[:k] have matched"; state len(tokens) accepts.
func matchTokens(toks []token, s string) bool {
	n := len(toks) + 1
	words := (n + 63) / 64
	var buf [4]uint64
	var cur, next []uint64
	if 2*words <= len(buf) {
		cur, next = buf[:words], buf[words:2*words]
	} else {
		b := make([]uint64, 2*words)
		cur, next = b[:words], b[words:]
	}
	set := func(v []uint64, k int) { v[k>>6] |= 1 << (k & 63) }
	has := func(v []uint64, k int) bool { return v[k>>6]&(1<<(k&63)) != 0 }
	// closure follows the empty transitions: every star may match nothing,
	// and a tokSkip may skip the "**" and "/" that follow it.
	closure := func(v []uint64) {
		for k, t := range toks {
			if !has(v, k) {
				continue
			}
			switch t.kind {
			case tokStar, tokStarStar:
				set(v, k+1)
			case tokSkip:
				set(v, k+1)
				set(v, k+3)
			}
		}
	}
	set(cur, 0)
	closure(cur)
	for i := 0; i < len(s); i++ {
		c := s[i]
		clear(next)
		alive := false
		for k, t := range toks {
			if !has(cur, k) {
				continue
			}
			alive = true
			switch t.kind {
			case tokLit:
				if c == t.b {
					set(next, k+1)
				}
			case tokAny:
				if c != '/' {
					set(next, k+1)
				}
			case tokClass:
				if t.set.has(c) {
					set(next, k+1)
				}
			case tokStar:
				if c != '/' {
					set(next, k)
				}
			case tokStarStar:
				set(next, k)
			}
		}
		if !alive {
			return false
		}
		closure(next)
		cur, next = next, cur
	}
	return has(cur, len(toks))
}
