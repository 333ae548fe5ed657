package testutil

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
)

// Smuggle hides s after the visible text base as variation selectors, the
// way "emoji smuggling" does: byte b as U+FE00+b (b < 16) or U+E0100+b-16.
// Shared by the safety evasion corpus and the attack suite.
func Smuggle(base, s string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, c := range []byte(s) {
		if c < 16 {
			b.WriteRune(0xFE00 + rune(c))
		} else {
			b.WriteRune(0xE0100 + rune(c) - 16)
		}
	}
	return b.String()
}

// UTF16LE encodes s as UTF-16 little-endian, with a byte order mark when
// bom is set.
func UTF16LE(s string, bom bool) string {
	var out []byte
	if bom {
		out = append(out, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return string(out)
}
