package safety_test

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// utf16Findings checks data as references/n.txt and reports whether the
// tag characters in it were found (only when it is read as UTF-16).
func utf16Tagged(data []byte) bool {
	in := input("x", "See references/n.txt.\n", skill.BundleFile{Path: "references/n.txt", Data: data})
	return find(safety.Check(in, nil), safety.CodeHiddenTag) != nil
}

func encode16(s string, big bool) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if big {
			out = binary.BigEndian.AppendUint16(out, u)
		} else {
			out = binary.LittleEndian.AppendUint16(out, u)
		}
	}
	return out
}

// TestUTF16Shape: without a byte order mark, UTF-16 is known by its
// shape in the first 512 bytes: at least 90% of the high bytes NUL or a
// surrogate's, at least one in eight NUL, at most one low byte in twenty
// NUL. Each bound at its limit and one past it, in both byte orders.
func TestUTF16Shape(t *testing.T) {
	rep := func(s string, n int) string {
		out := ""
		for range n {
			out += s
		}
		return out
	}
	tag := "\U000E0041"  // two units, high bytes DB and DC
	wide := "\U000103FF" // two units, high bytes D8 and DF: the surrogate range's ends
	cjk := "\u4E2D"      // high byte neither NUL nor a surrogate's
	lowNUL := "\u0100"   // low byte NUL
	for _, tc := range []struct {
		name string
		text string // 20 units (40 bytes) unless named
		want bool
	}{
		{"NUL high 3 of 24: exactly one in eight", rep("a", 3) + rep(tag, 10) + cjk, true},
		{"high 18 of 20", rep("a", 4) + rep(tag, 7) + rep(cjk, 2), true},
		{"high 17 of 20", rep("a", 5) + rep(tag, 6) + rep(cjk, 3), false},
		{"high 18 with the surrogate range's ends", rep("a", 4) + rep(tag, 6) + wide + rep(cjk, 2), true},
		{"NUL high 3 of 20", rep("a", 3) + rep(tag, 8) + rep(cjk, 1), true},
		{"NUL high 2 of 20", rep("a", 2) + rep(tag, 8) + rep(cjk, 2), false},
		{"NUL low 1 of 20", rep("a", 4) + rep(tag, 7) + lowNUL + cjk, true},
		{"NUL low 2 of 20", rep("a", 4) + rep(tag, 7) + rep(lowNUL, 2), false},
	} {
		for _, big := range []bool{false, true} {
			data := encode16(tc.text, big)
			if len(data) != 40 && len(data) != 48 {
				t.Fatalf("%s: %d bytes", tc.name, len(data))
			}
			if got := utf16Tagged(data); got != tc.want {
				t.Errorf("%s (big endian %v): read as UTF-16 %v, want %v", tc.name, big, got, tc.want)
			}
		}
	}
}

// TestUTF16Short: a byte order mark and one character (4 bytes) is
// UTF-16; fewer bytes are not read as it (and do not fail).
func TestUTF16Short(t *testing.T) {
	in := input("x", "See references/n.txt.\n", skill.BundleFile{Path: "references/n.txt", Data: []byte{0xFF, 0xFE, 0x0B, 0x20}})
	if find(safety.Check(in, nil), safety.CodeZeroWidth) == nil {
		t.Errorf("U+200B in 4 bytes of UTF-16 not reported")
	}
	in = input("x", "See references/n.txt.\n", skill.BundleFile{Path: "references/n.txt", Data: []byte{0xFE, 0xFF, 0x20}})
	safety.Check(in, nil)
	// SKILL.md itself in UTF-16.
	in = safety.Input{Name: "x", Content: append([]byte{0xFF, 0xFE}, encode16("---\nname: x\ndescription: d\n---\nHi\u200B\n", false)...)}
	if d := find(safety.Check(in, nil), safety.CodeZeroWidth); d == nil || d.Path != "SKILL.md" {
		t.Errorf("SKILL.md in UTF-16: %v", d)
	}
}
