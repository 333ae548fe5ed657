package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

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

// TestWriteTableIsTabwriter: the streamed table of `list` is byte for byte
// what text/tabwriter writes for the same tab-separated lines: wide and
// empty cells, characters of several bytes, lines of other lengths, and
// cells holding the bytes tabwriter interprets (then tabwriter writes it).
func TestWriteTableIsTabwriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "a", "name", "listed (shadowed)", "/some/root/folder", "ünïcödé", "日本語の説明", "x y z", "12", "—"}
	special := []string{"tab\there", "line\nbreak", "v\vtab", "form\ffeed", "esc\xffaped\xff"}
	for round := range 300 {
		var lines [][]string
		for range 1 + r.IntN(12) {
			n := 1 + r.IntN(6)
			if round%3 == 0 {
				n = 5 // the list's own shape
			}
			var cells []string
			for range n {
				cells = append(cells, words[r.IntN(len(words))])
			}
			if round%10 == 9 {
				cells[r.IntN(n)] = special[r.IntN(len(special))]
			}
			lines = append(lines, cells)
		}
		var want, got bytes.Buffer
		tw := tabwriter.NewWriter(&want, tableMinWidth, tableTabWidth, tablePadding, ' ', 0)
		for _, l := range lines {
			fmt.Fprint(tw, strings.Join(l, "\t")+"\n")
		}
		tw.Flush()
		if err := writeTable(&got, len(lines), func(i int, buf []string) []string { return append(buf, lines[i]...) }); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("lines %q:\ngot:\n%s\nwant:\n%s", lines, got.String(), want.String())
		}
	}
}

// TestOneLineAndClip: the copy-free paths give what the plain definitions
// give: strings.Join(strings.Fields(s), " ") and a cut of []rune(s).
func TestOneLineAndClip(t *testing.T) {
	for _, s := range []string{"", "a", "one two", " lead", "trail ", "two  spaces", "tab\there", "line\nbreak",
		"nbsp\u00a0here", "ünï cödé", "日本語の説明です", "bad \xff byte", "\x01ctl", "x\u0085y", strings.Repeat("word ", 30) + "end"} {
		if got, want := oneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", s, got, want)
		}
		for _, n := range []int{1, 2, 5, 60} {
			want := s
			if r := []rune(s); len(r) > n {
				want = string(r[:n-1]) + "…"
			}
			if got := clip(s, n); got != want {
				t.Errorf("clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
