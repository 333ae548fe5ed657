package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/skill"
)

// TestWriteListJSON: the streamed list is byte for byte what writeJSON
// writes for the same rows, empty lists and characters HTML escapes
// included.
func TestWriteListJSON(t *testing.T) {
	rows := []listedSkill{
		{Name: "a", Description: "Uses <b> & \"quotes\".", Location: "/x/a/SKILL.md", Mode: "listed", Files: []skill.File{{Path: "s.sh", Size: 3}}, Tags: []string{"t"}},
		{Name: "b", Description: "Two.", Mode: "hidden", Files: []skill.File{}},
	}
	diags := []skill.Diagnostic{{Severity: skill.Warning, Code: "c", Message: "m <x>", Path: filepath.Join("p", "q")}}
	for _, tc := range []struct {
		rows  []listedSkill
		diags []skill.Diagnostic
	}{{rows, diags}, {[]listedSkill{}, []skill.Diagnostic{}}, {rows[:1], []skill.Diagnostic{}}} {
		var want, got bytes.Buffer
		if err := writeJSON(&want, map[string]any{"skills": tc.rows, "diagnostics": tc.diags}); err != nil {
			t.Fatal(err)
		}
		if err := writeListJSON(&got, tc.rows, tc.diags); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("streamed:\n%s\nwant:\n%s", got.String(), want.String())
		}
	}
}
