package catalog

import (
	"fmt"
	"testing"

	"github.com/loadout/loadout/render"
)

// TestPinnedDescribedWhole: with pin ["pdf", "xlsx", "sql-*"] and more
// skills than names fit in 8,000 characters, the pinned skills are
// described whole (they were names only: pins only ordered skills within
// a tier), and the name-only diagnostic's advice to pin now holds.
func TestPinnedDescribedWhole(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"pdf/SKILL.md":      md("pdf", "Reads, fills and merges PDF forms; extracts their text and tables for review by the team."),
		"xlsx/SKILL.md":     md("xlsx", "Builds spreadsheets with formulas, charts and pivot tables, and fixes broken workbooks."),
		"sql-tune/SKILL.md": md("sql-tune", "Finds slow SQL queries and proposes indexes, with the plan before and after each change."),
		"sql-lint/SKILL.md": md("sql-lint", "Checks SQL files for style and correctness problems and explains each finding."),
		"sqlite-x/SKILL.md": md("sqlite-x", "Not pinned: sql-* does not match sqlite-x."),
	}
	for i := range 500 {
		name := fmt.Sprintf("generated-skill-%04d", i)
		files[name+"/SKILL.md"] = md(name, fmt.Sprintf("Handles chore number %d of the team's weekly work.", i))
	}
	write(t, dir, files)
	l := agent(t, newCat(t, AgentSpec{AgentID: "a", Budget: 8000, Pin: []string{"pdf", "xlsx", "sql-*"}, Skills: []SourceSpec{{Root: dir}}}), "a")
	if got := l.Pinned(); fmt.Sprint(got) != "[pdf sql-lint sql-tune xlsx]" {
		t.Fatalf("Pinned() = %v", got)
	}
	for _, f := range []string{render.FormatPi, render.FormatCatalog, render.FormatProgressive} {
		_, rep, _ := l.Prompt(PromptOptions{Format: f, Usage: map[string]int{"generated-skill-0001": 9}})
		for _, p := range l.Pinned() {
			if tier := rep.Tier(p); tier != render.TierFull {
				t.Errorf("%s: pinned %s is %s, want full", f, p, tier)
			}
		}
		if tier := rep.Tier("sqlite-x"); tier == render.TierFull {
			t.Errorf("%s: sqlite-x (not pinned) is full", f)
		}
		if rep.Chars > 8000 {
			t.Errorf("%s: %d characters", f, rep.Chars)
		}
	}
}
