package webui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/skill"
)

// Browser tests of the defects found in the web UI at real sizes:
// each one fails on the UI before its fix.

// defectsSite is a catalog shaped like an operator's: a folder of skills
// (one with a long description), the store with a 53-file skill, a git
// repository (a real one, made with the git binary and synced) and two
// agents, one reading all three kinds of source.
type defectsSite struct {
	Dir, Config, DB, Git string
	srv                  *browsertest.Server
}

// bigFiles is how many files the stored skill "big" has, SKILL.md
// included: the size of the xlsx skill the issue met.
const bigFiles = 53

func newDefectsSite(t *testing.T) *defectsSite {
	t.Helper()
	dir := t.TempDir()
	s := &defectsSite{Dir: dir, Config: filepath.Join(dir, "loadout.json"), DB: filepath.Join(dir, "loadout.db"), Git: filepath.Join(dir, "repo")}
	long := strings.Repeat("Use this skill whenever a spreadsheet is the input or the output: open, read, edit or fix one, add columns, compute formulas, chart, clean messy data. ", 5)
	writeSkill(t, filepath.Join(dir, "skills"), "sheets", "name: sheets", "description: "+strings.TrimSpace(long))
	writeSkill(t, filepath.Join(dir, "skills"), "short", "name: short", "description: A short one.")
	// The git source: a repository with one skill under skills/.
	writeSkill(t, filepath.Join(s.Git, "skills"), "remote-one", "name: remote-one", "description: A skill from a git repository.")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "skills"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = s.Git
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	conf := fmt.Sprintf(`{"store": %q, "agents": [
  {"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}, {"git": %q, "ref": "main", "paths": ["skills"]}]},
  {"agentId": "writer", "skills": [{"store": true}]}
]}`, s.DB, s.Git)
	must(t, os.WriteFile(s.Config, []byte(conf), 0o644))
	// The stored skill "big": SKILL.md and 52 files in three folders.
	src := filepath.Join(dir, "import", "big")
	writeSkill(t, filepath.Join(dir, "import"), "big", "name: big", "description: A stored skill with many files.")
	for i := 1; i < bigFiles; i++ {
		folder := []string{"assets", "references", "scripts"}[i%3]
		p := filepath.Join(src, folder, fmt.Sprintf("file-%02d.md", i))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(fmt.Sprintf("# File %d\n\nText of file %d.\n", i, i)), 0o644))
	}
	cli(t, "import", "--db", s.DB, "--config", s.Config, src)
	cli(t, "sync", "--config", s.Config)
	return s
}

func (s *defectsSite) serve(t *testing.T) string {
	t.Helper()
	if s.srv == nil {
		s.srv = browsertest.Serve(t, []string{"HOME=" + s.Dir}, "--config", s.Config, "--no-watch")
	}
	return s.srv.URL
}

// asPhone makes the tab a 375×800 phone (or back to a laptop's 1280×800).
func asPhone(phone bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		p := emulation.SetDeviceMetricsOverrideParams{Width: 1280, Height: 800, DeviceScaleFactor: 1}
		if phone {
			p = emulation.SetDeviceMetricsOverrideParams{Width: 375, Height: 800, DeviceScaleFactor: 1, Mobile: true}
		}
		_, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, p)
		return err
	})
}

// lastFileRow is the last file of the Files tab's tree.
const lastFileRow = `[...document.querySelectorAll("#file-tree .file-open")].pop()`

