package safety

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// text is one file's bytes as a string with a lazily built line index, so
// that every rule can turn a byte offset into a line and column.
type text struct {
	s     string
	lines []int    // byte offset of each line start; built on first use
	hits  []keyHit // every rule keyword in s; built on first use
	hitOK bool
}

// find returns the matches of re in t.s[from:to], as absolute offsets.
// With keys (lower-case ASCII, one of which every match contains), re runs
// only on a window around each keyword: from up to before bytes ahead of
// it to up to after bytes past it, within its line and the next (a
// sentence may wrap once), widened to whole words (before and after 0:
// the whole of both lines). The keywords of all rules are found in one pass over the
// text (see keyHits), so a text without them costs no regular expression
// at all: regular expressions are the expensive part of Check. With also,
// a window must hold one of those words too (ASCII case folded), else the
// expression is not run on it.
func (t *text) find(re *regexp.Regexp, sp *keySpec, before, after, from, to int) [][]int {
	if sp == nil {
		ms := re.FindAllStringIndex(t.s[from:to], -1)
		for _, m := range ms {
			m[0] += from
			m[1] += from
		}
		return ms
	}
	var out [][]int
	scanned, last := from, -1
	for _, h := range t.keyHits() {
		st := int(h.off)
		if st < from || st >= to || !sp.holds(h.key) {
			continue
		}
		// The keyword's line and the next (a sentence may wrap once).
		ls := max(from, strings.LastIndexByte(t.s[:st], '\n')+1)
		le := to
		if i := strings.IndexByte(t.s[st:to], '\n'); i >= 0 {
			le = st + i
			if j := strings.IndexByte(t.s[le+1:to], '\n'); j >= 0 {
				le += 1 + j
			} else {
				le = to
			}
		}
		if before == 0 && after == 0 {
			if st < scanned {
				continue
			}
		} else {
			ws, we := max(ls, st-before), min(le, st+after)
			for ws > ls && isWordByte(t.s[ws-1]) {
				ws--
			}
			for we < le && isWordByte(t.s[we]) {
				we++
			}
			ls, le = ws, we
		}
		if !t.holdsAlso(sp, ls, le) {
			scanned = le
			continue
		}
		for _, m := range re.FindAllStringIndex(t.s[ls:le], -1) {
			if a := ls + m[0]; a > last {
				out = append(out, []int{a, ls + m[1]})
				last = a
			}
		}
		scanned = le
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// newText wraps b without copying it: Check only reads the bytes during
// the call and every message copies what it quotes, so nothing returned
// shares b's memory.
func newText(b []byte) *text { return &text{s: unsafe.String(unsafe.SliceData(b), len(b))} }

// pos returns the 1-based line and column (in characters) of byte offset
// off.
func (t *text) pos(off int) (line, col int) {
	if t.lines == nil {
		t.lines = []int{0}
		for i := 0; i < len(t.s); i++ {
			if t.s[i] == '\n' {
				t.lines = append(t.lines, i+1)
			}
		}
	}
	line = sort.Search(len(t.lines), func(i int) bool { return t.lines[i] > off })
	start := t.lines[line-1]
	return line, utf8.RuneCountInString(t.s[start:off]) + 1
}

// at formats a position for the start of a message.
func (t *text) at(off int) string {
	l, c := t.pos(off)
	return fmt.Sprintf("line %d, column %d: ", l, c)
}

// lineAt formats a line number for the start of a message.
func (t *text) lineAt(off int) string {
	l, _ := t.pos(off)
	return fmt.Sprintf("line %d: ", l)
}

// Hidden is one kind of hidden character found in a text: the first one's
// byte offset, 1-based line and column, the rune, and how many of that
// kind there are.
type Hidden struct {
	Code         string // CodeHiddenTag, CodeBidi, CodeZeroWidth, CodeVariationSelector or CodePrivateUse
	Offset       int
	Line, Column int
	Rune         rune
	Count        int
	// Decoded is what the hidden characters spell in ASCII (tag
	// characters mirror ASCII at U+E0000; smuggled variation selectors
	// are bytes): the hidden instruction itself.
	Decoded string
}

//go:generate go run ./internal/gentable

// hiddenKind classifies r as hidden text, by class rather than by a list
// of characters: every Default_Ignorable_Code_Point (the Unicode property
// of what a renderer shows as nothing; the table is generated, see
// ignorable_table.go), every other format character (Cf, such as the
// interlinear annotation controls U+FFF9–FFFB, which Unicode leaves out of
// the property only so that unsupported ones show a glyph; most renderers
// show nothing) except the prepended concatenation marks, which are
// visible, and every private-use character (no meaning a reviewer can
// see; an icon font's glyph at best). Within the class, tag characters
// (invisible ASCII), bidirectional controls ("Trojan Source"), variation
// selectors ("emoji smuggling": bytes hidden after one visible character)
// and private use get codes of their own; the rest are CodeZeroWidth. It
// returns "" for everything else. Whether an occurrence is legitimate
// (a joiner in an emoji, one variation selector after its base) is
// decided in ScanHidden, by context.
func hiddenKind(r rune) string {
	switch {
	case r < 0xAD:
		// Nothing below the soft hyphen is in the class (C0 and C1
		// controls are not format characters).
		return ""
	case r >= 0xE0000 && r <= 0xE007F:
		return CodeHiddenTag
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return CodeBidi
	case isVariationSelector(r):
		return CodeVariationSelector
	case unicode.Is(unicode.Co, r):
		return CodePrivateUse
	case unicode.Is(defaultIgnorable, r),
		unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return CodeZeroWidth
	}
	return ""
}

// isVariationSelector reports the Variation_Selector property: U+FE00–FE0F,
// U+E0100–E01EF and the Mongolian free variation selectors.
func isVariationSelector(r rune) bool { return unicode.Is(unicode.Variation_Selector, r) }

// legitimateSelector reports whether the variation selector r at s[i:] is
// doing its real job: the one selector right after a visible base it can
// vary. U+FE0E and U+FE0F (text and emoji presentation) follow any visible
// non-ASCII character or a keycap's digit, # or * (1️⃣); U+FE00–FE0D follow
// CJK ideographs, mathematical symbols and the scripts with standardized
// variants (Myanmar, Phags-pa); the ideographic selectors U+E0100–E01EF
// follow ideographs; the Mongolian ones follow Mongolian letters. A
// selector after another selector, or after an ASCII letter, carries
// nothing a reader sees: that is how bytes are smuggled after an emoji.
func legitimateSelector(s string, i int, r rune) bool {
	prev, size := utf8.DecodeLastRuneInString(s[:i])
	if size == 0 || hiddenKind(prev) != "" || unicode.IsSpace(prev) || unicode.IsControl(prev) {
		return false
	}
	switch {
	case r == 0xFE0E || r == 0xFE0F:
		return prev >= 0x80 || prev >= '0' && prev <= '9' || prev == '#' || prev == '*'
	case r >= 0xFE00 && r <= 0xFE0D:
		return unicode.In(prev, unicode.Han, unicode.Sm, unicode.Myanmar, unicode.Phags_Pa)
	case r >= 0xE0100:
		return unicode.Is(unicode.Han, prev)
	default:
		return unicode.Is(unicode.Mongolian, prev)
	}
}

// legitimateJoiner reports whether a zero-width joiner or non-joiner at
// s[i:] is doing its real job: inside an emoji sequence (👩‍💻) or between
// letters of a script that needs it (Persian, Indic scripts). Between two
// Latin letters or ASCII it is what hides a split word, and is reported.
func legitimateJoiner(s string, i, size int) bool {
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i+size:])
	joins := func(r rune) bool {
		if r < 0x300 {
			return false
		}
		return unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) ||
			(r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x1F000 && r <= 0x1FAFF) ||
			(unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) && !unicode.Is(unicode.Cyrillic, r) && !unicode.Is(unicode.Greek, r))
	}
	return joins(prev) || joins(next)
}

