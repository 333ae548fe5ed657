package jsondepth

import (
	"strings"
	"testing"
)

func TestOver(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want int
	}{
		{`{"a": [1, 2]}`, 2, -1},
		{`{"a": [1, 2]}`, 1, 6},
		{`[[[]]]`, 3, -1},
		{`[[[]]]`, 2, 2},
		{`{"s": "[[[[[[\"{{{{"}`, 1, -1},   // brackets inside strings do not count
		{`[] [] [] [] []`, 1, -1},          // siblings do not add up
		{strings.Repeat("[", 100), 64, 64}, // unclosed text is bounded too
		{`{"s": "\\"} [[`, 2, -1},          // an escaped backslash ends before the quote
	} {
		if got := Over([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("Over(%q, %d) = %d, want %d", tc.in, tc.max, got, tc.want)
		}
	}
}
