package service

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/store"
)

// Receipts keep at most this many bytes of each text field: the path and
// origin MaxReceiptPath, the others (the asked name above all: an unknown
// name can be any length) MaxReceiptName. Each receipt is stored.
const (
	MaxReceiptName = 256
	MaxReceiptPath = 1024
)

// ReceiptText is the one function every text of a receipt goes through
// before the receipt is kept, so that what a caller asked for (a name or
// path of any bytes) is stored as it was asked, readably, by every engine
// (PostgreSQL refuses a NUL byte and invalid UTF-8 in text), and printed
// without reaching a terminal's controls:
//
//   - a byte that is not part of valid UTF-8 becomes \xHH (lower-case hex;
//     always 80 to ff, so never confused with a character);
//   - an ASCII control character (NUL to US, and DEL) becomes \xHH;
//   - any other character that is not printable (C1 controls, bidirectional
//     and zero-width formatting characters, line and paragraph separators,
//     spaces other than U+0020, unassigned code points) becomes \uHHHH or
//     \UHHHHHHHH;
//   - a backslash becomes \\, so that every escape reads back one way;
//   - everything else is kept as is. A text that needs none of this, and
//     is within max bytes, is returned unchanged (and costs nothing).
//
// The result is at most max bytes (max at least 8): a longer one is cut
// after the last whole character or escape that leaves room for "…", which
// marks the cut.
func ReceiptText(s string, max int) string {
	if len(s) <= max && plainText(s) {
		return s
	}
	const mark = "…"
	var b strings.Builder
	b.Grow(min(len(s), max) + 8)
	cut := -1 // b.Len() at the last token boundary that leaves room for mark
	var buf [10]byte
	for i := 0; i < len(s); {
		var tok []byte
		c := s[i]
		n := 1
		switch {
		case c == '\\':
			tok = append(buf[:0], '\\', '\\')
		case c < utf8.RuneSelf && (c < 0x20 || c == 0x7f):
			tok = hexEscape(buf[:0], 'x', uint32(c), 2)
		case c < utf8.RuneSelf:
			tok = append(buf[:0], c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			n = size
			switch {
			case r == utf8.RuneError && size == 1:
				tok = hexEscape(buf[:0], 'x', uint32(c), 2)
			case unicode.IsPrint(r):
				tok = append(buf[:0], s[i:i+size]...)
			case r < 0x10000:
				tok = hexEscape(buf[:0], 'u', uint32(r), 4)
			default:
				tok = hexEscape(buf[:0], 'U', uint32(r), 8)
			}
		}
		if b.Len()+len(tok) > max {
			// Too long: cut at the last boundary with room for the mark.
			out := b.String()
			if cut < 0 {
				cut = 0
			}
			return out[:cut] + mark
		}
		b.Write(tok)
		if b.Len() <= max-len(mark) {
			cut = b.Len()
		}
		i += n
	}
	return b.String()
}

// plainText reports whether s is valid UTF-8 of printable characters
// without a backslash: ReceiptText keeps it as it is.
func plainText(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}

func hexEscape(dst []byte, kind byte, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '\\', kind)
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		dst = append(dst, hex[v>>uint(shift)&0xf])
	}
	return dst
}

// safeReceipt puts every text field of r through ReceiptText.
func safeReceipt(r *store.Receipt) {
	for _, f := range [...]struct {
		p   *string
		max int
	}{
		{&r.Agent, MaxReceiptName}, {&r.Skill, MaxReceiptName}, {&r.Action, MaxReceiptName}, {&r.Path, MaxReceiptPath},
		{&r.Source, MaxReceiptName}, {&r.Plugin, MaxReceiptName}, {&r.Trust, MaxReceiptName}, {&r.Digest, MaxReceiptName},
		{&r.Transport, MaxReceiptName}, {&r.Outcome, MaxReceiptName}, {&r.Token, MaxReceiptName}, {&r.Code, MaxReceiptName},
		{&r.Origin, MaxReceiptPath},
	} {
		*f.p = ReceiptText(*f.p, f.max)
	}
}
