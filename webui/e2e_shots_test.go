package webui_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// The screenshots: every page kind, light and dark, at a laptop's and a
// phone's width, as <page>-<theme>-<width>.png. With
// LOADOUT_UPDATE_SCREENSHOTS=1 they go to docs/ui/ (with docs/ui/examples.md
// listing them), which the README embeds; otherwise to a temporary folder.
// (docs/ui/README.md is the design review's before and after, over a
// catalog of real size: scripts/ui-shots.sh.)

// shotWidth is a screen a page is photographed on.
type shotWidth struct {
	Name          string
	Width, Height int64
	Mobile        bool
}

// shotWidths are the widths the screenshots are taken at.
var shotWidths = []shotWidth{
	{"laptop", 1280, 800, false},
	{"phone", 390, 844, true},
}

// openAt opens base+path on screen w and waits for the page to settle.
func openAt(t *testing.T, ctx context.Context, base, path string, w shotWidth) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if w.Mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	browsertest.Do(t, ctx, "open "+path+" at "+w.Name+" width",
		chromedp.EmulateViewport(w.Width, w.Height, opts...),
		chromedp.Navigate(base+path))
	settle(t, ctx)
}

// shotPage is one page kind to photograph.
type shotPage struct {
	Name, Title, Path string
}

func TestScreenshots(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	c := newCatalog(t)
	if os.Getenv("LOADOUT_UPDATE_SCREENSHOTS") != "" {
		// A folder with a short, stable name: the pages show its paths.
		dir := filepath.Join(os.TempDir(), "loadout-screenshots")
		testutil.Must(t, os.RemoveAll(dir))
		t.Cleanup(func() { testutil.Must(t, os.RemoveAll(dir)) })
		c = newCatalogIn(t, dir)
	}
	srv := c.serve(t)
	if os.Getenv("LOADOUT_UPDATE_SCREENSHOTS") != "" {
		// Start from no screenshots, so a page kind that is gone leaves none.
		old, _ := filepath.Glob(filepath.Join(shotsDir(), "*-*-*.png"))
		for _, f := range old {
			if strings.HasSuffix(f, "-laptop.png") || strings.HasSuffix(f, "-phone.png") {
				testutil.Must(t, os.Remove(f))
			}
		}
	}

	pages := []shotPage{{"skills", "Skills", "/ui/"}}
	for _, tab := range []struct{ id, label string }{
		{"skill-md", "SKILL.md"}, {"files", "Files"}, {"preview", "Preview"},
		{"versions", "Versions"}, {"usage", "Usage"}, {"agents", "Agents"},
	} {
		pages = append(pages, shotPage{"skill-" + tab.id, "Skill: " + tab.label + " tab (a stored skill)", "/ui/skills/" + c.Stored + "?tab=" + tab.id})
	}
	pages = append(pages,
		shotPage{"skill-folder", "Skill: a folder skill, read-only", "/ui/skills/" + c.Folder},
		shotPage{"skill-plugin", "Skill: a plugin skill, read-only", "/ui/skills/" + c.Plugin},
		shotPage{"agents", "Agents", "/ui/agents"},
	)
	// One agent's page: whatever the agents page links to first.
	if pageOK(srv.URL + "/ui/agents") {
		browsertest.Do(t, ctx, "open agents", chromedp.Navigate(srv.URL+"/ui/agents"))
		href := browsertest.Get(t, ctx, "an agent's link", chromedp.Evaluate[string](`(Array.from(document.querySelectorAll("main a[href]")).map(a => a.getAttribute("href")).find(h => /^\/ui\/agents\/[^/?#]+$/.test(h)) || "")`))
		if href != "" {
			pages = append(pages, shotPage{"agent", "Agent", href})
		}
	}
	pages = append(pages,
		shotPage{"import", "Import / Export", "/ui/import"},
		shotPage{"diagnostics", "Diagnostics", "/ui/diagnostics"},
		shotPage{"tokens", "Tokens and receipts", "/ui/tokens"},
		shotPage{"audit", "Audit (under Admin)", "/ui/audit?verify=1"},
	)

	var taken []shotPage
	var missing []string
	shoot := func(base string, pages []shotPage) {
		for _, p := range pages {
			if !pageOK(base + p.Path) {
				missing = append(missing, p.Path)
				continue
			}
			for _, w := range shotWidths {
				openAt(t, ctx, base, p.Path, w)
				if w.Mobile {
					// Readable on a phone: nothing wider than the screen.
					wide := browsertest.Get(t, ctx, "overflow of "+p.Path, chromedp.Evaluate[[]string](overflowJS))
					if len(wide) > 0 {
						t.Errorf("%s is wider than a %d px screen: it scrolls sideways; the widest elements:\n  %s", p.Path, w.Width, strings.Join(wide, "\n  "))
					}
				}
				for _, scheme := range []string{"light", "dark"} {
					browsertest.Do(t, ctx, "colour scheme "+scheme, setScheme(scheme))
					file := browsertest.Screenshot(t, ctx, fmt.Sprintf("%s-%s-%s", p.Name, scheme, w.Name))
					b, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
						t.Errorf("%s is not a PNG (starts %q)", file, b[:min(8, len(b))])
					}
				}
			}
			taken = append(taken, p)
		}
	}
	shoot(srv.URL, pages)

	// The login page shows once a token exists: a second server on the
	// same store after creating one.
	cmd := exec.Command(browsertest.Binary(t), "token", "create", "--scope", "admin", "--name", "screenshots", "--db", c.DB)
	cmd.Env = append(os.Environ(), "HOME="+c.Dir, "LOADOUT_CONFIG=", "LOADOUT_DB=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loadout token create: %v\n%s", err, out)
	}
	locked := c.serve(t)
	shoot(locked.URL, []shotPage{{"login", "Sign in (once tokens exist)", "/ui/login"}})

	if len(missing) > 0 {
		t.Logf("not built yet (no screenshot): %s", strings.Join(missing, ", "))
	}
	if len(taken) == 0 || taken[0].Name != "skills" {
		t.Fatalf("no screenshot of the skills page")
	}
	if os.Getenv("LOADOUT_UPDATE_SCREENSHOTS") != "" {
		writeShotsReadme(t, taken)
	}
}

