package webui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// TestNavigationFoldsOnPhone: at a phone's width the main navigation is
// one Menu button (aria-expanded false) and its links are hidden; the
// button opens and closes it. At a laptop's width there is no button and
// every link shows on the header's one line.
func TestNavigationFoldsOnPhone(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	srv := newCatalog(t).serve(t)
	type state struct {
		Button   bool    `json:"button"`   // the Menu button is displayed
		Expanded string  `json:"expanded"` // its aria-expanded
		Links    int     `json:"links"`    // main navigation links displayed
		Header   float64 `json:"header"`   // the header's height, px
	}
	look := func(what string) state {
		t.Helper()
		return browsertest.Get(t, ctx, what, chromedp.Evaluate[state](`(() => {
			const b = document.querySelector("header.top .menu-toggle");
			const shown = el => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
			return {
				button: shown(b),
				expanded: b ? (b.getAttribute("aria-expanded") || "") : "",
				links: Array.from(document.querySelectorAll('nav[aria-label="Main"] a')).filter(shown).length,
				header: document.querySelector("header.top").getBoundingClientRect().height,
			};
		})()`))
	}

	browsertest.Do(t, ctx, "phone width", chromedp.EmulateViewport(375, 800, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(srv.URL+"/ui/agents"))
	settle(t, ctx)
	s := look("the header on a phone")
	if !s.Button || s.Expanded != "false" || s.Links != 0 {
		t.Errorf("on a phone the navigation should fold behind a Menu button: %+v", s)
	}
	if s.Header > 60 {
		t.Errorf("the folded header is %v px tall on a phone; want one line (at most 60 px)", s.Header)
	}
	browsertest.Do(t, ctx, "open the menu", chromedp.Click(chromedp.CSS("header.top .menu-toggle")))
	if s := look("the opened menu"); s.Expanded != "true" || s.Links < 4 {
		t.Errorf("the Menu button should show the navigation's links: %+v", s)
	}
	browsertest.Do(t, ctx, "close the menu", chromedp.Click(chromedp.CSS("header.top .menu-toggle")))
	if s := look("the closed menu"); s.Expanded != "false" || s.Links != 0 {
		t.Errorf("a second press should fold the navigation again: %+v", s)
	}

	browsertest.Do(t, ctx, "laptop width", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+"/ui/agents"))
	settle(t, ctx)
	if s := look("the header on a laptop"); s.Button || s.Links < 4 || s.Header > 60 {
		t.Errorf("on a laptop every link should show on one line, with no Menu button: %+v", s)
	}
}
