package catalog

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func md(name, desc string, extra ...string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n# %s\n\nDo the %s thing.\n", name, desc, strings.Join(extra, ""), name, name)
}

func newCat(t *testing.T, agents ...AgentSpec) *Catalog {
	t.Helper()
	c, err := New(context.Background(), agents, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func agent(t *testing.T, c *Catalog, id string) *Loadout {
	t.Helper()
	l, ok := c.Agent(id)
	if !ok {
		t.Fatalf("no agent %s", id)
	}
	return l
}

type row struct {
	Name   string
	Source int
	Listed bool
	Inline bool
}

func rows(l *Loadout) []row {
	var out []row
	for _, e := range l.Entries() {
		out = append(out, row{e.Skill.Name, e.Source, e.Listed, e.Inline})
	}
	return out
}

func diagCodes(ds []skill.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

func TestSelection(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{
		"lists/SKILL.md":         md("lists", "Lists."),
		"my-critical-x/SKILL.md": md("my-critical-x", "Critical."),
		"zeta/SKILL.md":          md("zeta", "Zeta."),
	})
	write(t, b, map[string]string{
		"lists/SKILL.md": md("lists", "Other lists."),
		"beta/SKILL.md":  md("beta", "Beta."),
	})
	c := newCat(t,
		AgentSpec{AgentID: "defaults", Skills: []SourceSpec{{Root: a}}},
		AgentSpec{AgentID: "seed", Skills: []SourceSpec{
			{Root: a, Available: []string{"*"}, Inline: []string{"my-critical-*"}},
			{Root: b},
		}},
		AgentSpec{AgentID: "inline-only", Skills: []SourceSpec{{Root: a, Inline: []string{"zeta"}}}},
		AgentSpec{AgentID: "glob", Skills: []SourceSpec{{Root: a, Available: []string{"?eta", "LISTS"}}}},
	)
	if diff := cmp.Diff([]row{{"lists", 0, true, false}, {"my-critical-x", 0, true, false}, {"zeta", 0, true, false}}, rows(agent(t, c, "defaults"))); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	seed := agent(t, c, "seed")
	want := []row{{"lists", 0, true, false}, {"my-critical-x", 0, false, true}, {"zeta", 0, true, false}, {"beta", 1, true, false}, {"lists", 1, true, false}}
	if diff := cmp.Diff(want, rows(seed)); diff != "" {
		t.Errorf("seed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"inline-overlap", "same-name-sources"}, diagCodes(seed.agentDiags)); diff != "" {
		t.Errorf("seed diagnostics (-want +got):\n%s", diff)
	}
	for _, d := range seed.agentDiags {
		if d.Code == CodeSameNameSources && (!strings.HasPrefix(d.Winner, mustReal(t, a)) || !strings.HasPrefix(d.Loser, mustReal(t, b))) {
			t.Errorf("winner/loser wrong: %+v", d)
		}
	}
	if e, _ := seed.Lookup("lists"); e.Source != 0 {
		t.Errorf("activation by name should go to the first source, got %d", e.Source)
	}
	// Both copies are in the prompt, in source order.
	text, _, _ := seed.Prompt(PromptOptions{})
	if strings.Count(text, "<name>lists</name>") != 2 || strings.Index(text, "Lists.") > strings.Index(text, "Other lists.") {
		t.Errorf("prompt should list both lists, first source first:\n%s", text)
	}
	if !strings.Contains(text, `<skill name="my-critical-x"`) || !strings.Contains(text, "Do the my-critical-x thing.") {
		t.Errorf("inline skill missing from prompt:\n%s", text)
	}
	if diff := cmp.Diff([]row{{"zeta", 0, false, true}}, rows(agent(t, c, "inline-only"))); diff != "" {
		t.Errorf("inline-only (-want +got):\n%s", diff)
	}
	// Patterns are case-sensitive globs.
	if diff := cmp.Diff([]row{{"zeta", 0, true, false}}, rows(agent(t, c, "glob"))); diff != "" {
		t.Errorf("glob (-want +got):\n%s", diff)
	}
	// The global catalog: each root once, first wins.
	g := c.Global()
	if diff := cmp.Diff([]string{"beta", "lists", "my-critical-x", "zeta"}, g.Names()); diff != "" {
		t.Errorf("global names (-want +got):\n%s", diff)
	}
	// Scan diagnostics are reported once per root, not once per agent.
	if n := strings.Count(strings.Join(diagCodes(c.Diagnostics()), " "), "inline-overlap"); n != 1 {
		t.Errorf("inline-overlap reported %d times", n)
	}
}

func mustReal(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPreloadAndTools(t *testing.T) {
	dir, adhoc := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{
		"java-expert/SKILL.md": md("java-expert", "Java.", "requires-tools: [bash, read_file]\n"),
		"hidden/SKILL.md":      md("hidden", "Hidden.", "disable-model-invocation: true\n"),
		"other/SKILL.md":       md("other", "Other."),
	})
	write(t, adhoc, map[string]string{"new-skill/SKILL.md": md("new-skill", "Ad hoc.")})
	c := newCat(t, AgentSpec{AgentID: "java",
		Skills:  []SourceSpec{{Root: dir, Available: []string{"other", "hidden"}}},
		Preload: []string{"java-expert", filepath.Join(adhoc, "new-skill"), "jva-expert"},
		Tools:   []string{"read_file"},
	})
	l := agent(t, c, "java")
	want := []row{{"hidden", 0, true, false}, {"other", 0, true, false}, {"java-expert", 0, false, true}, {"new-skill", -1, false, true}}
	if diff := cmp.Diff(want, rows(l)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	var missing, tools *skill.Diagnostic
	for i, d := range l.agentDiags {
		switch d.Code {
		case CodePreloadMissing:
			missing = &l.agentDiags[i]
		case CodeToolsMissing:
			tools = &l.agentDiags[i]
		}
	}
	if missing == nil || missing.Severity != skill.Error || !strings.Contains(missing.Message, "did you mean java-expert") || missing.Field != "preload[2]" {
		t.Errorf("preload-missing = %+v", missing)
	}
	if tools == nil || tools.Skill != "java-expert" || !strings.Contains(tools.Message, "bash") || strings.Contains(tools.Message, "read_file") {
		t.Errorf("requires-tools-missing = %+v", tools)
	}
	text, _, _ := l.Prompt(PromptOptions{Format: "catalog"})
	for _, want := range []string{"#### java-expert", "Do the java-expert thing.", "#### new-skill", "**other**"} {
		if !strings.Contains(text, want) {
			t.Errorf("catalog prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "**hidden**") {
		t.Errorf("hidden skill listed:\n%s", text)
	}
	if r := l.Load("hidden"); r.Status != StatusOK {
		t.Errorf("a hidden skill stays loadable by name: %+v", r)
	}
}

func TestSpecErrors(t *testing.T) {
	cases := map[string]AgentSpec{
		"agentId is required":                                           {},
		`skills[0] must name exactly one source`:                        {AgentID: "a", Skills: []SourceSpec{{}}},
		`skills[0] must name exactly one source: {"root"`:               {AgentID: "a", Skills: []SourceSpec{{Root: "x", Store: true}}},
		`skills[0].inline[1] pattern "[" is malformed`:                  {AgentID: "a", Skills: []SourceSpec{{Root: "x", Inline: []string{"a", "["}}}},
		`format "xml" is not a prompt format`:                           {AgentID: "a", Format: "xml"},
		`agent "a": budget 50 is too small: the pi format's fixed text`: {AgentID: "a", Budget: 50},
		`budget 100 is too small: the catalog format's`:                 {AgentID: "a", Budget: 100, Format: "catalog"},
	}
	for want, spec := range cases {
		_, err := New(context.Background(), []AgentSpec{spec}, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to contain %q", err, want)
		}
	}
	_, err := New(context.Background(), []AgentSpec{{AgentID: "a"}, {AgentID: "a"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "unique") {
		t.Errorf("duplicate ids: %v", err)
	}
}

func skillTree(t *testing.T) (string, *Loadout) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":            md("pdf", "PDF."),
		"pdf/references/guide.md": "# Guide\n\nhéllo",
		"pdf/assets/logo.png":     "\x89PNG\r\n\x1a\n\x00\x00binary",
		"pdf/big.txt":             strings.Repeat("x", 1000),
		"outside.txt":             "secret",
	})
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "pdf", "scripts"), 0o755))
	testutil.Must(t, os.WriteFile(filepath.Join(dir, "pdf", "scripts", "fill.sh"), []byte("#!/bin/sh\necho\n"), 0o755))
	c := newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}})
	return dir, agent(t, c, "a")
}

