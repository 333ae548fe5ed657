package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// TestInvalidSkillsSpec: invalidSkills takes "load" (the default) or
// "refuse"; anything else is refused naming the field and the choices.
func TestInvalidSkillsSpec(t *testing.T) {
	for _, v := range []string{"", InvalidLoad, InvalidRefuse} {
		if err := (&AgentSpec{AgentID: "a", InvalidSkills: v}).Validate(); err != nil {
			t.Errorf("invalidSkills %q: %v", v, err)
		}
	}
	_, err := New(context.Background(), []AgentSpec{{AgentID: "a", InvalidSkills: "strict"}}, Options{})
	want := `agent "a": invalidSkills "strict" is not a choice: use "load" (the default`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `or "refuse"`) {
		t.Errorf("got %v, want it to contain %q", err, want)
	}
}

// TestPinAndBudgetTokensSpec: pin takes the patterns available takes, and
// budgetTokens a number of tokens; bad values are refused naming the field.
func TestPinAndBudgetTokensSpec(t *testing.T) {
	if err := (&AgentSpec{AgentID: "a", Pin: []string{"deploy-*", "ui/?eb"}, BudgetTokens: 2000}).Validate(); err != nil {
		t.Errorf("valid pin and budgetTokens: %v", err)
	}
	for spec, want := range map[*AgentSpec]string{
		{AgentID: "a", Pin: []string{"[a"}}:               `agent "a": pin[0] pattern "[a" is malformed`,
		{AgentID: "a", Pin: []string{"x", ""}}:            `agent "a": pin[1] is an empty pattern`,
		{AgentID: "a", BudgetTokens: -1}:                  `agent "a": budgetTokens -1 is negative`,
		{AgentID: "a", BudgetTokens: MaxBudgetTokens + 1}: `budgetTokens 268435457 is over the most allowed`,
	} {
		if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want %q", spec, err, want)
		}
	}
}

// TestPriority: the skills matching a pin come first (by name), then the
// used ones, most used first, then by name; skills neither pinned nor used
// (render puts them after, by name), inline and hidden skills are not in
// it. The catalog's default budgetTokens applies to agents that
// set none.
func TestPriority(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/SKILL.md": md("alpha", "A."), "b/SKILL.md": md("beta", "B."), "c/SKILL.md": md("gamma", "C."),
		"d/SKILL.md": md("deploy-web", "D."), "e/SKILL.md": md("deploy-db", "E."), "f/SKILL.md": md("inlined", "F."),
	})
	c, err := New(context.Background(), []AgentSpec{
		{AgentID: "ops", Pin: []string{"deploy-*"}, Skills: []SourceSpec{{Root: dir, Available: []string{"*"}, Inline: []string{"inlined"}}}},
		{AgentID: "dev", BudgetTokens: 900, Skills: []SourceSpec{{Root: dir}}},
	}, Options{BudgetTokens: 1500})
	if err != nil {
		t.Fatal(err)
	}
	ops := agent(t, c, "ops")
	usage := map[string]int{"gamma": 5, "beta": 2, "deploy-web": 9, "inlined": 50}
	got := strings.Join(ops.Priority(usage), " ")
	if want := "deploy-db deploy-web gamma beta"; got != want {
		t.Errorf("priority = %s, want %s", got, want)
	}
	if got, want := strings.Join(ops.Priority(nil), " "), "deploy-db deploy-web"; got != want {
		t.Errorf("priority without usage = %s, want %s", got, want)
	}
	if ops.Spec.BudgetTokens != 1500 || agent(t, c, "dev").Spec.BudgetTokens != 900 {
		t.Errorf("budgetTokens: ops %d (want the default 1500), dev %d (want its own 900)", ops.Spec.BudgetTokens, agent(t, c, "dev").Spec.BudgetTokens)
	}
	// The same inputs render the same bytes.
	a, _, _ := ops.Prompt(PromptOptions{Budget: 400, Usage: usage})
	b, _, _ := ops.Prompt(PromptOptions{Budget: 400, Usage: map[string]int{"deploy-web": 9, "beta": 2, "gamma": 5, "inlined": 50}})
	if a != b {
		t.Errorf("two renders of the same catalog and usage differ:\n%s\n---\n%s", a, b)
	}
}

// BenchmarkPriority10k ranks 10,000 listed skills, 1,000 of them used and
// 100 pinned: what every prompt request adds to the render.
func BenchmarkPriority10k(b *testing.B) {
	l := &Loadout{Spec: AgentSpec{Pin: []string{"skill-00??"}}}
	usage := map[string]int{}
	for i := range 10000 {
		name := fmt.Sprintf("skill-%04d", (i*7919)%10000)
		l.entries = append(l.entries, &Entry{Skill: &skill.Skill{Name: name}, Listed: true})
		if i%10 == 0 {
			usage[name] = i % 97
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Priority(usage)
	}
}

// TestAllowedOriginsSpec: allowedOrigins is for index sources only; each
// must be an origin, and each a different one. Refusals name the field.
func TestAllowedOriginsSpec(t *testing.T) {
	const idx = "https://skills.example.com/index.json"
	for _, s := range []SourceSpec{
		{Index: idx},
		{Index: idx, AllowedOrigins: []string{"https://cdn.example.com"}},
		{Index: idx, AllowedOrigins: []string{"https://cdn.example.com", "https://cdn2.example.com"}},
		{Git: "https://git.example.com/skills.git"},
	} {
		if err := (&AgentSpec{AgentID: "a", Skills: []SourceSpec{s}}).Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, c := range []struct {
		s    SourceSpec
		want string
	}{
		{SourceSpec{Root: "skills", AllowedOrigins: []string{"https://cdn.example.com"}}, "allowedOrigins is for index sources only"},
		{SourceSpec{Git: "https://git.example.com/skills.git", AllowedOrigins: []string{"https://cdn.example.com"}}, "allowedOrigins is for index sources only: a git source fetches from its repository alone"},
		{SourceSpec{Index: idx, AllowedOrigins: []string{"https://cdn.example.com", "ftp://x"}}, "allowedOrigins[1]"},
		{SourceSpec{Index: idx, AllowedOrigins: []string{"https://cdn.example.com", "https://CDN.example.com:443"}}, `skills[0].allowedOrigins[1] "https://CDN.example.com:443" is the same origin as allowedOrigins[0]`},
	} {
		err := (&AgentSpec{AgentID: "a", Skills: []SourceSpec{c.s}}).Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want it to contain %q", c.s, err, c.want)
		}
	}
}
