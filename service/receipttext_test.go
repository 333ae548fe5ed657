package service

import (
	"strings"
	"testing"
)

// TestReceiptTextEdges: a plain text of exactly the cap is returned as it
// is, without an allocation; a cap that no whole character or escape
// fits under with the mark leaves the mark alone, and a text whose escape
// fits exactly is kept whole.
func TestReceiptTextEdges(t *testing.T) {
	long := strings.Repeat("a", MaxReceiptName)
	if n := testing.AllocsPerRun(100, func() { ReceiptText(long, MaxReceiptName) }); n != 0 {
		t.Errorf("ReceiptText of a plain text of exactly the cap: %v allocations, want 0", n)
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
	} {
		if got := ReceiptText(c.in, c.max); got != c.want {
			t.Errorf("ReceiptText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