func TestLoad(t *testing.T) {
	dir, l := skillTree(t)
	r := l.Load("pdf")
	if r.Status != StatusOK {
		t.Fatalf("load: %+v", r)
	}
	real := mustReal(t, filepath.Join(dir, "pdf"))
	for _, want := range []string{"<skill_context", "Do the pdf thing.", real, "scripts/fill.sh", "references/guide.md", "assets/logo.png"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("envelope lacks %q:\n%s", want, r.Text)
		}
	}
	if strings.Contains(r.Text, "name: pdf") {
		t.Errorf("envelope holds the frontmatter:\n%s", r.Text)
	}
	nf := l.Load("pfd")
	if nf.Status != StatusNotFound || len(nf.Suggestions) == 0 || nf.Suggestions[0] != "pdf" {
		t.Errorf("not found: %+v", nf)
	}
	// A read failure after the scan is a structured error, not a panic.
	testutil.Must(t, os.Remove(filepath.Join(dir, "pdf", "SKILL.md")))
	er := l.Load("pdf")
	if er.Status != StatusError || er.Err == nil || !strings.Contains(er.Text, "could not be read") {
		t.Errorf("error: %+v", er)
	}
}

func TestReadFile(t *testing.T) {
	dir, l := skillTree(t)
	r := l.ReadFile("pdf", "./references/guide.md", ReadOptions{})
	if r.Status != StatusOK || r.Content != "# Guide\n\nhéllo" || r.Encoding != "utf-8" || r.ContentType != "text/markdown" {
		t.Errorf("text read: %+v", r)
	}
	r = l.ReadFile("pdf", "assets/logo.png", ReadOptions{})
	raw, _ := base64.StdEncoding.DecodeString(r.Content)
	if r.Status != StatusOK || r.Encoding != "base64" || string(raw) != "\x89PNG\r\n\x1a\n\x00\x00binary" || r.ContentType != "image/png" {
		t.Errorf("binary read: %+v", r)
	}
	r = l.ReadFile("pdf", "big.txt", ReadOptions{Offset: 990, Length: 100})
	if r.Status != StatusOK || r.Content != strings.Repeat("x", 10) || r.More || r.Size != 1000 {
		t.Errorf("range read: %+v", r)
	}
	r = l.ReadFile("pdf", "big.txt", ReadOptions{Max: 100})
	if r.Status != StatusTooLarge || !strings.Contains(r.Message, "offset and length") {
		t.Errorf("cap: %+v", r)
	}
	r = l.ReadFile("pdf", "big.txt", ReadOptions{Max: 100, Length: 500})
	if r.Status != StatusOK || len(r.Content) != 100 || !r.More {
		t.Errorf("capped range: %+v", r)
	}
	r = l.ReadFile("pdf", "SKILL.md", ReadOptions{})
	if r.Status != StatusOK || !strings.HasPrefix(r.Content, "---\nname: pdf") {
		t.Errorf("entry read: %+v", r)
	}
	for _, p := range []string{"../outside.txt", "/etc/passwd", "a//b", `..\outside.txt`, "references/../../outside.txt"} {
		r := l.ReadFile("pdf", p, ReadOptions{})
		if r.Status != StatusRefused || r.Code == "" || r.Message == "" {
			t.Errorf("%q: %+v", p, r)
		}
	}
	r = l.ReadFile("pdf", "references/gide.md", ReadOptions{})
	if r.Status != StatusNotFound || !strings.Contains(r.Message, "references/guide.md") {
		t.Errorf("unknown file: %+v", r)
	}
	// A listed file swapped for a link that leaves the skill is refused by os.Root.
	guide := filepath.Join(dir, "pdf", "references", "guide.md")
	testutil.Must(t, os.Remove(guide))
	if err := os.Symlink(filepath.Join(dir, "outside.txt"), guide); err != nil {
		t.Fatal(err)
	}
	r = l.ReadFile("pdf", "references/guide.md", ReadOptions{})
	if r.Status != StatusRefused || r.Code != skill.CodeSymlinkEscapes || strings.Contains(r.Content, "secret") {
		t.Errorf("escaping link: %+v", r)
	}
}

func TestPromptReadsNoFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/SKILL.md": md("a", "A."), "b/SKILL.md": md("b", "B.")})
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir, Inline: []string{"b"}, Available: []string{"a"}}}})
	l := agent(t, c, "x")
	before, _, _ := l.Prompt(PromptOptions{})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	after, _, _ := l.Prompt(PromptOptions{})
	if before != after || !strings.Contains(after, "Do the b thing.") {
		t.Errorf("prompt changed after the files were removed:\n%s\n---\n%s", before, after)
	}
}

func TestBudgetDiagnosticsNameSkills(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		n := fmt.Sprintf("skill-%02d", i)
		files[n+"/SKILL.md"] = md(n, strings.Repeat("A long description. ", 20))
	}
	write(t, dir, files)
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}, Budget: 3000})
	text, rep, diags := agent(t, c, "x").Prompt(PromptOptions{})
	if len(text) == 0 || rep.Chars > 3000 {
		t.Errorf("listing of %d chars over budget", rep.Chars)
	}
	got := strings.Join(diagCodes(diags), " ")
	if len(rep.Omitted) > 0 && !strings.Contains(got, CodeBudgetOmitted) || len(rep.Shortened) > 0 && !strings.Contains(got, CodeBudgetShortened) {
		t.Errorf("report %+v but diagnostics %v", rep, got)
	}
	for _, d := range diags {
		if d.Code == CodeBudgetOmitted && !strings.Contains(d.Message, rep.Omitted[0]) {
			t.Errorf("omitted diagnostic does not name the skills: %s", d.Message)
		}
	}
	if len(rep.Omitted)+len(rep.Shortened) == 0 {
		t.Error("40 long descriptions should not fit 3000 characters")
	}
}

