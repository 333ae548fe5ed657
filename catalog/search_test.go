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
	"github.com/loadout/loadout/skill"
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
	checkExhaustive(t, l, queries)
}

// TestSearchMatchesExhaustiveClones: the same with clones, some named
// before the skill they copy (so they are the representative), some
// after, and queries naming them.
func TestSearchMatchesExhaustiveClones(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Tree(dir, 1500, 1); err != nil {
		t.Fatal(err)
	}
	var files []string
	testutil.Must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "SKILL.md" {
			files = append(files, p)
		}
		return err
	}))
	var cloned []string
	for i, p := range files[:80] {
		data, err := os.ReadFile(p)
		testutil.Must(t, err)
		name := filepath.Base(filepath.Dir(p))
		for k := range i % 6 {
			clone := fmt.Sprintf("zzz-%s-%d", name, k)
			if k%2 == 1 {
				clone = fmt.Sprintf("aaa-%s-%d", name, k)
			}
			cloned = append(cloned, clone)
			text := strings.Replace(string(data), "name: "+name+"\n", "name: "+clone+"\n", 1)
			write(t, dir, map[string]string{"clones/" + clone + "/SKILL.md": text})
		}
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	testutil.Must(t, err)
	l, _ := c.Agent("a")
	if len(l.Names()) != 1500+len(cloned) {
		t.Fatalf("%d skills, want %d", len(l.Names()), 1500+len(cloned))
	}
	descs := map[string]bool{}
	for _, e := range l.Entries() {
		descs[e.Skill.Description] = true
	}
	if ix := l.index(); ix.live != len(descs) || len(descs) > 1500 {
		t.Fatalf("%d documents, want %d (a description each, clones are one)", ix.live, len(descs))
	}
	checkExhaustive(t, l, append([]string{"release notes for the api", "deploy the backend", "pdf", "sear", "the"}, cloned[:20]...))
}

func checkExhaustive(t *testing.T, l *Loadout, queries []string) {
	t.Helper()
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

// TestSearchFoldsClones: skills of the same description are one
// document, the first by name its hit and the others in its Also, so
// that the other skills stay in the top hits, at every limit.
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
	if one := l.Search("tidy csv rows", 1); len(one) != 1 || !reflect.DeepEqual(one[0], hits[0]) {
		t.Errorf("limit 1: %+v, want %+v (the document, all its clones)", one, hits[0])
	}
}

// manyClones: 40 clones of a skill (sa-00 to sa-39), 40 of another
// (sb-*), and sc, matching three, two and one of "alpha beta gamma";
// sd's description differs from sc's by one character, se's by case.
func manyClones(t *testing.T) *Loadout {
	dir := t.TempDir()
	files := map[string]string{
		"sc/SKILL.md": md("sc", "Handles alpha records."),
		"sd/SKILL.md": md("sd", "Handles alpha records!"),
		"se/SKILL.md": md("se", "handles alpha records."),
	}
	for i := range 40 {
		for _, p := range [][2]string{{"sa", "Handles alpha, beta and gamma records."}, {"sb", "Handles alpha and beta records."}} {
			n := fmt.Sprintf("%s-%02d", p[0], i)
			files[n+"/SKILL.md"] = md(n, p[1])
		}
	}
	for i := range 5 {
		n := fmt.Sprintf("filler-%d", i)
		files[n+"/SKILL.md"] = md(n, "Sorts delta records.")
	}
	write(t, dir, files)
	return agent(t, newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}), "a")
}

func seq(prefix string, from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprintf("%s-%02d", prefix, i))
	}
	return strings.Join(s, " ")
}

