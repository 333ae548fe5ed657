package webui_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/internal/browsertest"
)

// TestSkillsListFitsInBrowser: the skills list over 120 generated skills
// (descriptions of 50 to 900 characters, bench/gen) served by the real
// binary. At 1280×800 a page of 100 rows shows at least 15 of them in the
// first screen, each row one line high; at 375×800 neither the page nor
// the table scrolls sideways. The first screen of each is saved
// (skills-list-1280.png, skills-list-375.png; LOADOUT_UPDATE_SCREENSHOTS
// puts them in docs/ui).
func TestSkillsListFitsInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	dir := filepath.Join(t.TempDir(), "skills")
	if err := gen.Tree(dir, 120, 1); err != nil {
		t.Fatal(err)
	}
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--root", dir, "--db", filepath.Join(t.TempDir(), "l.db"), "--no-watch")
	shot := func(name string) {
		t.Helper()
		buf := browsertest.Get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
		out := t.TempDir()
		if os.Getenv("LOADOUT_UPDATE_SCREENSHOTS") != "" {
			out = filepath.Join("..", "docs", "ui")
		}
		if err := os.WriteFile(filepath.Join(out, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", filepath.Join(out, name+".png"))
	}

	browsertest.Do(t, ctx, "laptop width", chromedp.EmulateViewport(1280, 800))
	browsertest.Do(t, ctx, "open the list", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("table.skills tbody tr")))
	type fit struct {
		Rows, InView  int
		Tallest, Line float64
		PageW, ViewW  int
		TableW, WrapW int
		DescLines     bool
	}
	measure := func() fit {
		return browsertest.Get(t, ctx, "measure the list", chromedp.Evaluate[fit](`(() => {
			const rows = [...document.querySelectorAll("table.skills tbody tr")];
			const wrap = document.querySelector(".table-wrap");
			const d = document.querySelector("table.skills td.ds");
			return {
				Rows: rows.length,
				InView: rows.filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length,
				Tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height)),
				Line: parseFloat(getComputedStyle(document.querySelector("table.skills td")).lineHeight),
				PageW: document.documentElement.scrollWidth, ViewW: window.innerWidth,
				TableW: wrap.scrollWidth, WrapW: wrap.clientWidth,
				DescLines: !!d && d.scrollWidth > d.clientWidth && getComputedStyle(d).whiteSpace === "nowrap",
			};
		})()`))
	}
	m := measure()
	shot("skills-list-1280")
	if m.Rows != 100 {
		t.Fatalf("the first page has %d rows, want 100", m.Rows)
	}
	// A row of one line of text is its line and its padding: under twice
	// the line height. The old rows held the whole description (200 to
	// 600 px at 400 skills).
	if m.Tallest > 2*m.Line {
		t.Errorf("the tallest row is %.0f px, over two lines (%.0f px): a row is one line", m.Tallest, 2*m.Line)
	}
	if m.InView < 15 {
		t.Errorf("%d rows in the first screen at 1280×800, want at least 15", m.InView)
	}
	if !m.DescLines {
		t.Error("the first description is not clipped to one line (nowrap, wider than its cell)")
	}
	if m.PageW > m.ViewW || m.TableW > m.WrapW {
		t.Errorf("at 1280: the page is %d px wide in %d, the table %d in %d", m.PageW, m.ViewW, m.TableW, m.WrapW)
	}

	// A live refresh (live.js) replaces <main> with a new copy: the filter
	// still fetches as it is typed in the new form.
	browsertest.Get(t, ctx, "replace main as a live refresh does", chromedp.Evaluate[bool](`(() => {
		const main = document.querySelector("main");
		main.replaceChildren(...[...main.cloneNode(true).childNodes]);
		window.dispatchEvent(new CustomEvent("loadout:refreshed", {detail: {}}));
		return true })()`))
	browsertest.Do(t, ctx, "type a filter", chromedp.SendKeys(chromedp.CSS("#f-q"), "api-check"))
	browsertest.Get(t, ctx, "wait for the filtered list", chromedp.Poll[bool](`/^\d+ of 120 skills match/.test(document.querySelector("#skills-count").textContent)`))

	browsertest.Do(t, ctx, "phone width", chromedp.EmulateViewport(375, 800))
	browsertest.Do(t, ctx, "open the list", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("table.skills tbody tr")))
	m = measure()
	shot("skills-list-375")
	if m.PageW > m.ViewW {
		t.Errorf("at 375 the page is %d px wide: it scrolls sideways", m.PageW)
	}
	if m.TableW > m.WrapW {
		t.Errorf("at 375 the table is %d px wide in %d: it scrolls sideways", m.TableW, m.WrapW)
	}
	if m.Tallest > 2*m.Line {
		t.Errorf("at 375 the tallest row is %.0f px, over two lines (%.0f px)", m.Tallest, 2*m.Line)
	}
}
