package webui

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// storeUI is a UI over a real SQLite store and a folder of skills, with
// two agents: ops (the folder's deploy-* listed, the store's review
// inline, notes preloaded) and dev (everything of the store).
func storeUI(t *testing.T) (*service.Service, http.Handler, string) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := t.TempDir()
	writeSkill(t, root, "deploy", "name: deploy\ndescription: deploys")
	writeSkill(t, root, "notes", "name: notes\ndescription: notes from the folder")
	writeSkill(t, root, "secret-tool", "name: secret-tool\ndescription: hidden from the model\ndisable-model-invocation: true")
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"deploy*", "secret-*"}}, {Store: true, Inline: []string{"review"}}}, Preload: []string{"notes"}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { svc.Close() })
	return svc, New(svc, Options{Logger: slog.New(slog.DiscardHandler)}), root
}

func putSkill(t *testing.T, svc *service.Service, name, body string, files ...skill.BundleFile) int {
	t.Helper()
	rec, err := svc.Put(context.Background(), service.Principal{Open: true}, &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: the " + name + " skill\n---\n" + body), Files: files}, -1, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	return rec.Version
}

// post sends a form as a page of the UI would: with the CSRF token the
// pages carry (read from one), which the UI requires of every post.
func post(t *testing.T, h http.Handler, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`).FindStringSubmatch(get(t, h, "/ui/"))
	if m == nil || m[1] == "" {
		t.Fatal("the skills page carries no CSRF token")
	}
	form.Set("csrf", m[1])
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(w, r)
	return w
}

// TestVersionsTab: the history with digests, a diff of SKILL.md and the
// files between two versions, restore with the version the page showed,
// and a stale restore refused; a folder skill has no versions and says
// where it comes from.
func TestVersionsTab(t *testing.T) {
	svc, h, root := storeUI(t)
	putSkill(t, svc, "review", "# Review\n\nStep one.\nStep two.\n", skill.BundleFile{Path: "a.txt", Data: []byte("alpha\n")}, skill.BundleFile{Path: "logo.png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00")})
	v2 := putSkill(t, svc, "review", "# Review\n\nStep one.\nStep 2, changed.\n", skill.BundleFile{Path: "a.txt", Data: []byte("alpha\n"), Executable: true}, skill.BundleFile{Path: "b.md", Data: []byte("new file\n")})

	page := get(t, h, "/ui/skills/review?tab=versions")
	for _, want := range []string{"v1", "v2", "sha256:", "Changes from v1 to v2", "Step two.", "Step 2, changed.", "made executable", "<code>b.md</code> <span class=\"badge ok\">added", "<code>logo.png</code> <span class=\"badge err\">removed", `name="if_version" value="2"`, `href="/ui/skills/review?tab=versions&amp;from=1&amp;to=2#diff"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the versions tab lacks %q", want)
		}
	}
	if strings.Contains(page, "<code>a.txt</code> <span class=\"badge warn\">changed</span> <span") == false && !strings.Contains(page, "a.txt") {
		t.Error("a.txt's executable change is not listed")
	}
	// Restore v1 over v2: a new version 3 with v1's bytes.
	w := post(t, h, "/ui/skills/review/restore", url.Values{"version": {"1"}, "if_version": {"2"}})
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Location"), "restored=3") {
		t.Fatalf("restore: %d %s %s", w.Code, w.Header().Get("Location"), w.Body)
	}
	b, _, err := svc.Bundle(context.Background(), service.Principal{Open: true}, "review", 0)
	if err != nil || !strings.Contains(string(b.Content), "Step two.") {
		t.Fatalf("after restore: %v %s", err, b.Content)
	}
	// A page loaded at v2 restores again: refused, nothing written.
	w = post(t, h, "/ui/skills/review/restore", url.Values{"version": {"2"}, "if_version": {"2"}})
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "Nothing was restored") {
		t.Errorf("stale restore: %d %s", w.Code, w.Body)
	}
	if vs, _ := svc.Versions(context.Background(), service.Principal{Open: true}, "review"); len(vs) != v2+1 {
		t.Errorf("%d versions after a refused restore, want %d", len(vs), v2+1)
	}
	folder := get(t, h, "/ui/skills/deploy?tab=versions")
	if !strings.Contains(folder, "No versions: this skill is not stored") || !strings.Contains(folder, root) || !strings.Contains(folder, "Its content now: <code class=\"digest\">sha256:") {
		t.Errorf("a folder skill's versions tab:\n%s", folder)
	}
	if strings.Contains(folder, "/restore") {
		t.Error("a folder skill offers restore")
	}
}

