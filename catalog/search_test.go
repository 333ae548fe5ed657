package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md":        md("deploy", "Deploy the application to production with safety checks."),
		"rollback/SKILL.md":      md("rollback", "Roll a failed deployment back to the previous release."),
		"pdf-forms/SKILL.md":     md("pdf-forms", "Fill in PDF forms from structured data.", "tags: [documents]\n"),
		"code-review/SKILL.md":   md("code-review", "Review a pull request for correctness.", "category: quality\n"),
		"release-notes/SKILL.md": md("release-notes", "Write release notes from merged pull requests."),
	})
	c := newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir, Available: []string{"deploy", "rollback", "pdf-forms", "code-review"}, Inline: []string{"release-notes"}}}})
	l := agent(t, c, "a")
	names := func(hs []Hit) string {
		var s []string
		for _, h := range hs {
			s = append(s, h.Name)
		}
		return strings.Join(s, " ")
	}
	for q, want := range map[string]string{
		"deploy":              "deploy rollback", // the name first; "deployment" by prefix
		"pull request review": "code-review release-notes",
		"documents":           "pdf-forms",
		"quality":             "code-review", // the category, which the listing's group lines name
		"PDF":                 "pdf-forms",
		"release":             "release-notes rollback",
		"nothing matches":     "",
		"":                    "",
	} {
		if got := names(l.Search(q, 5)); got != want {
			t.Errorf("Search(%q) = %q, want %q", q, got, want)
		}
	}
	if hs := l.Search("pull", 1); len(hs) != 1 || hs[0].Description == "" || hs[0].Source != "folder" {
		t.Errorf("limit and fields: %+v", hs)
	}
}

func BenchmarkSearch10k(b *testing.B) {
	dir := b.TempDir()
	words := strings.Fields("deploy review pdf form data cache build test lint docs release notes backend frontend query index search report chart table import export audit")
	for i := 0; i < 10000; i++ {
		n := fmt.Sprintf("skill-%05d", i)
		desc := fmt.Sprintf("Use when working on %s %s tasks: %s the %s with %s checks.", words[i%len(words)], words[(i/7)%len(words)], words[(i/3)%len(words)], words[(i/11)%len(words)], words[(i/13)%len(words)])
		p := filepath.Join(dir, n, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("---\nname: "+n+"\ndescription: "+desc+"\n---\nbody\n"), 0o644)
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	l, _ := c.Agent("a")
	if hs := l.Search("release notes", 10); len(hs) != 10 {
		b.Fatalf("hits: %d", len(hs))
	}
	queries := []string{"release notes", "pdf form data", "deplo", "search index report", "skill-04242"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Search(queries[i%len(queries)], 10)
	}
}
