package main

import (
	"fmt"
	"testing"

	"github.com/loadout/loadout/render"
)

// TestFrameChars checks the stand-in for render.Report.Frame: a listing of
// k entries costs the frame plus k times one entry's cost.
func TestFrameChars(t *testing.T) {
	for _, f := range []string{"pi", "catalog", "progressive"} {
		frame := frameChars(f)
		var es []render.Entry
		for i := range 3 {
			n := fmt.Sprintf("s%d", i)
			es = append(es, render.Entry{Name: n, Description: "d", Dir: "/s/" + n, Location: "/s/" + n + "/SKILL.md"})
		}
		_, r1 := render.Prompt(es[:1], nil, render.Options{Format: f, Budget: -1})
		_, r3 := render.Prompt(es, nil, render.Options{Format: f, Budget: -1})
		if per := r1.Chars - frame; frame <= 0 || r3.Chars != frame+3*per {
			t.Errorf("%s: frame %d, one entry %d, three %d: not frame plus entries", f, frame, r1.Chars, r3.Chars)
		}
	}
}