// TestSearchFoldsManyClones: clones fold whatever their number (40 of
// each of two skills do not crowd out a third), a hit names at most 16
// of them, and descriptions that differ by one character or by case are
// not clones.
func TestSearchFoldsManyClones(t *testing.T) {
	l := manyClones(t)
	for _, limit := range []int{1, 3, 10} {
		hits := l.Search("alpha beta gamma", limit)
		want := []string{"sa-00", "sb-00", "sc", "sd", "se"}[:min(limit, 5)]
		if got := hitNames(hits); got != strings.Join(want, " ") {
			t.Fatalf("limit %d: %s, want %s", limit, got, strings.Join(want, " "))
		}
		if got := strings.Join(hits[0].Also, " "); got != seq("sa", 1, 16) {
			t.Errorf("limit %d: sa-00's Also is %s, want the first 16 clones by name", limit, got)
		}
		if limit > 1 && strings.Join(hits[1].Also, " ") != seq("sb", 1, 16) {
			t.Errorf("limit %d: sb-00's Also is %v", limit, hits[1].Also)
		}
		for _, h := range hits[min(limit, 2):] {
			if h.Also != nil {
				t.Errorf("limit %d: %s has Also %v: a description differing by a character or by case is not a clone", limit, h.Name, h.Also)
			}
		}
	}
	// The near clones score alike (the same words), and apart.
	if hs := l.Search("alpha beta gamma", 5); hs[2].Score != hs[3].Score || hs[3].Score != hs[4].Score {
		t.Errorf("sc, sd, se: %+v, want the same score", hs[2:])
	}
	ix := l.index()
	if ix.live != 6 || len(ix.clones) != 3 {
		t.Errorf("%d documents, %d with clones; want 6 (sa, sb, sc, sd, se, the fillers'), 3", ix.live, len(ix.clones))
	}
}

// TestSearchClonesKeepIdf: clones do not make their words look common: a
// skill scores as much with 20 clones as alone, and so do the others.
func TestSearchClonesKeepIdf(t *testing.T) {
	files := map[string]string{
		"invoice-ledger/SKILL.md": md("invoice-ledger", "Converts invoices to ledger entries."),
		"receipts/SKILL.md":       md("receipts", "Converts receipts to ledger entries."),
		"archive/SKILL.md":        md("archive", "Archives old invoices."),
		"weather/SKILL.md":        md("weather", "Reads the weather."),
	}
	search := func(clones int) []Hit {
		dir := t.TempDir()
		write(t, dir, files)
		for i := range clones {
			n := fmt.Sprintf("invoice-ledger-copy-%02d", i)
			write(t, dir, map[string]string{n + "/SKILL.md": md(n, "Converts invoices to ledger entries.")})
		}
		return agent(t, newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}), "a").Search("invoices ledger", 5)
	}
	alone, cloned := search(0), search(20)
	if len(alone) != 3 || len(cloned) != 3 {
		t.Fatalf("alone %+v, cloned %+v: want 3 hits each", alone, cloned)
	}
	if len(cloned[0].Also) != 16 {
		t.Errorf("Also: %v, want 16 clones named", cloned[0].Also)
	}
	for i := range alone {
		if a, c := alone[i], cloned[i]; a.Name != c.Name || a.Score != c.Score {
			t.Errorf("hit %d: %s %.3f alone, %s %.3f with 20 clones of invoice-ledger", i, a.Name, a.Score, c.Name, c.Score)
		}
	}
}

// TestSearchWholeNameOfClone: a query that is a clone's whole name puts
// its document first (the representative's hit); one that is no name
// gets no bonus.
func TestSearchWholeNameOfClone(t *testing.T) {
	l := manyClones(t)
	for q, want := range map[string]string{"sb-03": "sb-00", "sb-25": "sb-00", "sa-39": "sa-00", "sc": "sc", "sd": "sd"} {
		hs := l.Search(q, 3)
		if len(hs) == 0 || hs[0].Name != want || hs[0].Score < 100 {
			t.Errorf("Search(%q) = %+v, want %s first with the whole-name bonus", q, hs, want)
		}
	}
	if hs := l.Search("sb-03", 1); !strings.Contains(strings.Join(hs[0].Also, " "), "sb-03") {
		t.Errorf("Search(sb-03): Also %v does not name sb-03", hs[0].Also)
	}
	if hs := l.Search("sb-99", 3); len(hs) == 0 || hs[0].Score >= 100 {
		t.Errorf("Search(sb-99) = %+v: no skill has that name, want no bonus", hs)
	}
}

