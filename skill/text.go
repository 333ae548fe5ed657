package skill

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// CodeControlChar refuses (at write time) or reports (lenient loading) a
// control character in SKILL.md or in a frontmatter field. Control
// characters reach terminals, logs and the envelopes agents read, and the
// stores disagree about some of them (PostgreSQL refuses NUL in text), so
// the write gate refuses them for every store alike.
const CodeControlChar = "control-char"

// isControl reports whether r is a control character (C0, DEL or C1),
// other than the tab and line breaks that multi-line text may hold when
// breaks is true.
func isControl(r rune, breaks bool) bool {
	if breaks && (r == '\t' || r == '\n' || r == '\r') {
		return false
	}
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.Is(unicode.Cc, r)
}

// isInvisible reports whether r is an invisible formatting character:
// bidirectional controls (U+202A–U+202E, U+2066–U+2069, marks), zero-width
// characters, the byte order mark, soft hyphens and the other characters
// of Unicode's Cf category, and the line and paragraph separators.
func isInvisible(r rune) bool {
	return r >= 0xad && (r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r))
}

// firstControl returns the 1-based character position and the rune of the
// first control character in s (see isControl), and how many there are in
// all; pos is 0 when there is none.
func firstControl(s string, breaks bool) (pos int, r rune, count int) {
	i := 0
	for _, c := range s {
		i++
		if isControl(c, breaks) {
			if count == 0 {
				pos, r = i, c
			}
			count++
		}
	}
	return pos, r, count
}

var runeNames = map[rune]string{
	0x00: "NUL", 0x07: "BEL", 0x08: "BACKSPACE", 0x09: "TAB", 0x0a: "LINE FEED", 0x0b: "VERTICAL TAB",
	0x0c: "FORM FEED", 0x0d: "CARRIAGE RETURN", 0x1b: "ESC", 0x7f: "DEL", 0x85: "NEXT LINE", 0x9b: "CSI",
	0xad: "SOFT HYPHEN", 0x061c: "ARABIC LETTER MARK", 0x180e: "MONGOLIAN VOWEL SEPARATOR",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK",
	0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
	0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
	0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0xfeff: "BYTE ORDER MARK",
}

// describeRune writes r for a message: "U+001B (ESC)".
func describeRune(r rune) string {
	if n, ok := runeNames[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}

// textProblems finds control characters in parsed frontmatter: in keys
// (none allowed) and in values (tabs and line breaks allowed, since block
// scalars hold them). Each problem names the field, as a path such as
// "metadata.author" or "tags[2]", and the character position.
func textProblems(raw Fields, sev Severity) []Diagnostic {
	if !anyControl(raw) {
		return nil // the common case, without building a field name
	}
	var out []Diagnostic
	var walk func(field string, v any)
	report := func(field, what string, pos int, r rune, count int) {
		msg := fmt.Sprintf("%s: character %d of the %s is the control character %s", field, pos, what, describeRune(r))
		if count > 1 {
			msg += fmt.Sprintf(" (and %d more)", count-1)
		}
		msg += "; remove it: frontmatter text may hold tabs and line breaks but no other control characters"
		out = append(out, Diagnostic{Severity: sev, Code: CodeControlChar, Field: field, Message: msg})
	}
	walk = func(field string, v any) {
		switch v := v.(type) {
		case string:
			if pos, r, n := firstControl(v, true); n > 0 {
				report(field, "value", pos, r, n)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", field, i), c)
			}
		case Fields:
			for _, kv := range v {
				name := kv.Key
				if field != "" {
					name = field + "." + kv.Key
				}
				if pos, r, n := firstControl(kv.Key, false); n > 0 {
					report(fmt.Sprintf("%s%q", field, kv.Key), "key", pos, r, n)
					continue
				}
				walk(name, kv.Value)
			}
		}
	}
	walk("", raw)
	return out
}

// anyControl reports whether a frontmatter value holds a control
// character where textProblems would report one.
func anyControl(v any) bool {
	switch v := v.(type) {
	case string:
		_, _, n := firstControl(v, true)
		return n > 0
	case []any:
		for _, c := range v {
			if anyControl(c) {
				return true
			}
		}
	case Fields:
		for _, kv := range v {
			if _, _, n := firstControl(kv.Key, false); n > 0 || anyControl(kv.Value) {
				return true
			}
		}
	}
	return false
}

// contentControl finds the first control character in SKILL.md's text
// other than tab and line breaks, and returns a refusal naming its line and
// column, or nil. Bytes that are not UTF-8 are left to other checks.
func contentControl(content []byte) *Diagnostic {
	line, col, count := 1, 0, 0
	var first Diagnostic
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRune(content[i:])
		i += size
		col++
		if r == '\n' {
			line, col = line+1, 0
			continue
		}
		if r == utf8.RuneError && size == 1 || !isControl(r, true) {
			continue
		}
		if count == 0 {
			first = Diagnostic{Severity: Error, Code: CodeControlChar, Field: "content", Path: "SKILL.md",
				Message: fmt.Sprintf("SKILL.md line %d, column %d: the control character %s", line, col, describeRune(r))}
		}
		count++
	}
	if count == 0 {
		return nil
	}
	if count > 1 {
		first.Message += fmt.Sprintf(" (and %d more)", count-1)
	}
	first.Message += "; remove it: SKILL.md may hold tabs and line breaks but no other control characters"
	return &first
}
