package safety

import (
	"testing"
	"unicode"
)

// TestIgnorableTable checks the generated table against the formula of
// DerivedCoreProperties.txt, over every code point, with Go's current
// Unicode tables: after a Go release changes them, run go generate.
func TestIgnorableTable(t *testing.T) {
	formula := func(r rune) bool {
		return unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector) &&
			!unicode.Is(unicode.White_Space, r) &&
			!(r >= 0xFFF9 && r <= 0xFFFB) &&
			!(r >= 0x13430 && r <= 0x13440) &&
			!unicode.Is(unicode.Prepended_Concatenation_Mark, r)
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := unicode.Is(defaultIgnorable, r), formula(r); got != want {
			if bad++; bad <= 10 {
				t.Errorf("%U: table %v, formula %v: run go generate ./safety", r, got, want)
			}
		}
	}
	// The code points the issue named, from the published property.
	for _, r := range []rune{0xAD, 0x34F, 0x61C, 0x115F, 0x17B4, 0x17B5, 0x180B, 0x180F, 0x200B, 0x206A, 0x206F, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0000, 0xE0100, 0xE01EF, 0xE0FFF} {
		if !unicode.Is(defaultIgnorable, r) {
			t.Errorf("%U not in the table", r)
		}
	}
	for _, r := range []rune{' ', 'a', 0x600, 0xFFF9, 0x13430, 0x1F600, 0xE000, 0x2028} {
		if unicode.Is(defaultIgnorable, r) {
			t.Errorf("%U in the table", r)
		}
	}
}

// TestHiddenClass: every default-ignorable code point, every other format
// character but the visible prepended marks, and every private-use
// character is hidden; nothing else is.
func TestHiddenClass(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(defaultIgnorable, r) || unicode.Is(unicode.Co, r) ||
			unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)
		if got := hiddenKind(r) != ""; got != want {
			t.Fatalf("%U: hidden %v, want %v", r, got, want)
		}
	}
}
