package webui_test

import (
	"net/http"
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