// tagFlag reports whether the tag characters at s[i:] are an emoji flag
// sequence (🏴 U+1F3F4, then tag letters or digits, then CANCEL TAG
// U+E007F), the one legitimate use of tag characters. It returns the
// sequence's length in bytes.
func tagFlag(s string, i int) (int, bool) {
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	if prev != 0x1F3F4 {
		return 0, false
	}
	j, n := i, 0
	for j < len(s) && n <= 8 {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		switch {
		case r == 0xE007F:
			return j - i, n >= 2
		case r >= 0xE0030 && r <= 0xE0039, r >= 0xE0061 && r <= 0xE007A:
			n++
		default:
			return 0, false
		}
	}
	return 0, false
}

// ScanHidden finds the hidden characters in s, one Hidden per kind (the
// first occurrence, with the count), in the order the kinds first appear.
// A byte order mark at offset 0 is allowed. Work is one pass over s; ASCII
// bytes are skipped without decoding.
func ScanHidden(s string) []Hidden {
	var out []Hidden
	idx := map[string]int{}
	var t *text
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			// Skip ASCII eight bytes at a time: most texts are all ASCII,
			// and no hidden character is.
			for i+8 <= len(s) && binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))&0x8080808080808080 == 0 {
				i += 8
			}
			for i < len(s) && s[i] < utf8.RuneSelf {
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		kind := hiddenKind(r)
		switch {
		case kind == "":
		case r == 0xFEFF && i == 0:
			kind = ""
		case (r == 0x200C || r == 0x200D) && legitimateJoiner(s, i, size):
			kind = ""
		case kind == CodeVariationSelector && legitimateSelector(s, i, r):
			kind = ""
		case kind == CodeHiddenTag:
			if n, ok := tagFlag(s, i); ok {
				i += n
				continue
			}
		}
		if kind == "" {
			i += size
			continue
		}
		k, seen := idx[kind]
		if !seen {
			if t == nil {
				t = &text{s: s}
			}
			line, col := t.pos(i)
			idx[kind] = len(out)
			out = append(out, Hidden{Code: kind, Offset: i, Line: line, Column: col, Rune: r})
			k = len(out) - 1
		}
		out[k].Count++
		if len(out[k].Decoded) < 200 {
			if a := decodeHidden(kind, r); a != 0 {
				out[k].Decoded += string(a)
			}
		}
		i += size
	}
	return out
}

