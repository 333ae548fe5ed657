package webui_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// writeSkill writes DIR/NAME/SKILL.md with the given frontmatter lines.
func writeSkill(t testing.TB, root, dir string, front ...string) {
	t.Helper()
	p := filepath.Join(root, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\n" + strings.Join(front, "\n") + "\n---\n# " + dir + "\n\nThe body of " + dir + ".\n"
	if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pagesFixture is a folder of skills, a SQLite store and a config with two
// agents; the "coder" agent has a small budget so the listing is cut.
func pagesFixture(t testing.TB) (cfg, skills, db string) {
	t.Helper()
	dir := t.TempDir()
	skills = filepath.Join(dir, "skills")
	long := "does a great many things, described at length so that the small budget of the coder agent cannot hold every description in full"
	for _, n := range []string{"alpha", "beta", "delta", "gamma", "omega"} {
		writeSkill(t, skills, n, "name: "+n, "description: The "+n+" skill "+long+".")
	}
	writeSkill(t, skills, "secret", "name: secret", "description: A skill only a person starts.", "disable-model-invocation: true")
	// A name that does not match its folder: a warning on the name field,
	// at line 2 of SKILL.md.
	writeSkill(t, skills, "mism", "name: wrongname", "description: A skill whose name does not match its folder.")
	db = filepath.Join(dir, "loadout.db")
	cfg = filepath.Join(dir, "loadout.json")
	conf := map[string]any{
		"store": db,
		"agents": []map[string]any{
			{"agentId": "coder", "displayName": "Coder", "budget": 520, "format": "progressive",
				"skills":  []map[string]any{{"root": skills, "available": []string{"*"}, "inline": []string{"alpha"}}, {"store": true}},
				"preload": []string{"beta"}},
			{"agentId": "other", "skills": []map[string]any{{"root": skills}}},
		},
	}
	data, _ := json.Marshal(conf)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, skills, db
}

// TestAgentsPageInBrowser: the agent page shows each skill's mode, the
// prompt in each format, and a budget meter with what the budget left
// out.
func TestAgentsPageInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	cfg, _, _ := pagesFixture(t)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg)

	browsertest.Do(t, ctx, "open the agents list", chromedp.Navigate(srv.URL+"/ui/agents"), chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/agents/coder"]`)))
	list := browsertest.Get(t, ctx, "agents list", chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"coder", "Coder", "other", "progressive"} {
		if !strings.Contains(list, want) {
			t.Errorf("the agents list lacks %q:\n%s", want, list)
		}
	}
	browsertest.Do(t, ctx, "open coder", chromedp.Click(chromedp.CSS(`a[href="/ui/agents/coder"]`)), chromedp.WaitVisible(chromedp.CSS("#budget-meter")))
	modes := browsertest.Get(t, ctx, "modes", chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll("tr[data-skill]")).map(r => [r.dataset.skill, r.dataset.mode]))`))
	for name, want := range map[string]string{"alpha": "inline", "beta": "preloaded", "secret": "hidden", "gamma": "listed", "wrongname": "listed"} {
		if modes[name] != want {
			t.Errorf("%s: mode %q, want %q (all: %v)", name, modes[name], want, modes)
		}
	}
	for _, f := range []string{"pi", "catalog", "progressive"} {
		browsertest.Do(t, ctx, "format "+f,
			chromedp.Click(chromedp.CSS(`nav[aria-label="Prompt format"] a[href*="format=`+f+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Prompt format"] a[aria-current="page"][href*="format=`+f+`"]`)))
		prompt := browsertest.Get(t, ctx, "prompt "+f, chromedp.Text(chromedp.CSS("pre.prompt")))
		marker := map[string]string{"pi": "<available_skills>", "catalog": "## Agent Skills", "progressive": "load_skill"}[f]
		if !strings.Contains(prompt, marker) || !strings.Contains(prompt, "The body of alpha") {
			t.Errorf("%s prompt lacks %q or alpha's inline body:\n%s", f, marker, prompt)
		}
	}
	// A small budget: the meter shows the characters used of it, and the
	// skills left out are named.
	browsertest.Do(t, ctx, "small budget",
		chromedp.Navigate(srv.URL+"/ui/agents/coder?format=pi&budget=600"), chromedp.WaitVisible(chromedp.CSS("#budget-meter")))
	meter := browsertest.Get(t, ctx, "meter", chromedp.Evaluate[map[string]float64](
		`(() => { const m = document.querySelector("#budget-meter"); return {value: m.value, max: m.max, labels: m.labels.length}; })()`))
	if meter["max"] != 600 || meter["value"] <= 0 || meter["value"] > 600 || meter["labels"] != 1 {
		t.Errorf("budget meter %v: want a labelled meter of at most 600 of 600", meter)
	}
	text := browsertest.Get(t, ctx, "budget text", chromedp.Text(chromedp.CSS(".budget")))
	if !strings.Contains(text, "of 600 characters") || !strings.Contains(text, "Left out of the listing") {
		t.Errorf("the budget box does not say what was cut:\n%s", text)
	}
	omitted := browsertest.Get(t, ctx, "omitted", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".cut-list.omitted li")).map(li => li.textContent)`))
	if len(omitted) == 0 {
		t.Errorf("no skill is listed as left out at budget 600")
	}
	// What the API reports for the same budget is what the page shows.
	resp, err := http.Get(srv.URL + "/v1/agents/coder/prompt?format=pi&budget=600&report=full")
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		Report struct {
			Chars   int      `json:"chars"`
			Omitted []string `json:"omitted"`
		} `json:"report"`
	}
	json.NewDecoder(resp.Body).Decode(&api)
	resp.Body.Close()
	if int(meter["value"]) != api.Report.Chars || strings.Join(omitted, ",") != strings.Join(api.Report.Omitted, ",") {
		t.Errorf("the page shows %v characters and omitted %v; the API says %d and %v", meter["value"], omitted, api.Report.Chars, api.Report.Omitted)
	}
	diags := browsertest.Get(t, ctx, "agent diagnostics", chromedp.Text(chromedp.CSS(`section[aria-labelledby="diags-h"]`)))
	if !strings.Contains(diags, "name-mismatch") || !strings.Contains(diags, "inline-overlap") {
		t.Errorf("the agent's diagnostics are missing:\n%s", diags)
	}
	browsertest.Screenshot(t, ctx, "agent-laptop-light")
}