// overflowJS lists (up to five) elements that reach past the right edge of
// the viewport outside a scrolling container, when the page scrolls
// sideways; none when it does not.
const overflowJS = `(() => {
	const vw = document.documentElement.clientWidth;
	if (document.documentElement.scrollWidth <= vw) return [];
	const out = [];
	for (const el of document.querySelectorAll("body *")) {
		const r = el.getBoundingClientRect();
		if (r.right <= vw + 1) continue;
		let p = el.parentElement, clipped = false;
		for (; p && p !== document.body; p = p.parentElement) {
			const o = getComputedStyle(p).overflowX;
			if (o === "auto" || o === "scroll" || o === "hidden") { clipped = true; break; }
		}
		if (clipped) continue;
		const id = el.id ? "#" + el.id : "";
		const cls = el.classList.length ? "." + Array.from(el.classList).join(".") : "";
		out.push(el.tagName.toLowerCase() + id + cls + " (right edge " + Math.round(r.right) + " px): " + (el.textContent || "").trim().slice(0, 60));
		if (out.length === 5) break;
	}
	return out.length ? out : ["(the document is " + document.documentElement.scrollWidth + " px wide)"];
})()`

// pageOK says whether GET url answers 200 with a page.
func pageOK(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
}

// writeShotsReadme writes docs/ui/examples.md: a table of the screenshots.
func writeShotsReadme(t *testing.T, taken []shotPage) {
	dir := shotsDir()
	var b strings.Builder
	b.WriteString("# The web UI in screenshots\n\n")
	b.WriteString("Written by `LOADOUT_UPDATE_SCREENSHOTS=1 go test -run TestScreenshots ./webui` (webui/e2e_shots_test.go):\n")
	b.WriteString("`loadout serve` over the built-in examples (five folder skills, the acme-ops plugin, four agents)\n")
	b.WriteString("and a SQLite store with two stored skills, in headless Chromium. Each page in the light and dark\n")
	b.WriteString("colour schemes, at a laptop's width (1280×800) and a phone's (390×844), full length.\n")
	b.WriteString("Files are named `<page>-<theme>-<width>.png`.\n\n")
	b.WriteString("| Page | Light, laptop | Dark, laptop | Light, phone | Dark, phone |\n|---|---|---|---|---|\n")
	for _, p := range taken {
		fmt.Fprintf(&b, "| %s (`%s`) |", p.Title, p.Name)
		for _, w := range []string{"laptop", "phone"} {
			for _, s := range []string{"light", "dark"} {
				n := fmt.Sprintf("%s-%s-%s.png", p.Name, s, w)
				fmt.Fprintf(&b, " [%s](%s) |", n, n)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nLaptop, light:\n\n")
	for _, p := range taken {
		fmt.Fprintf(&b, "### %s\n\n![%s, light, laptop](%s-light-laptop.png)\n\n", p.Title, p.Title, p.Name)
	}
	if err := os.WriteFile(filepath.Join(dir, "examples.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shotsDir is docs/ui, where browsertest.Screenshot writes under
// LOADOUT_UPDATE_SCREENSHOTS.
func shotsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "docs", "ui")
}