// TestFilesTabLongTreeInBrowser (defects a and i): in a skill of 53 files,
// opening a file low in the tree shows its editor where the user is
// looking, with the focus on its name, on a laptop and on a phone; each
// row of the tree has one button (the file), and the open file's actions
// (executable, rename, delete) are in the file view's header.
func TestFilesTabLongTreeInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	s := newDefectsSite(t)
	base := s.serve(t)
	for _, phone := range []bool{false, true} {
		name := map[bool]string{false: "laptop", true: "phone"}[phone]
		browsertest.Do(t, ctx, name+": files tab", asPhone(phone), chromedp.Navigate(base+"/ui/skills/big?tab=files"), chromedp.WaitVisible(chromedp.CSS("#file-tree")))
		if n := js[int](t, ctx, `document.querySelectorAll("#file-tree .file-open").length`); n != bigFiles {
			t.Fatalf("%s: %d files in the tree, want %d", name, n, bigFiles)
		}
		// i: one action affordance per row.
		if worst := js[int](t, ctx, `Math.max(...[...document.querySelectorAll("#file-tree .file-row")].map(r => r.querySelectorAll("button, a, [role=button]").length))`); worst != 1 {
			t.Errorf("%s: a file row has %d buttons, want 1", name, worst)
		}
		// a: scroll to the last file and open it.
		js[bool](t, ctx, `(`+lastFileRow+`.scrollIntoView({block: "end"}), true)`)
		before := js[float64](t, ctx, `scrollY`)
		if before < 200 {
			t.Fatalf("%s: the tree is not long enough to scroll (scrollY %v)", name, before)
		}
		js[bool](t, ctx, `(`+lastFileRow+`.click(), true)`)
		waitJS(t, ctx, name+": the last file's editor", `document.querySelector("#fv-editor .cm-editor") && document.querySelector("#fv-h").textContent === `+lastFileRow+`.dataset.path`)
		waitJS(t, ctx, name+": the editor in view", `(() => { const r = document.querySelector("#fv-editor").getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight - 100; })()`)
		h := js[map[string]float64](t, ctx, `(() => { const r = document.querySelector("#fv-h").getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; })()`)
		if h["top"] < 0 || h["bottom"] > 800 {
			t.Errorf("%s: the open file's name is at y %v–%v, off the 800 px screen", name, h["top"], h["bottom"])
		}
		if f := js[string](t, ctx, `document.activeElement && document.activeElement.id`); f != "fv-h" {
			t.Errorf("%s: the focus is on %q, not on the open file's name", name, f)
		}
		acts := js[[]string](t, ctx, `[...document.querySelectorAll("#fv-actions button")].filter(b => b.offsetParent).map(b => b.textContent)`)
		if strings.Join(acts, "|") != "Set executable|Rename|Delete" {
			t.Errorf("%s: the open file's actions: %q", name, acts)
		}
		browsertest.Screenshot(t, ctx, "defects-files-long-tree-"+name)
	}
	// The header's actions act on the open file: rename, then the same
	// file is open again under its new name.
	from := js[string](t, ctx, lastFileRow+`.dataset.path`)
	browsertest.Do(t, ctx, "rename from the header", chromedp.Click(chromedp.CSS("#fv-rename")), chromedp.WaitVisible(chromedp.CSS(".rename-path")),
		clearInput(".rename-path"), chromedp.SendKeys(chromedp.CSS(".rename-path"), "scripts/renamed.md\n"))
	waitJS(t, ctx, "renamed and open again", `document.querySelector('.file-row[data-path="scripts/renamed.md"]') && document.querySelector("#fv-h").textContent === "scripts/renamed.md"`)
	for _, f := range getSkill(t, base, "big").Files {
		if f.Path == from {
			t.Errorf("%s survived its rename", from)
		}
	}
}