// TestSearchIndexPatchedClones: a write that makes a skill join or leave
// a description's document patches the index (the postings of a term
// no change touched are shared), and the patched index ranks exactly as
// one built afresh.
func TestSearchIndexPatchedClones(t *testing.T) {
	const g = "Tidies CSV files and sorts rows."
	f := &fakeStore{skills: map[string]*skill.Skill{}}
	for _, n := range []string{"g-10", "g-20", "g-30"} {
		f.put(storedWith(t, n, g, 1))
	}
	for i := range 40 { // enough that the documents removed stay under a third
		f.put(storedWith(t, fmt.Sprintf("base-%02d", i), fmt.Sprintf("Checks rows of table %d.", i), 1))
	}
	f.put(storedWith(t, "keep", "Feeds the zebra.", 1))
	specs := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true}}}}
	c, err := New(context.Background(), specs, Options{Store: f})
	testutil.Must(t, err)
	queries := []string{"tidy csv files", "csv rows", "rows", "g-10", "g-25", "g-05", "g-30", "base-03", "sorts", "zebra"}
	steps := []struct {
		what  string
		do    func()
		names []string
	}{
		{"a clone joins after the representative", func() { f.put(storedWith(t, "g-25", g, 1)) }, []string{"g-25"}},
		{"a clone joins before it: the representative changes", func() { f.put(storedWith(t, "g-05", g, 1)) }, []string{"g-05"}},
		{"the representative leaves", func() { f.remove("g-05") }, []string{"g-05"}},
		{"a clone leaves", func() { f.remove("g-20") }, []string{"g-20"}},
		{"a clone is edited to another description", func() { f.put(storedWith(t, "g-30", "Sorts CSV rows.", 2)) }, []string{"g-30"}},
		{"a skill is edited to a group's description", func() { f.put(storedWith(t, "base-03", g, 2)) }, []string{"base-03"}},
		{"a clone's body is edited", func() { f.put(storedWith(t, "g-25", g, 3)) }, []string{"g-25"}},
		{"two leave, one joins", func() { f.remove("g-10"); f.remove("g-25"); f.put(storedWith(t, "g-30", g, 3)) }, []string{"g-10", "g-25", "g-30"}},
		{"all leave", func() { f.remove("base-03"); f.remove("g-30") }, []string{"base-03", "g-30"}},
		{"one comes back", func() { f.put(storedWith(t, "g-20", g, 4)) }, []string{"g-20"}},
	}
	for i, s := range steps {
		l := agent(t, c, "a")
		l.Search("csv", 3) // index it
		s.do()
		c.RefreshStored(context.Background(), s.names...)
		p := agent(t, c, "a")
		if p.base == nil {
			t.Fatalf("step %d (%s): the loadout does not start from the previous index", i, s.what)
		}
		fresh, err := New(context.Background(), specs, Options{Store: plainStore{f}})
		testutil.Must(t, err)
		for _, q := range queries {
			for _, limit := range []int{1, 8} {
				got, want := p.Search(q, limit), agent(t, fresh, "a").Search(q, limit)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("step %d (%s), %q limit %d:\npatched %+v\nfresh   %+v", i, s.what, q, limit, got, want)
				}
			}
		}
		old, ix := l.search.Load(), p.search.Load()
		if &ix.terms["zebra"][0] != &old.terms["zebra"][0] {
			t.Errorf("step %d (%s): the index was built afresh, not patched", i, s.what)
		}
	}
}

// TestWarmSearch: WarmSearch builds the index a first search would, and
// the search after it uses that index rather than building another.
func TestWarmSearch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md": md("deploy", "Ship a build to production. Use when asked to deploy."),
		"lint/SKILL.md":   md("lint", "Check code style. Use when asked to lint."),
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.Agent("a")
	if l.search.Load() != nil {
		t.Fatal("an index before any search or warm-up")
	}
	l.WarmSearch()
	ix := l.search.Load()
	if ix == nil {
		t.Fatal("WarmSearch built no index")
	}
	if hits := l.Search("deploy a build", 3); len(hits) == 0 || hits[0].Name != "deploy" {
		t.Errorf("search after the warm-up: %v", hits)
	}
	if l.search.Load() != ix {
		t.Error("the search after the warm-up built another index")
	}
}

// BenchmarkSearchRoute10k: bench/routes.sh's search ("release notes for
// the api", limit 10) over 10,000 skills of bench/gen, the query a search
// answer cache does not help with the first time.
func BenchmarkSearchRoute10k(b *testing.B) {
	l, _ := searchGenTree(b, 10000)
	for b.Loop() {
		l.Search("release notes for the api", 10)
	}
}
