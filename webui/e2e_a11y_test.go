package webui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/examples"
	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// The accessibility check: axe-core (pinned in webui/e2e/package.json) run
// in a real Chromium over every UI page reachable from the navigation and
// from each skill's tabs, in light and in dark.

// maxCrawl bounds the pages the accessibility crawl visits: enough for
// every page kind, every tab of each skill of the catalog below and the
// pages of their files.
const maxCrawl = 150

// maxVariants bounds how many URLs that differ only in their query (a
// skill's tabs, a list's sort orders) the crawl visits per path.
const maxVariants = 10

// uiCatalog is a realistic UI catalog: the built-in examples (five folder
// skills, a plugin with two skills, four agents) and a real SQLite store
// holding two stored skills with supporting files, one of them with two
// versions.
type uiCatalog struct {
	Dir    string // the temporary folder everything lives in
	Config string // the config file (examples' loadout.json)
	DB     string // the SQLite store
	Stored string // a stored skill with files and two versions
	Folder string // a folder skill
	Plugin string // a plugin skill
}

// newCatalog writes the catalog into a temporary folder; the stored skills
// go in through `loadout import`, the real path.
func newCatalog(t testing.TB) *uiCatalog {
	t.Helper()
	return newCatalogIn(t, t.TempDir())
}