// TestFrontmatterFormWritesMetadataInBrowser (defect b): the SKILL.md
// tab's form writes loadout's own fields (version, tags, category,
// requires-tools) under metadata, so the saved SKILL.md passes the
// reference validator (skill.Validate, what `loadout validate` runs) and
// the server still reads the fields; a skill with a top-level version has
// it moved under metadata when the form edits it; emptying the fields
// removes metadata again.
func TestFrontmatterFormWritesMetadataInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	s := newDefectsSite(t)
	base := s.serve(t)
	validate := func(what, content string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "big")
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(content), 0o644))
		problems, err := skill.Validate(dir)
		if err != nil || len(problems) > 0 {
			t.Errorf("%s: loadout validate says %q (%v) of:\n%s", what, problems, err, content)
		}
	}
	browsertest.Do(t, ctx, "SKILL.md tab", chromedp.Navigate(base+"/ui/skills/big"), chromedp.WaitVisible(chromedp.CSS("#md-editor .cm-editor")))
	browsertest.Do(t, ctx, "fill the form",
		chromedp.SendKeys(chromedp.CSS("#fm-version"), "1.2.0"),
		chromedp.SendKeys(chromedp.CSS("#fm-tags"), "ops, deploy"),
		chromedp.SendKeys(chromedp.CSS("#fm-category"), "docs"),
		chromedp.SendKeys(chromedp.CSS("#fm-requires-tools"), "bash"),
		chromedp.SendKeys(chromedp.CSS("#fm-license"), "MIT"))
	waitJS(t, ctx, "the text follows", `loadoutEdit.current.text().includes("requires-tools: bash")`)
	browsertest.Do(t, ctx, "save", chromedp.Click(chromedp.CSS("#md-save")))
	waitJS(t, ctx, "saved", `document.querySelector("#md-status").textContent.includes("Saved")`)
	got := getSkill(t, base, "big").Content
	validate("saved through the form", got)
	fm, diags, _ := skill.Parse([]byte(got), "SKILL.md", "big")
	if fm == nil || fm.Version != "1.2.0" || strings.Join(fm.Tags, ",") != "ops,deploy" || fm.Category != "docs" || strings.Join(fm.RequiresTools, ",") != "bash" || fm.License != "MIT" {
		t.Errorf("the server reads %+v (%v) from:\n%s", fm, diags, got)
	}
	if !strings.Contains(got, "metadata:\n  version: \"1.2.0\"\n") || strings.Contains(got, "\nversion:") {
		t.Errorf("version is not under metadata:\n%s", got)
	}

	// An older skill with version at the top level: editing it in the
	// form moves it under metadata.
	cur := getSkill(t, base, "big")
	old := "---\nname: big\ndescription: A stored skill with many files.\nversion: 1\n---\n# Big\n"
	if code, _, body := apiCall(t, base, "PUT", "/v1/skills/big/files/SKILL.md", old, "If-Match", fmt.Sprintf(`"v%d"`, cur.Version), "Content-Type", "text/markdown"); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	browsertest.Do(t, ctx, "reload", chromedp.Navigate(base+"/ui/skills/big"), chromedp.WaitVisible(chromedp.CSS("#md-editor .cm-editor")))
	if v := js[string](t, ctx, `document.querySelector("#fm-version").value`); v != "1" {
		t.Errorf("the form shows version %q of a top-level version: 1", v)
	}
	browsertest.Do(t, ctx, "edit the version", chromedp.SendKeys(chromedp.CSS("#fm-version"), ".1"), chromedp.Click(chromedp.CSS("#md-save")))
	waitJS(t, ctx, "saved", `document.querySelector("#md-status").textContent.includes("Saved")`)
	got = getSkill(t, base, "big").Content
	validate("a top-level version edited", got)
	if !strings.Contains(got, "metadata:\n  version: \"1.1\"\n") {
		t.Errorf("the edited version is not under metadata:\n%s", got)
	}
	// Emptying the only metadata field removes metadata.
	browsertest.Do(t, ctx, "empty the version", clearInput("#fm-version"), chromedp.Click(chromedp.CSS("#md-save")))
	waitJS(t, ctx, "saved", `document.querySelector("#md-status").textContent.includes("Saved") && !loadoutEdit.current.dirty()`)
	if got = getSkill(t, base, "big").Content; strings.Contains(got, "metadata") || strings.Contains(got, "version") {
		t.Errorf("an emptied version left:\n%s", got)
	}
	// A flow mapping (which the reference refuses) becomes a block one,
	// its other keys kept.
	flow := js[string](t, ctx, `loadoutEdit.setField("---\nname: big\ndescription: d\nmetadata: {author: me}\n---\n", "tags", "a, b")`)
	if flow != "---\nname: big\ndescription: d\nmetadata:\n  author: me\n  tags: a, b\n---\n" {
		t.Errorf("a flow metadata with tags set: %q", flow)
	}
	validate("a flow metadata rewritten", flow)
}