// decodeHidden returns the printable ASCII character a hidden rune
// stands for, or 0: tag characters mirror ASCII at U+E0000, and emoji
// smuggling writes byte b as U+FE00+b (b < 16) or U+E0100+b-16.
func decodeHidden(kind string, r rune) rune {
	var a rune
	switch {
	case kind == CodeHiddenTag:
		a = r - 0xE0000
	case kind == CodeVariationSelector && r >= 0xFE00 && r <= 0xFE0F:
		a = r - 0xFE00
	case kind == CodeVariationSelector && r >= 0xE0100:
		a = r - 0xE0100 + 16
	}
	if a >= 0x20 && a < 0x7F {
		return a
	}
	return 0
}

var hiddenWhat = map[string]string{
	CodeHiddenTag:         "Unicode tag character",
	CodeBidi:              "bidirectional control",
	CodeZeroWidth:         "invisible character",
	CodeVariationSelector: "variation selector that varies nothing",
	CodePrivateUse:        "private-use character",
}

var decodedWhat = map[string]string{
	CodeHiddenTag:         "the tag characters spell",
	CodeVariationSelector: "the selectors, read as bytes, spell",
}

// hidden reports the hidden characters of one text.
func (c *checker) hidden(path string, t *text) {
	for _, h := range ScanHidden(t.s) {
		var b strings.Builder
		fmt.Fprintf(&b, "line %d, column %d: %s %U", h.Line, h.Column, hiddenWhat[h.Code], h.Rune)
		if n := runeName(h.Rune); n != "" {
			fmt.Fprintf(&b, " (%s)", n)
		}
		if h.Count > 1 {
			fmt.Fprintf(&b, ", %d in this file", h.Count)
		}
		if h.Decoded != "" && decodedWhat[h.Code] != "" {
			fmt.Fprintf(&b, "; %s %q", decodedWhat[h.Code], clip(redactSecrets(h.Decoded), 80))
		}
		b.WriteString(": it is invisible in an editor and a preview but the model reads it; remove it (or allow it in the policy with a reason)")
		c.add(h.Code, path, b.String())
	}
}

var runeNames = map[rune]string{
	0xad: "SOFT HYPHEN", 0x034f: "COMBINING GRAPHEME JOINER", 0x061c: "ARABIC LETTER MARK", 0x180e: "MONGOLIAN VOWEL SEPARATOR",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK",
	0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES", 0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0xfeff: "ZERO WIDTH NO-BREAK SPACE",
	0x115f: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER", 0x3164: "HANGUL FILLER", 0xffa0: "HALFWIDTH HANGUL FILLER",
}

func runeName(r rune) string {
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return "TAG"
	case r >= 0xFE00 && r <= 0xFE0F:
		return "VARIATION SELECTOR-" + itoa(int(r-0xFE00+1))
	case r >= 0xE0100 && r <= 0xE01EF:
		return "VARIATION SELECTOR-" + itoa(int(r-0xE0100+17))
	case unicode.Is(unicode.Co, r):
		return "PRIVATE USE"
	}
	return runeNames[r]
}

// clip shortens s to n characters, with an ellipsis, and shows invisible
// and control characters as escapes.
func clip(s string, n int) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == n {
			b.WriteString("…")
			break
		}
		i++
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case hiddenKind(r) != "" || unicode.IsControl(r):
			fmt.Fprintf(&b, "<%U>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
