package webui

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// The skills list, one line per skill: a description clipped
// to one line with the whole text in its title, a short source badge
// with the whole source in its title and a filter by source, and the
// optional columns shown only when a row of the page fills them.

// listUI is the UI over the given folders, one agent, receipts in memory.
func listUI(t *testing.T, roots ...string) (*service.Service, http.Handler) {
	t.Helper()
	var specs []catalog.SourceSpec
	for _, r := range roots {
		specs = append(specs, catalog.SourceSpec{Root: r})
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "all", Skills: specs}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	return svc, New(svc, Options{})
}

// rowOf is the <tr> of the named skill in a page of the list.
func rowOf(t *testing.T, page, name string) string {
	t.Helper()
	i := strings.Index(page, `<a href="/ui/skills/`+url.PathEscape(name)+`">`)
	if i < 0 {
		t.Fatalf("no row for %s", name)
	}
	start := strings.LastIndex(page[:i], "<tr")
	end := strings.Index(page[i:], "</tr>")
	return page[start : i+end]
}

// headers are the column headers of the list's table, as text.
func headers(page string) []string {
	thead := page[strings.Index(page, "<thead>"):strings.Index(page, "</thead>")]
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<th(?:\s[^>]*)?>(.*?)</th>`).FindAllStringSubmatch(thead, -1) {
		out = append(out, html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], "")))
	}
	return out
}

// TestSkillsListOneLine: a long description, over several lines in its
// YAML, shows as one line cut near summaryRunes, with the whole text in
// the cell's title; a short one shows whole. No row carries the
// description under the name (the old two-line row).
func TestSkillsListOneLine(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Checks the deployment plan against the runbook & reports gaps. ", 12) // 756 characters
	writeSkill(t, dir, "long", "name: long\ndescription: >\n  "+strings.ReplaceAll(long, ". ", ".\n  "))
	writeSkill(t, dir, "short", "name: short\ndescription: Says hello. Use when greeting.")
	_, h := listUI(t, dir)
	page := get(t, h, "/ui/")
	row := rowOf(t, page, "long")
	m := regexp.MustCompile(`<td class="ds" title="([^"]*)">([^<]*)</td>`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("the row has no one-line description cell with a title:\n%s", row)
	}
	if title := html.UnescapeString(m[1]); strings.Join(strings.Fields(title), " ") != strings.TrimSpace(long) {
		t.Errorf("the title is not the whole description:\n%q", title)
	}
	shown := html.UnescapeString(m[2])
	if n := utf8.RuneCountInString(shown); n > summaryRunes+1 || !strings.HasSuffix(shown, "…") || strings.Contains(shown, "\n") {
		t.Errorf("the row shows %d characters %q: want one line of at most %d and an ellipsis", n, shown, summaryRunes+1)
	}
	if strings.Contains(page, `class="desc"`) {
		t.Error("a row still carries the description under the name")
	}
	if !strings.Contains(rowOf(t, page, "short"), `<td class="ds" title="Says hello. Use when greeting.">Says hello. Use when greeting.</td>`) {
		t.Errorf("the short description is not shown whole:\n%s", rowOf(t, page, "short"))
	}
}

// TestSummaryLimit: a description of exactly summaryRunes characters is
// shown whole; one more and it is cut, with an ellipsis; runs of spaces
// and line breaks are one space.
func TestSummaryLimit(t *testing.T) {
	at := strings.Repeat("é", summaryRunes)
	if got := summary(at); got != at {
		t.Errorf("at the limit: %q", got)
	}
	past := strings.Repeat("é", summaryRunes+1)
	if got := summary(past); got != strings.Repeat("é", summaryRunes)+"…" {
		t.Errorf("one past the limit: %q", got)
	}
	words := strings.Repeat("word ", 40)
	got := summary(words)
	if !strings.HasSuffix(got, "word…") || utf8.RuneCountInString(got) > summaryRunes+1 {
		t.Errorf("cut mid-word or too long: %q", got)
	}
	if got := summary("two\n  lines"); got != "two lines" {
		t.Errorf("line breaks: %q", got)
	}
}

