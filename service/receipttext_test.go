package service

import (
	"strings"
	"testing"

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

// BenchmarkSafeReceipt is the check every load's receipt goes through.
func BenchmarkSafeReceipt(b *testing.B) {
	rc := store.Receipt{Agent: "bench", Skill: "payroll-plan-5868", Action: "load", Source: "folder", Trust: "local",
		Digest: "sha256:6d1f0c6c1e2a9a5d3c4b7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3", Transport: "http", Outcome: "ok", Token: "a1b2c3d4e5f6"}
	for b.Loop() {
		r := rc
		safeReceipt(&r)
	}
}