// A budget that leaves out thousands of skills names the first
// MaxNamesInDiagnostic in its diagnostic and counts the rest; the report
// still holds every name.
func TestBudgetDiagnosticsBounded(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	const n = 300
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("skill-%03d", i)
		files[name+"/SKILL.md"] = md(name, strings.Repeat("A long description. ", 10))
	}
	write(t, dir, files)
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}, Budget: 500})
	_, rep, diags := agent(t, c, "x").Prompt(PromptOptions{})
	if len(rep.Omitted)+len(rep.NameOnly) < MaxNamesInDiagnostic*2 {
		t.Fatalf("500 characters should leave out most of %d skills: %+v", n, rep)
	}
	var seen int
	for _, d := range diags {
		var names []string
		switch d.Code {
		case CodeBudgetOmitted:
			names = rep.Omitted
		case CodeBudgetNameOnly:
			names = rep.NameOnly
		case CodeBudgetShortened:
			names = rep.Shortened
		default:
			continue
		}
		seen++
		if len(names) <= MaxNamesInDiagnostic {
			continue
		}
		if !strings.Contains(d.Message, names[MaxNamesInDiagnostic-1]) || strings.Contains(d.Message, names[MaxNamesInDiagnostic]+",") || strings.Contains(d.Message, names[len(names)-1]) {
			t.Errorf("%s: want the first %d of %d names, got %s", d.Code, MaxNamesInDiagnostic, len(names), d.Message)
		}
		if want := fmt.Sprintf("and %d more", len(names)-MaxNamesInDiagnostic); !strings.Contains(d.Message, want) {
			t.Errorf("%s: message does not say %q: %s", d.Code, want, d.Message)
		}
		if len(d.Message) > 2000 {
			t.Errorf("%s: message of %d bytes", d.Code, len(d.Message))
		}
	}
	if seen == 0 {
		t.Fatalf("no budget diagnostic: %v", diagCodes(diags))
	}
}

func TestConcurrentUse(t *testing.T) {
	_, l := skillTree(t)
	c := newCat(t, AgentSpec{AgentID: "a", Skills: l.Spec.Skills})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				l, _ := c.Agent("a")
				if r := l.Load("pdf"); r.Status != StatusOK {
					t.Errorf("load: %s", r.Status)
				}
				if r := l.ReadFile("pdf", "references/guide.md", ReadOptions{}); r.Status != StatusOK {
					t.Errorf("read: %s", r.Status)
				}
				l.Prompt(PromptOptions{})
				if i == 0 && j%10 == 0 {
					c.Reload(context.Background())
				}
			}
		}(i)
	}
	wg.Wait()
}

// TestBudgetTooSmallKeepsTheNote: a budget below the frame text used to
// drop the listing and the line that says how to find skills, silently.
// The line stays, and an error diagnostic says the budget is too small.
func TestBudgetTooSmallKeepsTheNote(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/SKILL.md": md("a", "A."), "b/SKILL.md": md("b", "B.")})
	l := agent(t, newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: dir}}}), "x")
	text, rep, diags := l.Prompt(PromptOptions{Budget: 10})
	if !strings.Contains(text, "2 more skills are not listed here. Find them with the `search_skills` tool") {
		t.Errorf("the note is gone:\n%s", text)
	}
	var found bool
	for _, d := range diags {
		if d.Code == CodeBudgetTooSmall {
			found = d.Severity == skill.Error && strings.Contains(d.Message, fmt.Sprintf("at least %d", rep.MinBudget))
		}
	}
	if !found || !rep.TooSmall {
		t.Errorf("no budget-too-small error: %+v %+v", diags, rep)
	}
	if _, rep, diags := l.Prompt(PromptOptions{Budget: rep.MinBudget}); rep.TooSmall || strings.Contains(strings.Join(diagCodes(diags), " "), CodeBudgetTooSmall) {
		t.Errorf("the minimum budget is refused: %+v", rep)
	}
}