// TestUsageTab: a load and a file read made through the service show in
// the chart (an SVG with a bar), the agents' totals, the files read and
// the recent receipts; the SVG has no style attribute and no script.
func TestUsageTab(t *testing.T) {
	svc, h, _ := storeUI(t)
	putSkill(t, svc, "review", "# Review\n", skill.BundleFile{Path: "guide.md", Data: []byte("guide\n")})
	ctx, open := context.Background(), service.Principal{Open: true}
	for range 2 {
		if _, err := svc.Load(ctx, open, "dev", "review", "http"); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := svc.ReadFile(ctx, open, "ops", "review", "guide.md", catalog.ReadOptions{}, "http"); err != nil || res.Status != "ok" {
		t.Fatalf("read: %v %+v", err, res)
	}
	page := get(t, h, "/ui/skills/review?tab=usage")
	chart := page[strings.Index(page, "<svg"):strings.Index(page, "</svg>")]
	if !strings.Contains(chart, `class="bar-load"`) || !strings.Contains(chart, `class="bar-read"`) || strings.Contains(chart, "style=") || strings.Contains(chart, "<script") {
		t.Errorf("the chart:\n%s", chart)
	}
	if !strings.Contains(chart, "2 loads, 1 file read") {
		t.Errorf("today's bar does not say 2 loads and 1 file read:\n%s", chart)
	}
	for _, want := range []string{`<td>dev</td><td class="num" data-label="Loads">2</td><td class="num" data-label="File reads">0</td>`, `<td>ops</td><td><code>guide.md</code></td><td class="num" data-label="Reads">1</td>`, "<td>load</td>", "<td>read</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the usage tab lacks %s", want)
		}
	}
}

// TestAgentsTab: each agent's mode for a skill, or why it has none.
func TestAgentsTab(t *testing.T) {
	svc, h, _ := storeUI(t)
	putSkill(t, svc, "review", "# Review\n")
	mode := func(page, agent string) string {
		i := strings.Index(page, `data-agent="`+agent+`"`)
		if i < 0 {
			t.Fatalf("no row for agent %s:\n%s", agent, page)
		}
		row := page[i:]
		return row[:strings.Index(row, "</tr>")]
	}
	review := get(t, h, "/ui/skills/review?tab=agents")
	if r := mode(review, "ops"); !strings.Contains(r, ">inline<") {
		t.Errorf("ops has review inline: %s", r)
	}
	if r := mode(review, "dev"); !strings.Contains(r, ">listed<") {
		t.Errorf("dev has review listed: %s", r)
	}
	notes := get(t, h, "/ui/skills/notes?tab=agents")
	if r := mode(notes, "ops"); !strings.Contains(r, ">preloaded<") {
		t.Errorf("ops preloads notes: %s", r)
	}
	if r := mode(notes, "dev"); !strings.Contains(r, "not available") || !strings.Contains(r, "no source of this agent holds it") {
		t.Errorf("dev has no notes: %s", r)
	}
	secret := get(t, h, "/ui/skills/secret-tool?tab=agents")
	if r := mode(secret, "ops"); !strings.Contains(r, ">hidden<") {
		t.Errorf("ops has secret-tool hidden: %s", r)
	}
	// A folder skill the patterns leave out.
	writeSkill(t, filepath.Dir(filepath.Join(mustRoot(t, svc), "x")), "unpicked", "name: unpicked\ndescription: not matched by ops' patterns")
	svc.Rescan(context.Background(), "test")
	un := get(t, h, "/ui/skills/unpicked?tab=agents")
	if r := mode(un, "ops"); !strings.Contains(r, "its patterns do not select it") {
		t.Errorf("ops leaves unpicked out by pattern: %s", r)
	}
}

func mustRoot(t *testing.T, svc *service.Service) string {
	roots := svc.Catalog().Roots()
	if len(roots) == 0 {
		t.Fatal("no roots")
	}
	return roots[0]
}
