package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/internal/testutil"
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
		testutil.Must(b, os.MkdirAll(filepath.Dir(p), 0o755))
		testutil.Write(b, p, "---\nname: "+n+"\ndescription: "+desc+"\n---\nbody\n")
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

// searchGenTree is a loadout over n skills of bench/gen, the tree the
// HTTP benchmarks serve, and queries as people type them.
func searchGenTree(tb testing.TB, n int) (*Loadout, []string) {
	dir := tb.TempDir()
	if err := gen.Tree(dir, n, 1); err != nil {
		tb.Fatal(err)
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	l, _ := c.Agent("a")
	return l, []string{"release notes for the api", "deploy the backend", "pdf", "review pull requests and lint", "data export csv", "docs", "vendor-publish", "sear", "the"}
}

// BenchmarkSearchGen4k: the search of bench/routes.sh's route, on the
// same generated skills.
func BenchmarkSearchGen4k(b *testing.B) {
	l, queries := searchGenTree(b, 4000)
	i := 0
	for b.Loop() {
		l.Search(queries[i%len(queries)], 10)
		i++
	}
}

// TestSearchMatchesExhaustive: the pruned ranking (terms that can no
// longer bring a document in are added only to those found) is the one
// scoring every posting gives, hit for hit and score for score, at every
// limit.
func TestSearchMatchesExhaustive(t *testing.T) {
	l, queries := searchGenTree(t, 1500)
	queries = append(queries, "use when working", "ops area export", "import lists template helps", "a", "zzz nothing")
	for _, e := range l.Entries()[:40] {
		queries = append(queries, e.Skill.Name, strings.Fields(e.Skill.Description)[3]+" "+strings.Fields(e.Skill.Description)[5])
	}
	// Usage reranks the best by BM25 after the pruned scoring: some of
	// the skills used, so that it changes some rankings.
	usage := map[string]int{}
	for i, e := range l.Entries() {
		if i%7 == 0 {
			usage[e.Skill.Name] = i % 50
		}
	}
	pruned := 0
	for _, q := range queries {
		for _, limit := range []int{1, 3, 10, 50} {
			o := SearchOptions{}
			if limit == 10 {
				o.Usage = usage
			}
			got, want := l.hits(q, limit, true, o), l.hits(q, limit, false, o)
			if len(got) != len(want) {
				t.Fatalf("%q limit %d: %d hits pruned, %d exhaustive", q, limit, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%q limit %d: hit %d is %+v pruned, %+v exhaustive", q, limit, i, got[i], want[i])
				}
			}
			pruned++
		}
	}
	if pruned == 0 {
		t.Fatal("no query ran")
	}
}

// TestSearchWords: a word finds its other forms (stems), and the way
// people ask ("please help me make...") and descriptions' boilerplate
// ("Use when the user asks") match nothing.
func TestSearchWords(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"xlsx/SKILL.md":         md("xlsx", "Edits spreadsheets and fixes broken formulas. Use when the user asks for a workbook."),
		"setup-my-iq/SKILL.md":  md("setup-my-iq", "Sets up the IQ tool."),
		"make-release/SKILL.md": md("make-release", "Cuts a release."),
	})
	l := agent(t, newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}), "a")
	for q, want := range map[string]string{
		"my spreadsheet formula is broken":   "xlsx",
		"fix the broken formulae":            "xlsx",
		"please help me make my thing":       "",
		"use when the user asks for a skill": "",
		"releases":                           "make-release",
	} {
		var got []string
		for _, h := range l.Search(q, 3) {
			got = append(got, h.Name)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("Search(%q) = %v, want %q", q, got, want)
		}
	}
}

// TestSearchFoldsClones: skills of the same description fold into the
// first hit of that text (Also names them), so that the other skills
// stay in the top hits; at the limit, clones of a kept hit are still
// named and no other hit is added.
func TestSearchFoldsClones(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"tidy-notes/SKILL.md": md("tidy-notes", "Tidies meeting notes into action items."),
		"tidy-mail/SKILL.md":  md("tidy-mail", "Tidies an inbox of mail."),
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		files["tidy-csv-"+n+"/SKILL.md"] = md("tidy-csv-"+n, "Tidies CSV files: trims, dedupes and sorts rows.")
	}
	write(t, dir, files)
	l := agent(t, newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}), "a")
	hits := l.Search("tidy csv rows", 3)
	if len(hits) != 3 || hits[0].Name != "tidy-csv-a" || strings.Join(hits[0].Also, " ") != "tidy-csv-b tidy-csv-c tidy-csv-d" {
		t.Fatalf("hits %+v: want tidy-csv-a first with its three clones folded", hits)
	}
	if hits[1].Also != nil || hits[2].Also != nil || hits[1].Name == hits[2].Name {
		t.Errorf("the other hits: %+v", hits[1:])
	}
	if one := l.Search("tidy csv rows", 1); len(one) != 1 || len(one[0].Also) != 2 {
		// At limit 1, three documents are looked at: two clones fold.
		t.Errorf("limit 1: %+v, want one hit with the two clones looked at", one)
	}
}
