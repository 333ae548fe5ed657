package webui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// TestSkillsPageInBrowser: `loadout serve --demo` serves the UI at /ui/
// (and sends a browser at / there), with the strict CSP, and the skills
// page lists the example skills in a real Chromium.
func TestSkillsPageInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--demo")

	resp, err := http.Get(srv.URL + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy: %q", csp)
	}

	browsertest.Do(t, ctx, "open /", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	loc := browsertest.Get(t, ctx, "location", chromedp.Location())
	if !strings.HasSuffix(loc, "/ui/") {
		t.Errorf("a browser at / landed on %s, want /ui/", loc)
	}
	body := browsertest.Get(t, ctx, "table text", chromedp.Text(chromedp.CSS("main")))
	for _, name := range []string{"code-review", "deploy", "release-checklist"} {
		if !strings.Contains(body, name) {
			t.Errorf("the skills page does not list %s:\n%s", name, body)
		}
	}
}

// TestOddSkillNamesInBrowser: the lenient loader accepts names holding
// "/", "?", "#" and spaces (a plugin-style "ui-toolkit/web"); every page
// links to them path-escaped, so each opens its own skill page and tabs.
func TestOddSkillNamesInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	root := t.TempDir()
	names := []string{"ui-toolkit/web", "what? #1"}
	for i, name := range names {
		dir := filepath.Join(root, fmt.Sprintf("s%d", i))
		if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(name)
		text := fmt.Sprintf("---\nname: %s\ndescription: An oddly named skill, number %d.\n---\nSee [the notes](references/notes.md).\n", q, i)
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "references", "notes.md"), []byte("# Notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--root", root, "--db", filepath.Join(t.TempDir(), "l.db"))
	for _, name := range names {
		browsertest.Do(t, ctx, "skills page", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("main h1")))
		href := browsertest.Get(t, ctx, "the link to "+name, chromedp.Evaluate[string](
			`[...document.querySelectorAll("main table a")].find(a => a.textContent === `+strconv.Quote(name)+`)?.getAttribute("href") || ""`))
		if href != "/ui/skills/"+url.PathEscape(name) {
			t.Errorf("the skills page links %q as %q", name, href)
			continue
		}
		for _, tab := range []string{"", "?tab=files", "?tab=preview"} {
			browsertest.Do(t, ctx, "open "+name+tab, chromedp.Navigate(srv.URL+href+tab), chromedp.WaitVisible(chromedp.CSS("main h1")))
			h1 := browsertest.Get(t, ctx, "h1", chromedp.Text(chromedp.CSS("main h1")))
			if !strings.HasPrefix(h1, name) {
				t.Errorf("%s%s shows %q", href, tab, h1)
			}
		}
		// The preview's relative link opens the skill's own file.
		browsertest.Do(t, ctx, "follow the notes link", chromedp.Click(chromedp.CSS(`main a[href*="notes.md"]`)), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if body := browsertest.Get(t, ctx, "notes", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "Notes") {
			t.Errorf("%s: the notes link shows %q", name, body)
		}
	}
}
