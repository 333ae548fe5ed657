package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termText is s as the CLI prints it to a person: control characters
// (C0 but for tab, DEL, C1, and newline: one item is one line), the
// bidirectional controls and invalid UTF-8 are shown as Go escapes
// (\x1b, \u202e), so a file or skill name cannot send ESC and OSC
// sequences to the terminal or pass for other text. Everything printed
// from outside (names, paths, provenance, errors quoting them) goes
// through it; JSON output is escaped by its encoder instead.
func termText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case escaped(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func escaped(r rune) bool {
	return r != '\t' && unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || escaped(r) {
			return true
		}
	}
	return false
}