// newCatalogIn is newCatalog in the folder dir.
func newCatalogIn(t testing.TB, dir string) *uiCatalog {
	t.Helper()
	cfg, err := examples.Materialize(filepath.Join(dir, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	c := &uiCatalog{Dir: dir, Config: cfg, DB: filepath.Join(dir, "loadout.db"), Stored: "release-notes", Folder: "deploy", Plugin: "rollout"}
	src := filepath.Join(dir, "import")
	write := func(rel, body string, mode os.FileMode) {
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	notes := func(extra string) string {
		return "---\nname: release-notes\ndescription: Write the release notes for a tagged version from the merged pull requests. Use when the user asks for release notes or a changelog entry.\nversion: 1.2.0\ntags: [release, writing]\ncategory: docs\nlicense: MIT\n---\n# Release notes\n\nCollect the merged pull requests with [the script](scripts/collect.sh), then follow\n[the style guide](references/style.md).\n\n![logo](assets/logo.png)\n\n| Section | What goes in |\n|---|---|\n| Added | new features |\n| Fixed | bug fixes |\n" + extra
	}
	write("release-notes/SKILL.md", notes(""), 0o644)
	write("release-notes/references/style.md", "# Style\n\nOne line per change, in the past tense.\n", 0o644)
	write("release-notes/scripts/collect.sh", "#!/bin/sh\ngit log --merges --format='%s' \"$1..HEAD\"\n", 0o755)
	write("release-notes/assets/logo.png", string(tinyPNG), 0o644)
	write("onboarding/SKILL.md", "---\nname: onboarding\ndescription: Walk a new team member through the first day. Use when someone says they just joined.\ntags: [people]\ncategory: team\n---\n# Onboarding\n\nSend [the welcome note](templates/welcome.md).\n", 0o644)
	write("onboarding/templates/welcome.md", "Welcome to the team, {{name}}!\n", 0o644)
	bin := browsertest.Binary(t)
	run := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "LOADOUT_CONFIG=", "LOADOUT_DB=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("loadout %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("import", "--db", c.DB, "--config", cfg, src)
	// A second version of release-notes.
	write("release-notes/SKILL.md", notes("\nMention breaking changes first.\n"), 0o644)
	run("import", "--db", c.DB, "--config", cfg, filepath.Join(src, "release-notes"))
	return c
}

// serve starts `loadout serve` over the catalog.
func (c *uiCatalog) serve(t testing.TB) *browsertest.Server {
	t.Helper()
	return browsertest.Serve(t, []string{"HOME=" + c.Dir}, "--config", c.Config, "--db", c.DB, "--no-watch")
}

// tinyPNG is a 1×1 PNG, a binary file for the Files tab.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

var axeOnce struct {
	sync.Mutex
	src  string
	err  string
	skip string
}

// axeSource returns axe-core's source (webui/e2e/node_modules), installing
// the pinned package with `npm ci` on first use. Without npm the test is
// skipped, or fails when CI is set.
func axeSource(t testing.TB) string {
	t.Helper()
	axeOnce.Lock()
	defer axeOnce.Unlock()
	if axeOnce.src != "" {
		return axeOnce.src
	}
	if axeOnce.err != "" {
		t.Fatal(axeOnce.err)
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "e2e")
	path := filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
	testutil.NPMFolder(t, dir, filepath.Join("node_modules", "axe-core", "axe.min.js"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	axeOnce.src = string(b)
	return axeOnce.src
}

// setScheme emulates prefers-color-scheme (light or dark) in the tab.
func setScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// settle waits until the page has loaded and its scripts have filled it in
// (no element marked aria-busy), up to 5 s.
func settle(t testing.TB, ctx context.Context) {
	t.Helper()
	for i := 0; i < 50; i++ {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !document.querySelector('[aria-busy="true"]')`))
		if err == nil && done {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// violation is one axe-core rule a page breaks.
type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  string `json:"target"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

// runAxe injects axe-core into the page (by evaluating its source over the
// DevTools protocol, which the page's CSP does not govern) and returns the
// violations of impact serious or critical.
func runAxe(t testing.TB, ctx context.Context, src string) []violation {
	t.Helper()
	has := browsertest.Get(t, ctx, "look for axe", chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if !has {
		browsertest.Do(t, ctx, "inject axe-core", chromedp.Evaluate[chromedp.Void](src))
	}
	all := browsertest.Get(t, ctx, "run axe-core", chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
		id: v.id, impact: v.impact || "", help: v.help,
		nodes: v.nodes.map(n => ({target: n.target.join(" "), summary: n.failureSummary || ""})),
	})))`, chromedp.EvalAwaitPromise))
	var bad []violation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad
}

// crawlable says whether the crawl should open a link: a UI page of this
// server that is not a static asset, a download or the logout.
func crawlable(base *url.URL, href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil || u.Host != base.Host || !strings.HasPrefix(u.Path, "/ui/") {
		return "", false
	}
	if strings.HasPrefix(u.Path, "/ui/static/") || strings.HasPrefix(u.Path, "/ui/logout") || strings.HasPrefix(u.Path, "/ui/events") {
		return "", false
	}
	u.Fragment = ""
	u.RawQuery = u.Query().Encode() // one spelling per query
	return u.String(), true
}

// isPage fetches url outside the browser and says whether it is an HTML
// page (not a download, an event stream or a file's raw bytes).
func isPage(t testing.TB, url string) bool {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/html")
	// Patience, not seconds: a page that answered late would be left out
	// of the check without a word.
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Patience(t))
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Errorf("GET %s, to see whether it is a page to check: %v", url, err)
		return false
	}
	resp.Body.Close()
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment")
}

// crawl visits the UI breadth-first from /ui/ (new paths before more query
// variants of a path already seen), calling visit on each page once it has
// settled, and returns the pages visited.
func crawl(t testing.TB, ctx context.Context, start string, visit func(page string)) []string {
	t.Helper()
	base, _ := url.Parse(start)
	seen := map[string]bool{}
	variants := map[string]int{}
	var fresh, more []string // two queues: unseen paths first
	add := func(href string) {
		u, ok := crawlable(base, href)
		if !ok || seen[u] {
			return
		}
		seen[u] = true
		pu, _ := url.Parse(u)
		variants[pu.Path]++
		switch {
		case variants[pu.Path] == 1:
			fresh = append(fresh, u)
		case variants[pu.Path] <= maxVariants:
			more = append(more, u)
		}
	}
	add(start)
	var visited []string
	for len(visited) < maxCrawl && len(fresh)+len(more) > 0 {
		var u string
		if len(fresh) > 0 {
			u, fresh = fresh[0], fresh[1:]
		} else {
			u, more = more[0], more[1:]
		}
		if !isPage(t, u) {
			continue
		}
		browsertest.Do(t, ctx, "open "+u, chromedp.Navigate(u))
		settle(t, ctx)
		visited = append(visited, u)
		visit(u)
		links := browsertest.Get(t, ctx, "links of "+u, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href]")).filter(a => !a.hasAttribute("download")).map(a => a.href)`))
		for _, l := range links {
			add(l)
		}
	}
	if left := len(fresh) + len(more); left > 0 {
		t.Logf("crawl: %d pages left unvisited past the bound of %d", left, maxCrawl)
	}
	return visited
}

// TestAccessibility crawls every UI page reachable from the navigation and
// the skills' tabs and fails on any axe-core violation of impact serious or
// critical, in light and in dark (colour contrast differs).
func TestAccessibility(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	src := axeSource(t)
	c := newCatalog(t)
	srv := c.serve(t)
	var failures []string
	check := func(base, page string) {
		for _, scheme := range []string{"light", "dark"} {
			browsertest.Do(t, ctx, "colour scheme "+scheme, setScheme(scheme))
			for _, v := range runAxe(t, ctx, src) {
				var nodes []string
				for i, n := range v.Nodes {
					if i == 5 {
						nodes = append(nodes, fmt.Sprintf("… and %d more", len(v.Nodes)-5))
						break
					}
					nodes = append(nodes, n.Target+": "+strings.ReplaceAll(n.Summary, "\n", " "))
				}
				failures = append(failures, fmt.Sprintf("%s (%s): %s [%s] %s\n    %s", strings.TrimPrefix(page, base), scheme, v.ID, v.Impact, v.Help, strings.Join(nodes, "\n    ")))
			}
		}
		browsertest.Do(t, ctx, "colour scheme light", setScheme("light"))
	}
	pages := crawl(t, ctx, srv.URL+"/ui/", func(page string) { check(srv.URL, page) })
	t.Logf("checked %d pages in light and dark:\n  %s", len(pages), strings.ReplaceAll(strings.Join(pages, "\n  "), srv.URL, ""))
	if len(pages) < 2 {
		t.Errorf("the crawl reached only %v: the navigation should link the UI's pages", pages)
	}
	for _, want := range []string{"/ui/skills/" + c.Stored, "/ui/skills/" + c.Folder, "/ui/skills/" + c.Plugin} {
		found := false
		for _, p := range pages {
			if strings.Contains(p, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("the crawl never reached %s", want)
		}
	}

	// The sign-in page shows once a token exists: a second server on the
	// same store after creating one.
	cmd := exec.Command(browsertest.Binary(t), "token", "create", "--scope", "admin", "--name", "a11y", "--db", c.DB)
	cmd.Env = append(os.Environ(), "HOME="+c.Dir, "LOADOUT_CONFIG=", "LOADOUT_DB=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loadout token create: %v\n%s", err, out)
	}
	locked := c.serve(t)
	if login := locked.URL + "/ui/login"; isPage(t, login) {
		browsertest.Do(t, ctx, "open "+login, chromedp.Navigate(login))
		settle(t, ctx)
		check(locked.URL, login)
	}

	if len(failures) > 0 {
		t.Errorf("%d accessibility violations (serious or critical):\n%s", len(failures), strings.Join(failures, "\n"))
	}
}
