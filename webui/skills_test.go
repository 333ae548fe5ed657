package webui

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

func writeSkill(t testing.TB, dir, name, frontmatter string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\n"+frontmatter+"\n---\nBody of "+name+".\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rowNames are the skill names of the results table, in order.
func rowNames(html string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<td class="nm"><a href="/ui/skills/([^"]+)">`).FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestSkillsListFilterSortPages: the list's state is its URL: text, tag,
// category, source and problem filters, the sorts, and pages of 100;
// partial=1 sends only the results; a shadowed skill is listed as such
// with its winner.
func TestSkillsListFilterSortPages(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeSkills(t, a, 250)
	writeSkill(t, a, "dup", "name: dup\ndescription: the first dup")
	writeSkill(t, b, "dup", "name: dup\ndescription: the second dup")
	writeSkill(t, b, "mismatch-dir", "name: other-name\ndescription: a skill whose folder does not match its name")
	// A link leaving a skill folder is a problem of that skill.
	if err := os.Symlink("/etc/passwd", filepath.Join(a, "skill-00005", "leak")); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "all", Skills: []catalog.SourceSpec{{Root: a}, {Root: b}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	defer svc.Close()
	h := New(svc, Options{})
	open := service.Principal{Open: true}
	for range 3 {
		svc.Load(context.Background(), open, "all", "skill-00007", "http")
	}
	svc.Load(context.Background(), open, "all", "skill-00100", "http")

	page1 := get(t, h, "/ui/")
	if n := rowNames(page1); len(n) != SkillsPageSize || n[0] != "dup" {
		t.Errorf("page 1: %d rows starting %v", len(n), n[:min(3, len(n))])
	}
	if !strings.Contains(page1, "253 skills") || !strings.Contains(page1, "Page 1 of 3") {
		t.Errorf("page 1 does not count 253 skills in 3 pages")
	}
	if !strings.Contains(page1, `class="shadowed"`) || !strings.Contains(page1, a+" wins this name") {
		t.Errorf("the second dup is not shown shadowed with its winner %s", a)
	}
	if !strings.Contains(page1, `href="/ui/?page=2"`) {
		t.Error("no link to page 2")
	}
	if n := rowNames(get(t, h, "/ui/?page=3")); len(n) != 53 {
		t.Errorf("page 3 has %d rows, want 53", len(n))
	}

	part := get(t, h, "/ui/?q=NUMBER+12&partial=1")
	if strings.Contains(part, "<html") || strings.Contains(part, "skills-filter") {
		t.Error("partial=1 sent more than the results")
	}
	if n := rowNames(part); len(n) != 11 || n[0] != "skill-00012" { // 12, 120..129
		t.Errorf("q=number 12: %v", n)
	}
	if n := rowNames(get(t, h, "/ui/?tag=TAG-3&category=cat-3")); len(n) == 0 || n[0] != "skill-00003" {
		t.Errorf("tag and category filter: %v", n)
	}
	if n := rowNames(get(t, h, "/ui/?sort=usage")); len(n) < 2 || n[0] != "skill-00007" || n[1] != "skill-00100" {
		t.Errorf("sort=usage: %v", n[:min(3, len(n))])
	}
	if n := rowNames(get(t, h, "/ui/?sort=usage&order=asc&page=3")); n[len(n)-1] != "skill-00007" {
		t.Errorf("sort=usage ascending, last page ends %v", n[len(n)-1])
	}
	if n := rowNames(get(t, h, "/ui/?sort=files&q=skill-0000")); len(n) != 10 || n[0] != "skill-00000" {
		t.Errorf("sort=files: %v", n)
	}
	if n := rowNames(get(t, h, "/ui/?order=desc")); n[0] != "skill-00249" {
		t.Errorf("name descending starts %v", n[0])
	}
	probs := rowNames(get(t, h, "/ui/?problems=1"))
	if !slices.Contains(probs, "skill-00005") || !slices.Contains(probs, "dup") || len(probs) > 4 {
		t.Errorf("problems=1: %v", probs)
	}
	if n := rowNames(get(t, h, "/ui/?shadowed=1")); len(n) != 1 || n[0] != "dup" {
		t.Errorf("shadowed=1: %v", n)
	}
	if n := rowNames(get(t, h, "/ui/?source=store")); len(n) != 0 {
		t.Errorf("source=store: %v", n)
	}
	// Every state is a URL: the sort links keep the filter.
	q := parseSkillsQuery(url.Values{"q": {"x"}, "tag": {"t"}, "page": {"4"}})
	if got := q.SortURL("usage"); got != "/ui/?q=x&sort=usage&tag=t" {
		t.Errorf("SortURL: %s", got)
	}
}