// TestAgentPageSourceKindsInBrowser (defect c): the agent page names each
// source by its kind (a folder and its path, the store, a git repository
// with its URL, ref and folders), never a git source as an empty folder.
func TestAgentPageSourceKindsInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	s := newDefectsSite(t)
	base := s.serve(t)
	browsertest.Do(t, ctx, "agent page", chromedp.Navigate(base+"/ui/agents/coder"), chromedp.WaitVisible(chromedp.CSS("ol.sources")))
	heads := js[[]string](t, ctx, `[...document.querySelectorAll("li.source h3")].map(h => h.textContent.trim())`)
	want := []string{"Folder " + filepath.Join(s.Dir, "skills"), "The store", "Git repository " + s.Git}
	if strings.Join(heads, "\n") != strings.Join(want, "\n") {
		t.Errorf("the sources are headed:\n%q\nwant:\n%q", heads, want)
	}
	if empty := js[int](t, ctx, `[...document.querySelectorAll("li.source h3 code")].filter(c => c.textContent.trim() === "").length`); empty != 0 {
		t.Errorf("%d sources name an empty path", empty)
	}
	remote := js[string](t, ctx, `(document.querySelector("li.source .source-remote") || {}).textContent || ""`)
	for _, w := range []string{"ref main", "folders skills", "id repo@main"} {
		if !strings.Contains(strings.Join(strings.Fields(remote), " "), w) {
			t.Errorf("the git source's line %q lacks %q", remote, w)
		}
	}
	if rows := js[[]string](t, ctx, `[...document.querySelectorAll("li.source:nth-child(3) tr[data-skill]")].map(r => r.dataset.skill)`); strings.Join(rows, ",") != "remote-one" {
		t.Errorf("the git source selects %q", rows)
	}
	// At 400 skills a source's table is scanned, not read: each
	// description is held to two lines (the whole text on hover).
	if h := js[float64](t, ctx, `Math.max(...[...document.querySelectorAll("table.agent-skills tbody tr")].map(r => r.getBoundingClientRect().height))`); h > 70 {
		t.Errorf("a skill's row on the agent page is %.0f px tall", h)
	}
	browsertest.Screenshot(t, ctx, "defects-agent-sources")
}

// pluralSlip is a count of one with a plural noun: "1 warnings".
var pluralSlip = regexp.MustCompile(`\b1 (warnings|errors|skills|agents|requests|files|receipts|tokens|versions)\b`)

// TestPlainWordsOnPages (defect d): the skill page's Agents tab and the
// agent page name sources in words ("the store (source 2)", "source 3:
// git … at main"), not config indexes ("skills[1] (store)"); the usage
// legend says what its count is; a count of one takes the singular.
func TestPlainWordsOnPages(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	s := newDefectsSite(t)
	base := s.serve(t)
	// One load, so the usage legend has a count of one.
	apiCall(t, base, "GET", "/v1/agents/writer/skills/big", "")
	pages := map[string][]string{
		"/ui/skills/big?tab=agents":        {"the store (source 2)"},
		"/ui/skills/remote-one?tab=agents": {"source 3: git " + s.Git + " at main"},
		"/ui/skills/short?tab=agents":      {"source 1: folder "},
		"/ui/skills/big?tab=usage":         {"1 request in all"},
		"/ui/agents/writer":                {"1 skill selected", "1 skill listed"},
		"/ui/agents":                       {"2 agents"},
	}
	for p, wants := range pages {
		browsertest.Do(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main h1")))
		text := strings.Join(strings.Fields(js[string](t, ctx, `document.querySelector("main").innerText`)), " ")
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", p, w, text)
			}
		}
		if strings.Contains(text, "skills[") || strings.Contains(text, "receipts in all") {
			t.Errorf("%s has config jargon:\n%s", p, text)
		}
		if m := pluralSlip.FindString(text); m != "" {
			t.Errorf("%s says %q", p, m)
		}
	}
}

