package service

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/linediff"
)

// TestUnifiedBounds: a review's line diff marks every line; past the
// byte bound, or linediff's edit bound, a changed file gets a note naming
// why instead, never a slow or huge diff. At the edit bound it still gets
// its diff.
func TestUnifiedBounds(t *testing.T) {
	if d, note := unified([]byte("a\nb\nc\n"), []byte("a\nB\nc\n")); note != "" || d != " a\n-b\n+B\n c\n" {
		t.Fatalf("a small diff: %q %q", d, note)
	}
	// n lines that all change: 2n edits.
	changed := func(n int) ([]byte, []byte) {
		var a, b strings.Builder
		for i := range n {
			fmt.Fprintf(&a, "old %d\n", i)
			fmt.Fprintf(&b, "new %d\n", i)
		}
		return []byte(a.String()), []byte(b.String())
	}
	a, b := changed(linediff.MaxEdits / 2)
	if d, note := unified(a, b); note != "" || strings.Count(d, "\n") != linediff.MaxEdits {
		t.Errorf("at the edit bound: note %q, %d lines", note, strings.Count(d, "\n"))
	}
	a, b = changed(linediff.MaxEdits/2 + 1)
	if d, note := unified(a, b); d != "" || !strings.Contains(note, "too different") {
		t.Errorf("one edit past the bound: %d bytes of diff, note %q", len(d), note)
	}
	big := []byte(strings.Repeat("x", maxDiffBytes+1))
	if d, note := unified(big, []byte("x")); d != "" || !strings.Contains(note, "bytes: no line diff") {
		t.Errorf("over the byte bound: note %q", note)
	}
	if d, note := unified([]byte("a\x00"), []byte("b")); d != "" || note != "binary: no line diff" {
		t.Errorf("binary: note %q", note)
	}
}