// TestSkillsListHidesEmptyColumns: with no tags, category, version or use
// on the page, those columns are not there; a page with one skill that
// has a version (or tags, or a load) shows that column, and only that.
func TestSkillsListHidesEmptyColumns(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		writeSkill(t, dir, fmt.Sprintf("plain-%d", i), fmt.Sprintf("name: plain-%d\ndescription: A plain skill %d.", i, i))
	}
	writeSkill(t, dir, "versioned", "name: versioned\ndescription: Has a version.\nmetadata:\n  version: 2.1.0")
	writeSkill(t, dir, "tagged", "name: tagged\ndescription: Has tags.\nmetadata:\n  tags: ops")
	svc, h := listUI(t, dir)
	optional := []string{"Tags · category", "Version", "Loads (7 days)", "Last used"}
	has := func(hs []string, col string) bool {
		for _, h := range hs {
			if h == col {
				return true
			}
		}
		return false
	}
	plain := headers(get(t, h, "/ui/?q=plain"))
	for _, col := range optional {
		if has(plain, col) {
			t.Errorf("the page of plain skills shows the empty column %q: %v", col, plain)
		}
	}
	for _, col := range []string{"Name", "Description", "Source", "State", "Problems"} {
		if !has(plain, col) {
			t.Errorf("the page lacks the column %q: %v", col, plain)
		}
	}
	// One value on the page is enough to show its column, and no other.
	if hs := headers(get(t, h, "/ui/?q=versioned")); !has(hs, "Version") || has(hs, "Tags · category") || has(hs, "Loads (7 days)") {
		t.Errorf("a page with a versioned skill: %v", hs)
	}
	if hs := headers(get(t, h, "/ui/?q=a")); !has(hs, "Version") || !has(hs, "Tags · category") {
		t.Errorf("a page with a version and a tag: %v", hs)
	}
	// Sorted by use, the use columns stay (the sort is shown) even empty.
	if hs := headers(get(t, h, "/ui/?q=plain&sort=usage")); !has(hs, "Loads (7 days)") || has(hs, "Last used") {
		t.Errorf("sorted by use: %v", hs)
	}
	if _, err := svc.Load(context.Background(), service.Principal{Open: true}, "all", "plain-1", "http"); err != nil {
		t.Fatal(err)
	}
	h = New(svc, Options{}) // a new UI reads the usage now, not after UsageTTL
	hs := headers(get(t, h, "/ui/?q=plain"))
	if !has(hs, "Loads (7 days)") || !has(hs, "Last used") {
		t.Errorf("a page with a loaded skill lacks the use columns: %v", hs)
	}
	if !strings.Contains(rowOf(t, get(t, h, "/ui/?q=plain"), "plain-0"), `<td class="ld">0</td>`) {
		t.Error("a skill not loaded does not show 0 loads beside one that was")
	}
}