// zipOf builds a zip of name -> content.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImportExportInBrowser: a zip of one good and one refused skill is
// refused as a whole (the refused one named with why, nothing written,
// as the API confirms); the good one alone imports; export downloads JSON.
func TestImportExportInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	cfg, _, _ := pagesFixture(t)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg)
	dir := t.TempDir()
	two := filepath.Join(dir, "two.zip")
	testutil.Must(t, os.WriteFile(two, zipOf(t, map[string]string{
		"imported-good/SKILL.md": "---\nname: imported-good\ndescription: A good skill.\n---\nDo good things.\n",
		"imported-bad/SKILL.md":  "---\nname: imported-bad\n---\nNo description.\n",
	}), 0o644))
	one := filepath.Join(dir, "good.zip")
	testutil.Must(t, os.WriteFile(one, zipOf(t, map[string]string{
		"imported-good/SKILL.md": "---\nname: imported-good\ndescription: A good skill.\n---\nDo good things.\n",
	}), 0o644))

	browsertest.Do(t, ctx, "open import", chromedp.Navigate(srv.URL+"/ui/import"), chromedp.WaitVisible(chromedp.CSS("#import-files")))
	browsertest.Do(t, ctx, "choose and import the zip",
		chromedp.SetUploadFiles(chromedp.CSS("#import-files"), []string{two}),
		chromedp.WaitVisible(chromedp.CSS("#import-chosen li")),
		chromedp.Click(chromedp.CSS("#import-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#import-rows tr[data-action="refused"]`)))
	rows := browsertest.Get(t, ctx, "result rows", chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll("#import-rows tr")).map(r => [r.dataset.skill, r.dataset.action + ": " + r.querySelector(".why").textContent]))`))
	if !strings.HasPrefix(rows["imported-bad"], "refused: ") || !strings.Contains(rows["imported-bad"], "description") {
		t.Errorf("the refused skill is not named with why: %v", rows)
	}
	if !strings.HasPrefix(rows["imported-good"], "skipped") {
		t.Errorf("the good skill of a refused import: %q, want skipped (not written)", rows["imported-good"])
	}
	status := browsertest.Get(t, ctx, "status", chromedp.Text(chromedp.CSS("#import-status")))
	if !strings.Contains(status, "nothing was written: 1 of 2 skills refused; fix it and import again") {
		t.Errorf("the status does not say nothing was written, in words that agree with the counts: %q", status)
	}
	for _, name := range []string{"imported-good", "imported-bad"} {
		resp, err := http.Get(srv.URL + "/v1/skills/" + name)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("after a refused import GET /v1/skills/%s: %d, want 404 (nothing written)", name, resp.StatusCode)
		}
	}
	browsertest.Screenshot(t, ctx, "import-refused-laptop-light")

	// The good skill alone is created.
	browsertest.Do(t, ctx, "import the good zip",
		chromedp.Navigate(srv.URL+"/ui/import"), chromedp.WaitVisible(chromedp.CSS("#import-files")),
		chromedp.SetUploadFiles(chromedp.CSS("#import-files"), []string{one}),
		chromedp.WaitVisible(chromedp.CSS("#import-chosen li")),
		chromedp.Click(chromedp.CSS("#import-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#import-rows tr[data-action="created"]`)))
	if status := browsertest.Get(t, ctx, "status", chromedp.Text(chromedp.CSS("#import-status"))); status != "1 skill imported: 1 written, 0 unchanged" {
		t.Errorf("the status of one skill imported: %q", status)
	}
	resp, err := http.Get(srv.URL + "/v1/skills/imported-good")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the import GET /v1/skills/imported-good: %d", resp.StatusCode)
	}

	// Export: the page's JSON link, fetched with the page's cookies.
	browsertest.Do(t, ctx, "export list", chromedp.Navigate(srv.URL+"/ui/import?q=alpha"), chromedp.WaitVisible(chromedp.CSS(`tr[data-skill="alpha"] a.export-json`)))
	body := browsertest.Get(t, ctx, "fetch the JSON export", chromedp.Evaluate[string](
		`fetch(document.querySelector('tr[data-skill="alpha"] a.export-json').href, {credentials: "same-origin"}).then(r => r.ok ? r.text() : "HTTP " + r.status)`,
		chromedp.EvalAwaitPromise))
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Skill         struct {
			Name    string `json:"name"`
			Content string `json:"content"`
		} `json:"skill"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.SchemaVersion != 2 || doc.Skill.Name != "alpha" || !strings.Contains(doc.Skill.Content, "The body of alpha") {
		t.Errorf("the JSON export link gave %v:\n%.300s", err, body)
	}
	zipType := browsertest.Get(t, ctx, "fetch the zip export", chromedp.Evaluate[string](
		`fetch(document.querySelector('tr[data-skill="alpha"] a.export-zip').href, {credentials: "same-origin"}).then(r => r.status + " " + r.headers.get("Content-Type"))`,
		chromedp.EvalAwaitPromise))
	if !strings.HasPrefix(zipType, "200 application/zip") {
		t.Errorf("the zip export link: %s", zipType)
	}
}

// TestDiagnosticsPageInBrowser: a diagnostic is listed under its severity
// and code, linked to its skill's SKILL.md at the line of its field, and
// the filters narrow the list.
func TestDiagnosticsPageInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	cfg, _, _ := pagesFixture(t)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg)

	browsertest.Do(t, ctx, "open diagnostics", chromedp.Navigate(srv.URL+"/ui/diagnostics"), chromedp.WaitVisible(chromedp.CSS(`tr[data-code="name-mismatch"]`)))
	href := browsertest.Get(t, ctx, "link", chromedp.Evaluate[string](`document.querySelector('tr[data-code="name-mismatch"] a').getAttribute("href")`))
	if href != "/ui/skills/wrongname?tab=skill-md#L2" {
		t.Errorf("the name-mismatch diagnostic links to %q, want its skill's SKILL.md at line 2", href)
	}
	row := browsertest.Get(t, ctx, "row", chromedp.Text(chromedp.CSS(`tr[data-code="name-mismatch"]`)))
	if !strings.Contains(row, "name") || !strings.Contains(row, "2") || !strings.Contains(row, "does not match") {
		t.Errorf("the row lacks field, line or message: %q", row)
	}
	browsertest.Do(t, ctx, "filter by code",
		chromedp.SetValue(chromedp.CSS("#diag-code"), "inline-overlap"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Filter diagnostics"] button`)),
		// "Show all" is there only on a filtered page.
		chromedp.WaitVisible(chromedp.CSS(`a.button[href="/ui/diagnostics"]`)))
	codes := browsertest.Get(t, ctx, "codes", chromedp.Evaluate[[]string](`Array.from(new Set(Array.from(document.querySelectorAll("tr[data-code]")).map(r => r.dataset.code)))`))
	if strings.Join(codes, ",") != "inline-overlap" {
		t.Errorf("filtered by code inline-overlap, the page shows %v", codes)
	}
	browsertest.Do(t, ctx, "filter by severity", chromedp.Navigate(srv.URL+"/ui/diagnostics?severity=error"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if n := browsertest.Get(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll("tr[data-code]").length`)); n != 0 {
		t.Errorf("severity=error shows %d rows; the fixture has no errors", n)
	}
}

// TestLiveEditInBrowser: a SKILL.md edited on disk shows in an open skills
// page without a reload (the list is refreshed in place).
func TestLiveEditInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	cfg, skills, _ := pagesFixture(t)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg)

	browsertest.Do(t, ctx, "open skills", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Get(t, ctx, "live stream connected", chromedp.Poll[bool](`document.documentElement.dataset.live === "connected"`, chromedp.WithPollingTimeout(20*time.Second)))
	// A mark that a reload would wipe, and a record of the events.
	browsertest.Get(t, ctx, "mark", chromedp.Evaluate[bool](`window.__noReload = true; window.__events = []; window.addEventListener("loadout:changed", e => window.__events.push(e.detail)); true`))
	want := fmt.Sprintf("Edited on disk at %d.", time.Now().UnixNano())
	writeSkill(t, skills, "gamma", "name: gamma", "description: "+want)
	browsertest.Get(t, ctx, "the edit shows", chromedp.Poll[bool](`document.querySelector("main").textContent.includes(`+jsString(want)+`)`, chromedp.WithPollingTimeout(20*time.Second)))
	still := browsertest.Get(t, ctx, "no reload", chromedp.Evaluate[bool](`window.__noReload === true`))
	if !still {
		t.Errorf("the page was reloaded; the edit should appear in place")
	}
	events := browsertest.Get(t, ctx, "events", chromedp.Evaluate[[]map[string]any](`window.__events`))
	if len(events) == 0 || !strings.Contains(fmt.Sprint(events[len(events)-1]["changed"]), "gamma") {
		t.Errorf("loadout:changed details %v: want one naming gamma", events)
	}

	// A page that is not a list and has no editor (a skill's preview)
	// shows the banner instead. (The SKILL.md tab's editor takes the event
	// over and reloads its text, or warns when it has unsaved edits.)
	browsertest.Do(t, ctx, "open a skill", chromedp.Navigate(srv.URL+"/ui/skills/delta?tab=preview"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Get(t, ctx, "live stream connected", chromedp.Poll[bool](`document.documentElement.dataset.live === "connected"`, chromedp.WithPollingTimeout(20*time.Second)))
	writeSkill(t, skills, "delta", "name: delta", "description: Delta, edited on disk.")
	browsertest.Do(t, ctx, "the banner", chromedp.WaitVisible(chromedp.CSS("#live button.live-refresh")))
	banner := browsertest.Get(t, ctx, "banner text", chromedp.Text(chromedp.CSS("#live")))
	if !strings.Contains(banner, "Skills changed: delta") {
		t.Errorf("the banner says %q", banner)
	}
	browsertest.Do(t, ctx, "refresh", chromedp.Click(chromedp.CSS("#live button.live-refresh")), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Get(t, ctx, "the edit after refresh", chromedp.Poll[bool](`document.querySelector("main").textContent.includes("Delta, edited on disk.")`, chromedp.WithPollingTimeout(20*time.Second)))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BenchmarkLiveEditInBrowser measures the time from writing a SKILL.md in
// a watched root to the change showing in an open skills page in
// Chromium (target: under 1 s). The page records, with a
// MutationObserver, the wall-clock time the new description appeared in
// <main>; the benchmark subtracts the time just before the write (same
// host, same clock). Reported as ms/edit (mean) and max-ms.
//
//	go test ./webui -run '^$' -bench LiveEditInBrowser -benchtime 10x
func BenchmarkLiveEditInBrowser(b *testing.B) {
	ctx := browsertest.Browser(b, 1280, 900)
	cfg, skills, _ := pagesFixture(b)
	srv := browsertest.Serve(b, []string{"HOME=" + b.TempDir()}, "--config", cfg)
	browsertest.Do(b, ctx, "open skills", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Get(b, ctx, "live stream connected", chromedp.Poll[bool](`document.documentElement.dataset.live === "connected"`, chromedp.WithPollingTimeout(20*time.Second)))
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		want := fmt.Sprintf("Edited on disk, round %d at %d.", n, time.Now().UnixNano())
		browsertest.Get(b, ctx, "watch", chromedp.Evaluate[bool](`(() => {
			window.__seenAt = 0;
			const want = `+jsString(want)+`;
			const check = () => { if (!window.__seenAt && document.querySelector("main").textContent.includes(want)) window.__seenAt = Date.now(); };
			new MutationObserver(check).observe(document.body, {childList: true, subtree: true, characterData: true});
			return true; })()`))
		start := time.Now()
		writeSkill(b, skills, "gamma", "name: gamma", "description: "+want)
		seen := browsertest.Get(b, ctx, "the edit shows", chromedp.Poll[float64](`window.__seenAt || false`, chromedp.WithPollingTimeout(20*time.Second)))
		d := time.Duration(int64(seen)-start.UnixMilli()) * time.Millisecond
		total += d
		worst = max(worst, d)
		n++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/edit")
	b.ReportMetric(float64(worst.Milliseconds()), "max-ms")
}
