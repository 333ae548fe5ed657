package catalog

import (
	"context"
	"slices"
	"testing"
	"unsafe"

	"github.com/loadout/loadout/skill"
)

// TestScanDiagnosticsHeldOnce: the diagnostics of a catalog's only
// source are held once, by its result, and shared by the catalog's list
// and the loadouts' (at 50,000 skills with a finding each, every copy was
// 3.6 MB of loadout prompt, check and list); what callers are given is
// still theirs to change.
func TestScanDiagnosticsHeldOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/SKILL.md": md("a", "A.", "tags: {x: y}\n"), // a field-type warning
		"b/SKILL.md": md("b", "B.", "tags: {x: y}\n"),
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "x", Skills: []SourceSpec{{Root: dir}}}}, Options{Once: true})
	if err != nil {
		t.Fatal(err)
	}
	snap := c.snap.Load()
	if len(snap.results) != 1 {
		t.Fatalf("%d results, want 1", len(snap.results))
	}
	var held []skill.Diagnostic
	for _, r := range snap.results {
		held = r.Diagnostics
	}
	if len(held) < 2 {
		t.Fatalf("%d scan diagnostics, want one a skill: %v", len(held), held)
	}
	l := agent(t, c, "x")
	g := agent(t, c, GlobalID)
	for name, ds := range map[string][]skill.Diagnostic{"catalog": snap.diags, "agent": l.scanDiags, "global": g.scanDiags} {
		if len(ds) != len(held) || &ds[0] != &held[0] {
			t.Errorf("the %s's scan diagnostics are a copy (%d of them), not the source's", name, len(ds))
		}
	}
	// Given out, they are copies: changing them changes nothing held.
	got := c.Diagnostics()
	got[0].Severity = skill.Error
	mine := l.Diagnostics()
	mine[0].Severity = skill.Error
	if held[0].Severity == skill.Error || slices.ContainsFunc(c.Diagnostics(), func(d skill.Diagnostic) bool { return d.Severity == skill.Error }) {
		t.Error("changing the diagnostics given out changed the catalog's")
	}
}

// TestReportHeadThenSortedFindings: the report is the catalog's
// diagnostics, then the safety findings sorted, whatever the order the
// checks found them in; Safety is that tail.
func TestReportHeadThenSortedFindings(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/SKILL.md": md("a", "A.", "tags: {x: y}\n"),
		"b/SKILL.md": "---\nname: b\ndescription: B.\n---\nSee [gone](missing.md) and [lost](lost.md).\n",
		"c/SKILL.md": "---\nname: c\ndescription: C.\n---\nSee [gone](missing.md).\n",
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "x", Skills: []SourceSpec{{Root: dir}}}}, Options{Once: true})
	if err != nil {
		t.Fatal(err)
	}
	base := c.Diagnostics()
	r := c.Report(context.Background(), nil)
	if len(base) == 0 || !slices.Equal(r.Diagnostics[:len(base)], base) {
		t.Fatalf("the report does not begin with the catalog's diagnostics:\n%v\n%v", r.Diagnostics, base)
	}
	if len(r.Safety) < 3 || len(r.Diagnostics) != len(base)+len(r.Safety) || &r.Safety[0] != &r.Diagnostics[len(base)] {
		t.Fatalf("Safety is not the report's tail: %d findings, %d in all, %d before", len(r.Safety), len(r.Diagnostics), len(base))
	}
	if !slices.IsSortedFunc(r.Safety, func(a, b skill.Diagnostic) int {
		if a.Path != b.Path {
			return compareStr(a.Path, b.Path)
		}
		return compareStr(a.Code, b.Code)
	}) {
		t.Errorf("findings not sorted by path then code: %v", r.Safety)
	}
	if got := c.Safety(context.Background(), nil); !slices.Equal(got, r.Safety) {
		t.Errorf("Safety gives %v, the report %v", got, r.Safety)
	}
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestFindingsHeldOnce: a skill's safety findings are a part of the
// report, not a copy beside it (at 50,000 skills with a finding each, the
// copy was 3.4 MB of loadout check), and a part capped so that appending
// to it copies; a finding about SKILL.md holds the skill's own path. A
// one-shot catalog keeps no set of the skills checked; a long-lived one
// does, for its next snapshot. What the report counts is unchanged
// (Report.Skill, made when first asked).
func TestFindingsHeldOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/SKILL.md": "---\nname: a\ndescription: Use when A.\n---\nSee [gone](missing.md).\n",
		"b/SKILL.md": "---\nname: b\ndescription: Use when B.\n---\nSee [gone](missing.md).\n",
		// Two findings, in another order than the report's: held as found.
		"m/SKILL.md": "---\nname: m\ndescription: M.\n---\nSee [gone](missing.md).\n",
		"c/SKILL.md": md("c", "C.", "tags: {x: y}\n"),
	})
	for _, once := range []bool{true, false} {
		c, err := New(context.Background(), []AgentSpec{{AgentID: "x", Skills: []SourceSpec{{Root: dir}}}}, Options{Once: once})
		if err != nil {
			t.Fatal(err)
		}
		r := c.Report(context.Background(), nil)
		if len(r.found) < 2 {
			t.Fatalf("once %v: findings of %d skills, want a and b's", once, len(r.found))
		}
		lo, hi := &r.Safety[0], &r.Safety[len(r.Safety)-1]
		for sk, ds := range r.found {
			var inReport []skill.Diagnostic
			for _, d := range r.Safety {
				if d.Skill == sk.Name {
					inReport = append(inReport, d)
				}
			}
			if !slices.Equal(slices.SortedFunc(slices.Values(ds), diagOrder), inReport) {
				t.Errorf("once %v: %s's findings are %v, the report's %v", once, sk.Name, ds, inReport)
			}
			first, last := &ds[0], &ds[len(ds)-1]
			part := uintptr(unsafe.Pointer(first)) >= uintptr(unsafe.Pointer(lo)) && uintptr(unsafe.Pointer(last)) <= uintptr(unsafe.Pointer(hi))
			if sk.Name != "m" && !part {
				t.Errorf("once %v: %s's findings are a copy, not a part of the report", once, sk.Name)
			}
			if cap(ds) != len(ds) {
				t.Errorf("once %v: %s's findings have room past them (cap %d, len %d): an append would write into the report", once, sk.Name, cap(ds), len(ds))
			}
			for _, d := range ds {
				if d.Path == sk.Location && unsafe.StringData(d.Path) != unsafe.StringData(sk.Location) {
					t.Errorf("once %v: %s: a finding about SKILL.md holds a copy of its path", once, sk.Name)
				}
			}
		}
		c.safety.mu.Lock()
		kept := c.safety.checked != nil
		c.safety.mu.Unlock()
		if kept == once {
			t.Errorf("once %v: the set of skills checked is kept %v", once, kept)
		}
		want := Tally{}
		for _, d := range r.Diagnostics {
			if d.Skill == "a" {
				want.Add(d)
			}
		}
		if got := r.Skill("a"); got != want || got.Warnings != 1 {
			t.Errorf("once %v: Skill(a) = %+v, want %+v", once, got, want)
		}
	}
}
