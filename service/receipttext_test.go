package service

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/store"
)

// TestReceiptTextEdges: a plain text of exactly the cap, or with spaces,
// is returned as it is, without an allocation; a space next to an escape
// is kept, a lone byte 0x80 is escaped; a cap that no whole character or escape
// fits under with the mark leaves the mark alone, and a text whose escape
// fits exactly is kept whole.
func TestReceiptTextEdges(t *testing.T) {
	long := strings.Repeat("a", MaxReceiptName)
	for _, plain := range []string{long, "deploy the app"} { // at the cap; with spaces
		if n := testing.AllocsPerRun(100, func() { ReceiptText(plain, MaxReceiptName) }); n != 0 {
			t.Errorf("ReceiptText of the plain text %.20q: %v allocations, want 0", plain, n)
		}
	}
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"\u200bab", 8, `\u200bab`}, // the escape (6 bytes) and 2: exactly 8
		{"\u200babc", 8, "…"},       // one more: no boundary before it leaves room for the mark
		{"\U0010fffd", 8, "…"},      // an escape longer than the cap
		{"ab\u200bc", 8, "ab…"},     // the escape does not fit with the mark: cut before it
		{"a b\x00", 16, `a b\x00`},  // a space is kept where other text is escaped
		{"a\x80b", 16, `a\x80b`},    // the lowest byte that is not ASCII, alone: invalid
	} {
		if got := ReceiptText(c.in, c.max); got != c.want {
			t.Errorf("ReceiptText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// plainTextBytewise is plainText as it was before it read eight bytes at
// a time: the reference the fast form is checked against.
func plainTextBytewise(s string) bool {
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

// TestPlainTextWordwise: every byte value at every position of texts of
// 1 to 24 bytes (so in the first, a middle and the last word, and in the
// tail after the words), over printable fillers at the edges of what a
// word may pass (space, ~, [, ]), gets plainText's answer byte by byte;
// and so do a few multi-byte texts.
func TestPlainTextWordwise(t *testing.T) {
	for _, fill := range []byte{' ', '~', '[', ']', 'a'} {
		for n := 1; n <= 24; n++ {
			b := bytes.Repeat([]byte{fill}, n)
			for pos := range n {
				for v := range 256 {
					b[pos] = byte(v)
					if got, want := plainText(string(b)), plainTextBytewise(string(b)); got != want {
						t.Fatalf("plainText(%q) = %v, want %v", b, got, want)
					}
				}
				b[pos] = fill
			}
		}
	}
	for _, s := range []string{"sha256:0123456789abcdef0123456789abcdef", "naïve-skill-name", "skill\u202ename-long-enough", "abcdefgh\u00a0", "abcdefg\xff", "01234567\\"} {
		if got, want := plainText(s), plainTextBytewise(s); got != want {
			t.Errorf("plainText(%q) = %v, want %v", s, got, want)
		}
	}
}

// BenchmarkSafeReceipt is the check every load's receipt goes through.
func BenchmarkSafeReceipt(b *testing.B) {
	rc := store.Receipt{Agent: "bench", Skill: "payroll-plan-5868", Action: "load", Source: "folder", Trust: "local",
		Digest: "sha256:6d1f0c6c1e2a9a5d3c4b7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3", Transport: "http", Outcome: "ok", Token: "a1b2c3d4e5f6"}
	for b.Loop() {
		r := rc
		safeReceipt(&r)
	}
}
