package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/registrytest"
)

// viewsFixture is a server for the viewing tabs' browser tests: a folder
// of skills (generated ones for the list's pages, a deploy skill with a
// linked file and an image, a script-injection skill, notes), a plugin
// with one skill, a real SQLite store with a stored skill at two versions,
// and two agents.
type viewsFixture struct {
	srv *browsertest.Server
	dir string
	reg *registrytest.Registry
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	for x := range 8 {
		for y := range 6 {
			img.Set(x, y, color.RGBA{uint8(30 * x), 90, 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const e2eEvil = `---
name: evil
description: A skill that tries script injection.
---
# Evil

<script>window.pwned = 1; alert("script")</script>

<img src="x" onerror="window.pwned = 2; alert('onerror')">

[click me](javascript:window.pwned=3;alert('link'))

![chart](chart.svg)

<iframe src="javascript:alert('frame')"></iframe>
`

const e2eSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="window.top.pwned=4;alert('svg onload')"><script>window.top.pwned = 5; alert("svg")</script><rect width="20" height="20" fill="teal"/></svg>`

func newViewsFixture(t *testing.T) *viewsFixture {
	t.Helper()
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	for i := range 230 {
		name := fmt.Sprintf("gen-%03d", i)
		writeFile(t, filepath.Join(skills, name, "SKILL.md"), fmt.Appendf(nil, "---\nname: %s\ndescription: Generated skill %03d.\ntags: [generated]\n---\nBody.\n", name, i))
	}
	writeFile(t, filepath.Join(skills, "deploy", "SKILL.md"), []byte("---\nname: deploy\ndescription: Deploy the service.\ntags: [ops]\ncategory: ops\n---\n# Deploy\n\nSee [the reference](reference.md#steps) and run [the script](scripts/run.sh).\n\n![logo](images/logo.png)\n"))
	writeFile(t, filepath.Join(skills, "deploy", "reference.md"), []byte("# Reference\n\n## Steps\n\n1. Build.\n2. Ship.\n\n[Back to the skill](SKILL.md)\n"))
	writeFile(t, filepath.Join(skills, "deploy", "images", "logo.png"), pngBytes(t))
	writeFile(t, filepath.Join(skills, "deploy", "scripts", "run.sh"), []byte("#!/bin/sh\necho deploy\n"))
	writeFile(t, filepath.Join(skills, "evil", "SKILL.md"), []byte(e2eEvil))
	writeFile(t, filepath.Join(skills, "evil", "chart.svg"), []byte(e2eSVG))
	writeFile(t, filepath.Join(skills, "notes", "SKILL.md"), []byte("---\nname: notes\ndescription: Team notes.\n---\nNotes.\n"))
	writeFile(t, filepath.Join(dir, "plugins", "acme", "plugin.json"), []byte(`{"id": "acme", "name": "Acme", "version": "1.0.0", "trust": "self_host_guarded",
  "skills": [{"id": "oncall", "name": "oncall", "description": "Hand over the pager.", "source": {"kind": "inline", "content": "# On call\n"}}]}`))
	reg := registrytest.Start(t, registrytest.Options{})
	writeFile(t, filepath.Join(dir, "loadout.json"), []byte(`{
  "publish": {"registry": "`+reg.Host+`/team", "insecure": true},
  "agents": [
    {"agentId": "ops", "skills": [{"root": "skills", "available": ["deploy", "evil"]}, {"store": true, "inline": ["review"]}, {"plugin": "acme"}], "preload": ["notes"]},
    {"agentId": "dev", "skills": [{"store": true}]}
  ],
  "plugins": ["plugins/acme"]
}`))
	srv := browsertest.Serve(t, []string{"HOME=" + dir}, "--config", filepath.Join(dir, "loadout.json"), "--db", filepath.Join(dir, "loadout.db"))
	f := &viewsFixture{srv: srv, dir: dir, reg: reg}
	doc := func(body string) []byte {
		b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "skill": map[string]any{
			"content": "---\nname: review\ndescription: Review a change.\n---\n" + body,
			"files":   []map[string]any{{"path": "checklist.md", "content": "- tests\n"}}}})
		return b
	}
	f.api(t, "POST", "/v1/skills", doc("# Review\n\nRead the diff.\nCheck the tests.\n"), nil, 201)
	f.api(t, "PUT", "/v1/skills/review", doc("# Review\n\nRead the diff.\nCheck the tests twice.\n"), map[string]string{"If-Match": `"v1"`}, 200)
	return f
}

// api calls the JSON API (open mode: no tokens on loopback) and checks
// the status.
func (f *viewsFixture) api(t *testing.T, method, path string, body []byte, headers map[string]string, want int) string {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return string(b)
}

// TestSkillsListAndViewsInBrowser drives the skills list and the viewing
// tabs in Chromium against the real binary.
func TestSkillsListAndViewsInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	f := newViewsFixture(t)
	u := f.srv.URL
	// Count every dialog and dismiss it (from another goroutine: the
	// listener may not send commands), so a script that did run fails
	// the test here rather than blocking the page.
	var dialogs atomic.Int32
	opened := make(chan struct{}, 16)
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			select {
			case opened <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-opened:
				chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			case <-ctx.Done():
				return
			}
		}
	}()
	// Record every CSP violation of every page: the viewing pages must
	// cause none (no inline script or style, no style attribute, nothing
	// from elsewhere).
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener("securitypolicyviolation", e => window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || "")))`}); err != nil {
		t.Fatal(err)
	}
	noViolations := func(where string) {
		t.Helper()
		if v := browsertest.Get(t, ctx, "CSP violations", chromedp.Evaluate[string](`JSON.stringify(window.__csp || "no recorder")`)); v != "[]" {
			t.Errorf("%s: CSP violations %s", where, v)
		}
	}
	textOf := func(what, sel string) string {
		return browsertest.Get(t, ctx, what, chromedp.Text(chromedp.CSS(sel)))
	}
	eval := func(what, js string) any {
		return browsertest.Get(t, ctx, what, chromedp.Evaluate[any](js))
	}

	// The list: every skill, in pages of 100.
	browsertest.Do(t, ctx, "open the skills list", chromedp.Navigate(u+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#skills-count")))
	if c := textOf("count", "#skills-count"); !strings.Contains(c, "235 skills") || !strings.Contains(c, "showing 1–100") {
		t.Errorf("the count says %q, want 235 skills, showing 1–100", c)
	}
	for _, want := range []string{"deploy", "evil", "gen-000", "folder: skills"} {
		if !strings.Contains(textOf("table", "table.skills"), want) {
			t.Errorf("the first page lacks %q", want)
		}
	}
	// The source's badge is short; its title says the whole folder.
	if title := eval("the source's title", `document.querySelector("table.skills .badge.src").title`); title != filepath.Join(f.dir, "skills") {
		t.Errorf("the source badge's title is %q, want the folder %s", title, filepath.Join(f.dir, "skills"))
	}
	browsertest.Screenshot(t, ctx, "skills-list-laptop")
	noViolations("the skills list")

	// Filter as you type: no reload (a marker set on the page stays), the
	// address bar follows.
	eval("mark the page", "window.__noReload = 1")
	browsertest.Do(t, ctx, "type a filter", chromedp.SendKeys(chromedp.CSS("#f-q"), "deplo"))
	browsertest.Get(t, ctx, "wait for the filtered list", chromedp.Poll[bool](`document.querySelector("#skills-count").textContent.includes("1 of 235")`))
	if n := eval("rows", `document.querySelectorAll("table.skills tbody tr").length`); n != float64(1) {
		t.Errorf("%v rows after filtering by deplo", n)
	}
	if eval("marker", "window.__noReload") != float64(1) {
		t.Error("the page reloaded while filtering")
	}
	if loc := browsertest.Get(t, ctx, "location", chromedp.Location()); !strings.HasSuffix(loc, "/ui/?q=deplo") {
		t.Errorf("the address is %s, want /ui/?q=deplo", loc)
	}
	noViolations("the filtered list")
	// Source filter and "has problems" (none here but the plugin's): the
	// select works the same way.
	eval("pick plugin", `(() => { document.querySelector("#f-q").value = ""; const s = document.querySelector("#f-source"); s.value = [...s.options].find(o => o.text.startsWith("plugin: acme")).value; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
	browsertest.Get(t, ctx, "wait for the plugin's skill", chromedp.Poll[bool](`document.querySelector("table.skills tbody").textContent.includes("oncall")`))
	if row := textOf("plugin row", "table.skills tbody tr"); !strings.Contains(row, "oncall") || !strings.Contains(row, "plugin: acme") {
		t.Errorf("the plugin row: %q", row)
	}
	if title := eval("the plugin's title", `document.querySelector("table.skills .badge.src").title`); title != "plugin acme · self_host_guarded" {
		t.Errorf("the plugin's source badge's title is %q", title)
	}

	// The stored skill shows its source and version.
	browsertest.Do(t, ctx, "filter by store", chromedp.Navigate(u+"/ui/?source=store"), chromedp.WaitVisible(chromedp.CSS("table.skills")))
	if row := textOf("store row", "table.skills tbody tr"); !strings.Contains(row, "review") || !strings.Contains(row, "store") {
		t.Errorf("the stored skill's row: %q", row)
	}
	if title := eval("the store's title", `document.querySelector("table.skills .badge.src").title`); title != "store v2" {
		t.Errorf("the stored skill's source badge's title is %q, want store v2", title)
	}

	// Sort by files: deploy (3 files) first.
	browsertest.Do(t, ctx, "sort by files", chromedp.Navigate(u+"/ui/"), chromedp.Click(chromedp.CSS(`th a[data-sort="files"]`)), chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="descending"]`)))
	if first := textOf("first row", "table.skills tbody tr td a"); first != "deploy" {
		t.Errorf("sorted by files, the first skill is %q", first)
	}
	// Pages: the next link goes to page 2 of 3.
	browsertest.Do(t, ctx, "next page", chromedp.Navigate(u+"/ui/"), chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`a[rel="prev"]`)))
	if p := textOf("pager", "nav.pager"); !strings.Contains(p, "Page 2 of 3") {
		t.Errorf("the pager says %q", p)
	}

	// Preview: the image loads, the relative link opens the rendered file.
	browsertest.Do(t, ctx, "preview deploy", chromedp.Navigate(u+"/ui/skills/deploy?tab=preview"), chromedp.WaitVisible(chromedp.CSS(".md-preview h3")))
	browsertest.Get(t, ctx, "the image loads", chromedp.Poll[bool](`(() => { const i = document.querySelector(".md-preview img"); return i && i.complete && i.naturalWidth > 0 })()`))
	browsertest.Screenshot(t, ctx, "skill-preview-laptop")
	noViolations("the preview")
	browsertest.Do(t, ctx, "follow the relative link", chromedp.Click(chromedp.CSS(`.md-preview a[href*="reference.md"]`)), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if h := textOf("file page", "main"); !strings.Contains(h, "reference.md") || !strings.Contains(h, "Ship.") {
		t.Errorf("the linked file's page: %q", h)
	}
	if loc := browsertest.Get(t, ctx, "location", chromedp.Location()); !strings.Contains(loc, "/ui/skills/deploy/view/reference.md#steps") {
		t.Errorf("the link went to %s", loc)
	}
	noViolations("a skill's Markdown file")

	// Script injection: nothing runs, no dialog opens, the SVG shows as an
	// image, and opened directly its script does not run either.
	browsertest.Do(t, ctx, "preview evil", chromedp.Navigate(u+"/ui/skills/evil?tab=preview"), chromedp.WaitVisible(chromedp.CSS(".md-preview h3")))
	browsertest.Get(t, ctx, "the svg loads", chromedp.Poll[bool](`(() => { const i = document.querySelector('.md-preview img[alt="chart"]'); return i && i.complete && i.naturalWidth > 0 })()`))
	if v := eval("pwned", "typeof window.pwned"); v != "undefined" {
		t.Errorf("the injected script ran: window.pwned is %v", eval("pwned", "window.pwned"))
	}
	if n := eval("links", `[...document.querySelectorAll("main a")].filter(a => a.href.startsWith("javascript")).length`); n != float64(0) {
		t.Errorf("%v javascript: links on the page", n)
	}
	if n := eval("frames", `document.querySelectorAll("main iframe, main script").length`); n != float64(0) {
		t.Errorf("%v iframes or scripts in the preview", n)
	}
	noViolations("the script-injection skill's preview (its raw HTML never reaches the page)")
	browsertest.Do(t, ctx, "open the svg", chromedp.Navigate(u+"/ui/skills/evil/files/chart.svg"), chromedp.Sleep(300e6))
	if v := eval("pwned in svg", "typeof window.pwned"); v != "undefined" {
		t.Errorf("the SVG's script ran when opened directly")
	}
	if d := dialogs.Load(); d != 0 {
		t.Errorf("%d dialogs opened", d)
	}

	// Versions: the diff of the two stored versions, then restore v1.
	browsertest.Do(t, ctx, "versions", chromedp.Navigate(u+"/ui/skills/review?tab=versions"), chromedp.WaitVisible(chromedp.CSS("#diff")))
	diff := textOf("diff", "#diff")
	if !strings.Contains(diff, "Check the tests.") || !strings.Contains(diff, "Check the tests twice.") || !strings.Contains(diff, "SKILL.md") {
		t.Errorf("the diff from v1 to v2:\n%s", diff)
	}
	browsertest.Screenshot(t, ctx, "skill-versions-laptop")
	noViolations("the versions tab")
	browsertest.Do(t, ctx, "restore v1", chromedp.Click(chromedp.CSS(`button[aria-label="Restore version 1"]`)), chromedp.WaitVisible(chromedp.CSS(`.notice[role="status"]`)))
	if n := textOf("notice", `.notice[role="status"]`); !strings.Contains(n, "version 3") {
		t.Errorf("after restore: %q", n)
	}
	if got := f.api(t, "GET", "/v1/skills/review/files/SKILL.md", nil, nil, 200); !strings.Contains(got, "Check the tests.\n") {
		t.Errorf("after restoring v1, SKILL.md is:\n%s", got)
	}
	// Push to registry: version 1 goes to the configured (real) registry,
	// and the tab shows the reference with its digest.
	browsertest.Do(t, ctx, "push v1", chromedp.Click(chromedp.CSS(`button[aria-label="Push version 1 to `+f.reg.Host+`/team"]`)))
	browsertest.Get(t, ctx, "wait for the push", chromedp.Poll[bool](`document.querySelector('.notice[role="status"] code.digest') !== null`))
	if n := textOf("pushed", `.notice[role="status"]`); !strings.Contains(n, "Pushed to the registry: "+f.reg.Host+"/team/review:v1@sha256:") {
		t.Errorf("after the push: %q", n)
	}
	noViolations("the versions tab after a push")

	// Usage: a load through the API shows.
	f.api(t, "GET", "/v1/agents/dev/skills/review", nil, nil, 200)
	browsertest.Do(t, ctx, "usage", chromedp.Navigate(u+"/ui/skills/review?tab=usage"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if n := eval("bars", `document.querySelectorAll("svg.chart rect.bar-load").length`); n != float64(1) {
		t.Errorf("%v load bars, want 1 (today)", n)
	}
	if tbl := textOf("agents", "table.usage-agents"); !strings.Contains(tbl, "dev") {
		t.Errorf("the usage table: %q", tbl)
	}
	browsertest.Screenshot(t, ctx, "skill-usage-laptop")
	noViolations("the usage tab")

	// Agents: the modes.
	mode := func(skill, agent string) string {
		browsertest.Do(t, ctx, "agents of "+skill, chromedp.Navigate(u+"/ui/skills/"+skill+"?tab=agents"), chromedp.WaitVisible(chromedp.CSS("table.agents-modes")))
		return textOf(agent+"'s mode", fmt.Sprintf(`tr[data-agent="%s"]`, agent))
	}
	for _, c := range []struct{ skill, agent, want string }{
		{"review", "ops", "inline"}, {"review", "dev", "listed"}, {"notes", "ops", "preloaded"},
		{"oncall", "ops", "listed"}, {"deploy", "dev", "not available"}, {"gen-001", "ops", "patterns do not select it"},
	} {
		if m := mode(c.skill, c.agent); !strings.Contains(m, c.want) {
			t.Errorf("%s for %s: %q, want %q", c.skill, c.agent, m, c.want)
		}
	}
	browsertest.Screenshot(t, ctx, "skill-agents-laptop")
	noViolations("the agents tab")

	// Phone width: no page scrolls sideways (wide tables scroll inside
	// their own box).
	browsertest.Do(t, ctx, "phone width", chromedp.EmulateViewport(375, 800))
	for _, p := range []string{"/ui/", "/ui/skills/deploy?tab=preview", "/ui/skills/review?tab=versions", "/ui/skills/review?tab=usage", "/ui/skills/review?tab=agents"} {
		browsertest.Do(t, ctx, "open "+p+" at 375 px", chromedp.Navigate(u+p), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if w := eval("page width", "document.documentElement.scrollWidth"); w.(float64) > 375 {
			t.Errorf("%s at 375 px wide is %v px wide", p, w)
		}
		if p == "/ui/" {
			browsertest.Screenshot(t, ctx, "skills-list-phone")
		}
	}
}
