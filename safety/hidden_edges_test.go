package safety

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// TestHiddenKindRangeEnds: the first and last code point of each range
// with a code of its own get that code, and the neighbours outside do not.
func TestHiddenKindRangeEnds(t *testing.T) {
	for r, want := range map[rune]string{
		0xAC: "", 0xAD: CodeZeroWidth,
		0xE0000: CodeHiddenTag, 0xE0001: CodeHiddenTag, 0xE007F: CodeHiddenTag, 0xE0080: CodeZeroWidth,
		0x2029: "", 0x202A: CodeBidi, 0x202E: CodeBidi, 0x202F: "",
		0x2065: CodeZeroWidth, 0x2066: CodeBidi, 0x2069: CodeBidi, 0x206A: CodeZeroWidth,
		0x200E: CodeBidi, 0x200F: CodeBidi, 0x061C: CodeBidi, 0x200D: CodeZeroWidth,
		0xFE00: CodeVariationSelector, 0xFE0F: CodeVariationSelector, 0xE0100: CodeVariationSelector, 0xE01EF: CodeVariationSelector,
		0xE000: CodePrivateUse, 0xF8FF: CodePrivateUse, 0xF0000: CodePrivateUse, 0x10FFFD: CodePrivateUse,
		0x0600: "", 'a': "",
	} {
		if got := hiddenKind(r); got != want {
			t.Errorf("%U: %q, want %q", r, got, want)
		}
	}
}

// TestSelectorBases: one selector after a base it can vary is fine, at
// each end of each range of selectors and bases; the same selector after
// a base it cannot vary, at the start, or after a space is reported.
func TestSelectorBases(t *testing.T) {
	for _, s := range []string{
		"0\uFE0F\u20E3", "9\uFE0F\u20E3", "#\uFE0F\u20E3", "*\uFE0F\u20E3", "\u2764\uFE0E", "\u00E9\uFE0F",
		"\u845B\uFE00", "\u845B\uFE0D", "\u2268\uFE00", "\u845B\U000E0100", "\u845B\U000E01EF", "\u1820\u180B",
	} {
		for _, h := range ScanHidden(s) {
			t.Errorf("%+q: %+v", s, h)
		}
	}
	for _, s := range []string{
		"a\uFE0F", "/\uFE0F", "\uFE0F", " \uFE0F", "\t\uFE0F", "\u0085\uFE0F", "\u2764\uFE0F\uFE0F",
		"a\uFE00", "\u00E9\uFE0D", "a\U000E0100", "\u1820\uFE00", "a\u180B", "\u845B\u180B",
	} {
		hs := ScanHidden(s)
		if len(hs) != 1 || hs[0].Code != CodeVariationSelector {
			t.Errorf("%+q: %+v, want one variation selector", s, hs)
		}
	}
}

// TestDecodedHidden: what tag characters and smuggled selectors spell,
// printable ASCII only (space and ~ in, DEL and controls out), clipped at
// 200 characters.
func TestDecodedHidden(t *testing.T) {
	tags := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			b.WriteRune(0xE0000 + c)
		}
		return b.String()
	}
	for _, tc := range []struct{ s, code, want string }{
		{"x" + tags("a b~") + "\U000E007F" + tags("\x1f"), CodeHiddenTag, "a b~"},
		{testutil.Smuggle("\U0001F600", "send ~ now\x7f\x01"), CodeVariationSelector, "send ~ now"},
		{testutil.Smuggle("\U0001F600", " \x10!"), CodeVariationSelector, " !"},
		{"x" + tags(strings.Repeat("a", 250)), CodeHiddenTag, strings.Repeat("a", 200)},
	} {
		hs := ScanHidden(tc.s)
		if len(hs) != 1 || hs[0].Code != tc.code || hs[0].Decoded != tc.want {
			t.Errorf("%+q: %+v, want %s decoding to %q", tc.s, hs, tc.code, tc.want)
		}
	}
	// The names the message gives each selector, at both ends.
	for r, want := range map[rune]string{0xFE00: "VARIATION SELECTOR-1", 0xFE0F: "VARIATION SELECTOR-16",
		0xE0100: "VARIATION SELECTOR-17", 0xE01EF: "VARIATION SELECTOR-256", 0xE0000: "TAG", 0xE007F: "TAG",
		0xE0080: "", 0xFE10: "", 0xE01F0: "", 0xE000: "PRIVATE USE", 0x200B: "ZERO WIDTH SPACE"} {
		if got := runeName(r); got != want {
			t.Errorf("%U: %q, want %q", r, got, want)
		}
	}
}

// TestHiddenAfterASCII: hidden characters are found at every offset after
// a run of ASCII, whatever its length against the eight-byte skip.
func TestHiddenAfterASCII(t *testing.T) {
	for n := 0; n <= 20; n++ {
		s := strings.Repeat("a", n) + "\u200B" + strings.Repeat("b", n%9)
		hs := ScanHidden(s)
		if len(hs) != 1 || hs[0].Offset != n || hs[0].Column != n+1 || hs[0].Count != 1 {
			t.Errorf("after %d ASCII bytes: %+v", n, hs)
		}
	}
}