// TestUsageChartInBrowser (defect e): the usage chart is as wide as the
// page's content on a laptop and on a phone, and no date label is cut
// off: the last one reads today's date in full, inside the chart.
func TestUsageChartInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	s := newDefectsSite(t)
	base := s.serve(t)
	for range 3 {
		apiCall(t, base, "GET", "/v1/agents/writer/skills/big", "")
	}
	today := time.Now().UTC().Format("Jan 2")
	for _, phone := range []bool{false, true} {
		name := map[bool]string{false: "laptop", true: "phone"}[phone]
		browsertest.Do(t, ctx, name+": usage tab", asPhone(phone), chromedp.Navigate(base+"/ui/skills/big?tab=usage"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
		g := js[map[string]float64](t, ctx, `(() => {
			const svg = document.querySelector("svg.chart").getBoundingClientRect();
			const box = document.querySelector("main section").getBoundingClientRect();
			let out = 0;
			for (const t of document.querySelectorAll("svg.chart text")) {
				const r = t.getBoundingClientRect();
				if (r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5) out++;
			}
			return {svg: svg.width, box: box.width, out, bars: document.querySelectorAll("svg.chart rect.bar-load").length};
		})()`)
		if g["svg"] < 0.95*g["box"] {
			t.Errorf("%s: the chart is %.0f px wide in a %.0f px section", name, g["svg"], g["box"])
		}
		if g["out"] != 0 {
			t.Errorf("%s: %v labels stick out of the chart", name, g["out"])
		}
		if g["bars"] != 1 {
			t.Errorf("%s: %v load bars, want today's", name, g["bars"])
		}
		if last := js[string](t, ctx, `[...document.querySelectorAll("svg.chart text.axis")].pop().textContent`); last != today {
			t.Errorf("%s: the last label is %q, want %q", name, last, today)
		}
		browsertest.Screenshot(t, ctx, "defects-usage-chart-"+name)
	}
}

// TestLoginPageQuietInBrowser (defect f): the sign-in page neither opens
// the live-reload stream (/ui/events, which needs a session) nor logs a
// console error.
func TestLoginPageQuietInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	s := newDefectsSite(t)
	cli(t, "token", "create", "--db", s.DB, "--scope", "admin", "--name", "root")
	base := s.serve(t)
	var mu sync.Mutex
	var errs, streams []string
	must(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				errs = append(errs, e.Entry.Text+" "+e.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				errs = append(errs, "console.error")
			}
		case *runtime.EventExceptionThrown:
			errs = append(errs, e.ExceptionDetails.Text)
		case *network.EventRequestWillBeSent:
			if strings.Contains(e.Request.URL, "/ui/events") {
				streams = append(streams, e.Request.URL)
			}
		}
	}))
	browsertest.Do(t, ctx, "log, console and network on", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
		return err
	}))
	browsertest.Do(t, ctx, "the login page", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if loc := js[string](t, ctx, "location.pathname"); loc != "/ui/login" {
		t.Fatalf("at %s, not the login page", loc)
	}
	// The stream retried after a second: wait past that.
	time.Sleep(2500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(streams) > 0 {
		t.Errorf("the login page opened the live stream: %q", streams)
	}
	if len(errs) > 0 {
		t.Errorf("the login page logged %d console errors: %q", len(errs), errs)
	}
}

// TestSkillPageTabsOnPhone (defect g): at 375×800 a skill with a long
// description shows its tabs within the first 300 px: the description is
// clamped to two lines with a button that shows it whole; a short
// description gets no button.
func TestSkillPageTabsOnPhone(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	s := newDefectsSite(t)
	base := s.serve(t)
	browsertest.Do(t, ctx, "phone: a long description", asPhone(true), chromedp.Navigate(base+"/ui/skills/sheets"), chromedp.WaitVisible(chromedp.CSS("nav.tabs")))
	if top := js[float64](t, ctx, `document.querySelector("nav.tabs").getBoundingClientRect().top`); top > 300 {
		t.Errorf("the tabs start at y %.0f of 800, want within 300", top)
	}
	browsertest.Screenshot(t, ctx, "defects-skill-phone")
	waitJS(t, ctx, "the more button", `document.querySelector(".desc-more").getClientRects().length > 0`)
	browsertest.Do(t, ctx, "show the whole description", chromedp.Click(chromedp.CSS(".desc-more")))
	if d := js[map[string]any](t, ctx, `(() => { const d = document.querySelector("#skill-desc"); return {cut: d.scrollHeight > d.clientHeight + 1, expanded: document.querySelector(".desc-more").getAttribute("aria-expanded")}; })()`); d["cut"] != false || d["expanded"] != "true" {
		t.Errorf("after the button: %v", d)
	}
	browsertest.Do(t, ctx, "a short description", chromedp.Navigate(base+"/ui/skills/short"), chromedp.WaitVisible(chromedp.CSS("nav.tabs")))
	if shown := js[bool](t, ctx, `document.querySelector(".desc-more").getClientRects().length > 0`); shown {
		t.Errorf("a short description shows a more button")
	}
}

// TestNewSkillTemplateInBrowser (defect h): New skill says where the skill
// goes (the store, and the agents that read it) and starts from a
// template; a skill created with only a name and a description is valid
// for the reference validator and keeps the template's sections.
func TestNewSkillTemplateInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	s := newDefectsSite(t)
	base := s.serve(t)
	browsertest.Do(t, ctx, "new skill", chromedp.Navigate(base+"/ui/new"), chromedp.WaitVisible(chromedp.CSS("#new-name")))
	where := strings.Join(strings.Fields(js[string](t, ctx, `(document.querySelector("#new-where") || {}).textContent || ""`)), " ")
	for _, w := range []string{"the store", "coder (source 2)", "writer (source 1)"} {
		if !strings.Contains(where, w) {
			t.Errorf("the form's destination %q lacks %q", where, w)
		}
	}
	body := js[string](t, ctx, `document.querySelector("#new-body").value`)
	for _, w := range []string{"## When to use", "## Steps", "## Examples"} {
		if !strings.Contains(body, w) {
			t.Errorf("the template lacks %q:\n%s", w, body)
		}
	}
	browsertest.Do(t, ctx, "name and description",
		chromedp.SendKeys(chromedp.CSS("#new-name"), "fresh"),
		chromedp.SendKeys(chromedp.CSS("#new-description"), "Does fresh things. Use when asked for fresh things."))
	if pre := js[string](t, ctx, `document.querySelector("#new-preview").textContent`); !strings.HasPrefix(pre, "---\nname: fresh\ndescription: Does fresh things.") {
		t.Errorf("the preview of SKILL.md:\n%s", pre)
	}
	browsertest.Screenshot(t, ctx, "defects-new-skill")
	browsertest.Do(t, ctx, "create", chromedp.Click(chromedp.CSS("#new-go")))
	waitJS(t, ctx, "created", `location.pathname === "/ui/skills/fresh"`)
	got := getSkill(t, base, "fresh").Content
	dir := filepath.Join(t.TempDir(), "fresh")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(got), 0o644))
	if problems, err := skill.Validate(dir); err != nil || len(problems) > 0 {
		t.Errorf("the new skill: %q (%v):\n%s", problems, err, got)
	}
	if !strings.Contains(got, "## Steps") {
		t.Errorf("the new skill lost the template:\n%s", got)
	}
}