// TestSkillsListSourceBadge: a row names its source in a short badge (the
// kind and the folder's name) with the whole path in its title; folders
// whose names are alike get a longer badge each; ?source= takes one
// source, or a kind; a source the catalog does not have matches nothing.
func TestSkillsListSourceBadge(t *testing.T) {
	base := t.TempDir()
	a, b, c := filepath.Join(base, "team", "skills"), filepath.Join(base, "ops", "skills"), filepath.Join(base, "examples")
	writeSkill(t, a, "alpha", "name: alpha\ndescription: From team.")
	writeSkill(t, b, "beta", "name: beta\ndescription: From ops.")
	writeSkill(t, c, "gamma", "name: gamma\ndescription: From examples.")
	writeSkill(t, c, "delta", "name: delta\ndescription: From examples too.")
	_, h := listUI(t, a, b, c)
	page := get(t, h, "/ui/")
	badge := func(name string) (label, title string) {
		m := regexp.MustCompile(`<span class="badge src" title="([^"]*)">([^<]*)</span>`).FindStringSubmatch(rowOf(t, page, name))
		if m == nil {
			t.Fatalf("%s: no source badge in\n%s", name, rowOf(t, page, name))
		}
		return html.UnescapeString(m[2]), html.UnescapeString(m[1])
	}
	if l, ti := badge("gamma"); l != "folder: examples" || ti != c {
		t.Errorf("gamma's badge %q title %q, want folder: examples and %s", l, ti, c)
	}
	if l, ti := badge("alpha"); l != "folder: team/skills" || ti != a {
		t.Errorf("alpha's badge %q title %q: two folders named skills need their parent", l, ti)
	}
	if l, _ := badge("beta"); l != "folder: ops/skills" {
		t.Errorf("beta's badge %q", l)
	}
	// The long path is in the title only, never as the row's text.
	if strings.Contains(regexp.MustCompile(`title="[^"]*"`).ReplaceAllString(rowOf(t, page, "gamma"), ""), c) {
		t.Error("gamma's row shows the whole path as text")
	}
	// The filter offers each source, the most skills first, and takes one.
	if !strings.Contains(page, `<option value="folder:`+c+`">folder: examples (2)</option>`) {
		t.Errorf("the source filter does not offer examples:\n%s", page[strings.Index(page, `<select id="f-source"`):][:600])
	}
	if n := rowNames(get(t, h, "/ui/?source="+url.QueryEscape("folder:"+c))); strings.Join(n, ",") != "delta,gamma" {
		t.Errorf("source=examples: %v", n)
	}
	one := get(t, h, "/ui/?source="+url.QueryEscape("folder:"+a))
	if n := rowNames(one); strings.Join(n, ",") != "alpha" {
		t.Errorf("source=team/skills: %v", n)
	}
	if !strings.Contains(one, `<option value="folder:`+a+`" selected>`) {
		t.Error("the filter does not show the source in force")
	}
	if n := rowNames(get(t, h, "/ui/?source=folder")); len(n) != 4 {
		t.Errorf("source=folder (a kind): %v", n)
	}
	// No: a source the catalog does not have matches nothing, and says so;
	// a value that is no source is no filter.
	gone := get(t, h, "/ui/?source="+url.QueryEscape("folder:/no/such/folder"))
	if n := rowNames(gone); len(n) != 0 || !strings.Contains(gone, `<option value="folder:/no/such/folder" selected>`) {
		t.Errorf("an unknown source: rows %v", n)
	}
	if n := rowNames(get(t, h, "/ui/?source=nonsense")); len(n) != 4 {
		t.Errorf("source=nonsense: %v", n)
	}
	// The filter keeps the sort, and the sort the filter.
	if n := rowNames(get(t, h, "/ui/?order=desc&source="+url.QueryEscape("folder:"+c))); strings.Join(n, ",") != "gamma,delta" {
		t.Errorf("source and name descending: %v", n)
	}
	q := parseSkillsQuery(url.Values{"source": {"folder:" + c}, "sort": {"files"}})
	if got := q.SortURL("name"); got != "/ui/?source="+url.QueryEscape("folder:"+c) {
		t.Errorf("the sort link drops the source: %s", got)
	}
}

// TestSourceLabels: a git skill's badge is its repository's name, the URL,
// ref and commit in the title; a plugin's is its id; the store's is
// "store", its version in the title.
func TestSourceLabels(t *testing.T) {
	git := skill.Origin{Kind: "git", Root: "https://git.example.com/team/agent-skills.git", Ref: "main", Revision: "3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d", Provenance: "skills/pdf"}
	for _, c := range []struct {
		o            skill.Origin
		label, title string
	}{
		{git, "git: agent-skills", "git https://git.example.com/team/agent-skills.git@main 3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d skills/pdf"},
		{skill.Origin{Kind: "plugin", Plugin: "acme", Trust: "self_host_guarded"}, "plugin: acme", "plugin acme · self_host_guarded"},
		{skill.Origin{Kind: "store", Version: 3}, "store", "store v3"},
		{skill.Origin{Kind: "folder", Root: "/srv/skills/examples/"}, "folder: examples", "/srv/skills/examples/"},
	} {
		if got := sourceBadge(c.o, 0); got != c.label {
			t.Errorf("sourceBadge(%+v) = %q, want %q", c.o, got, c.label)
		}
		if got := sourceText(c.o); got != c.title {
			t.Errorf("sourceText(%+v) = %q, want %q", c.o, got, c.title)
		}
	}
	if got := sourceBadge(git, 1); got != "git: team/agent-skills@main" {
		t.Errorf("the longer git label: %q", got)
	}
	if sourceKey(git) == sourceKey(skill.Origin{Kind: "git", Root: git.Root, Ref: "release"}) {
		t.Error("two refs of one repository are one source")
	}
}