// TestPagesFitAPhone (defect j): at 375×800 no page scrolls sideways, and
// no table scrolls inside its box: tables stack or drop low-value columns.
func TestPagesFitAPhone(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	s := newDefectsSite(t)
	base := s.serve(t)
	apiCall(t, base, "GET", "/v1/agents/writer/skills/big", "")
	apiCall(t, base, "GET", "/v1/agents/writer/skills/big/files/references/file-01.md", "")
	pages := []string{"/ui/", "/ui/diagnostics", "/ui/import", "/ui/tokens", "/ui/agents", "/ui/agents/coder", "/ui/agents/writer", "/ui/new", "/ui/receipts"}
	for _, tab := range []string{"skill-md", "files", "preview", "versions", "usage", "agents"} {
		pages = append(pages, "/ui/skills/big?tab="+tab, "/ui/skills/sheets?tab="+tab)
	}
	browsertest.Do(t, ctx, "phone", asPhone(true))
	for _, p := range pages {
		browsertest.Do(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main h1")))
		w := js[map[string]any](t, ctx, `(() => {
			const doc = document.scrollingElement.scrollWidth;
			const wide = [...document.querySelectorAll(".table-wrap, table")].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => (e.className || e.tagName) + " " + e.scrollWidth + ">" + e.clientWidth);
			return {doc, inner: innerWidth, wide};
		})()`)
		if w["doc"].(float64) > w["inner"].(float64) {
			t.Errorf("%s is %v px wide on a %v px phone", p, w["doc"], w["inner"])
		}
		if wide := w["wide"].([]any); len(wide) > 0 {
			t.Errorf("%s: tables scroll sideways: %v", p, wide)
		}
	}
	browsertest.Do(t, ctx, "agent page", chromedp.Navigate(base+"/ui/agents/coder"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Screenshot(t, ctx, "defects-agent-phone")
}