// TestSkillsListSafetyPending: while a safety run is under way (the
// server's first, over every file of every skill, takes seconds at 10,000
// skills), the list answers within safetyWait without the findings and
// says so; the next requests get those rows at once, without waiting
// again; once the run ends, the next request counts the findings.
func TestSkillsListSafetyPending(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "keyed", "name: keyed\ndescription: Ships. Use when shipping.")
	if err := os.MkdirAll(filepath.Join(dir, "keyed", "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A secret in a script: a safety error the list's count includes.
	if err := os.WriteFile(filepath.Join(dir, "keyed", "scripts", "ship.sh"), []byte("#!/bin/sh\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLF aws s3 ls\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "plain", "name: plain\ndescription: Plain. Use when plain.")
	svc, _ := listUI(t, dir)
	u := newUI(svc, Options{})
	page := func() (string, time.Duration) {
		start := time.Now()
		w := serve(u.skillsPage, openP, httptest.NewRequest("GET", "/ui/?problems=1", nil))
		return w.Body.String(), time.Since(start)
	}
	// A run under way that does not end (as the server's first one).
	c := u.cache()
	run := &scanRun{done: make(chan struct{})}
	c.scan = run
	p, took := page()
	if took < safetyWait {
		t.Errorf("the list answered in %v, without waiting %v for the run", took, safetyWait)
	}
	if !strings.Contains(p, `id="skills-pending"`) || len(rowNames(p)) != 0 {
		t.Errorf("while the run is under way: pending notice %v, rows with problems %v", strings.Contains(p, `id="skills-pending"`), rowNames(p))
	}
	p, took = page()
	if took >= safetyWait || !strings.Contains(p, `id="skills-pending"`) {
		t.Errorf("the second request while the run is under way took %v (pending %v): want the kept rows at once", took, strings.Contains(p, `id="skills-pending"`))
	}
	// The run ends (as the server's would: the catalog keeps its report).
	svc.Report(context.Background())
	c.mu.Lock()
	c.scan = nil
	c.mu.Unlock()
	close(run.done)
	p, _ = page()
	if strings.Contains(p, `id="skills-pending"`) || strings.Join(rowNames(p), ",") != "keyed" {
		t.Errorf("after the run: pending %v, rows with problems %v, want keyed", strings.Contains(p, `id="skills-pending"`), rowNames(p))
	}
	if len(c.sets) != 1 || c.sets[0].pending {
		t.Errorf("%d row sets kept (want 1, with the findings)", len(c.sets))
	}
}

// TestSourceOptionsBounded: a catalog of many plugins offers the kind and
// the MaxSourceOptions largest sources, not one option a source; at the
// limit, every source.
func TestSourceOptionsBounded(t *testing.T) {
	for _, c := range []struct{ sources, want int }{{MaxSourceOptions, MaxSourceOptions + 1}, {MaxSourceOptions + 1, MaxSourceOptions + 1}} {
		srcs, origin := map[string]*sourceOption{}, map[string]skill.Origin{}
		for i := range c.sources {
			o := skill.Origin{Kind: "plugin", Plugin: fmt.Sprintf("p%03d", i)}
			srcs[sourceKey(o)] = &sourceOption{Value: sourceKey(o), N: 1 + i}
			origin[sourceKey(o)] = o
		}
		got := sourceOptions(srcs, origin)
		if len(got) != c.want || got[0].Value != "plugin" || got[1].Label != fmt.Sprintf("plugin: p%03d", c.sources-1) {
			t.Errorf("%d sources: %d options starting %v, want %d: the kind, then the largest", c.sources, len(got), got[:2], c.want)
		}
	}
}
