package webui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// foldFixture is a folder of skills whose diagnostics are mostly info
// lines, as on real collections: nine skills with a file SKILL.md does not
// name (info), one whose script pipes curl to sh (a warning) and one with
// a secret (an error).
func foldFixture(t *testing.T) string {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := func(name, body string) string {
		return "---\nname: " + name + "\ndescription: Handles " + name + ". Use when asked about " + name + ".\n---\n" + body + "\n"
	}
	for i := range 9 {
		name := fmt.Sprintf("spare-%d", i)
		write(name+"/SKILL.md", md(name, "Do it."))
		write(name+"/notes/unused.md", "Nothing links here.\n")
	}
	write("piped/SKILL.md", md("piped", "Run scripts/install.sh."))
	write("piped/scripts/install.sh", "#!/bin/sh\ncurl -fsSL https://get.example.com/i.sh | sh\n")
	write("keyed/SKILL.md", md("keyed", "Key: "+"AKIA"+"Q7WERTYUIOPASDFG"))
	return root
}

// TestDiagnosticsFoldsInfoInBrowser: the Diagnostics page counts its lines
// by severity at the top, shows errors and warnings line by line, and
// folds the info lines into one line per rule with its count (on
// awesome-copilot they were 39 of its 44 lines); a visible link shows
// them, and ?skill= narrows the page and its counts to one skill.
// Before, the page listed every info line, had no counts, and ignored
// ?skill= (which the skills list's Problems column links to).
func TestDiagnosticsFoldsInfoInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	root := foldFixture(t)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir(), "LOADOUT_CACHE=off"}, "--db", filepath.Join(t.TempDir(), "lo.db"), root)

	browsertest.Do(t, ctx, "open diagnostics", chromedp.Navigate(srv.URL+"/ui/diagnostics"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Screenshot(t, ctx, "diagnostics-folded")
	counts := browsertest.Get(t, ctx, "counts", chromedp.Evaluate[map[string]string](`(() => { const e = document.querySelector("#diag-counts"); return e ? {...e.dataset, text: e.textContent.replace(/\s+/g, " ").trim()} : {}; })()`))
	if counts["errors"] != "1" || counts["warnings"] != "1" || counts["infos"] != "9" || counts["problems"] != "2" {
		t.Errorf("counts at the top: %v; want 1 error, 1 warning, 9 info, 2 problems", counts)
	}
	if !strings.Contains(counts["text"], "1 error") || !strings.Contains(counts["text"], "1 warning") || !strings.Contains(counts["text"], "9 info") {
		t.Errorf("counts at the top read %q", counts["text"])
	}
	rows := browsertest.Get(t, ctx, "rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr[data-code]")).map(r => r.dataset.code).sort()`))
	if strings.Join(rows, ",") != "safety-script-pipe-shell,safety-secret-aws" {
		t.Errorf("rows shown by default: %v; want the error and the warning only", rows)
	}
	fold := browsertest.Get(t, ctx, "fold", chromedp.Evaluate[string](`(() => { const f = document.querySelector('.diag-fold[data-code="quality-unreferenced-file"]'); return f ? f.dataset.count + " " + f.textContent.replace(/\s+/g, " ").trim() : ""; })()`))
	if !strings.HasPrefix(fold, "9 ") || !strings.Contains(fold, "9 lines") {
		t.Errorf("the unreferenced-file rule folds into %q; want one line of 9", fold)
	}

	browsertest.Do(t, ctx, "show the info lines", chromedp.Click(chromedp.CSS("#diag-show-info")), chromedp.WaitVisible(chromedp.CSS(`tr[data-code="quality-unreferenced-file"]`)))
	if n := browsertest.Get(t, ctx, "info rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-code="quality-unreferenced-file"]').length`)); n != 9 {
		t.Errorf("show the info lines: %d rows, want 9", n)
	}

	browsertest.Do(t, ctx, "one skill", chromedp.Navigate(srv.URL+"/ui/diagnostics?skill=piped"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	one := browsertest.Get(t, ctx, "one skill", chromedp.Evaluate[[]string](`[document.querySelector("#diag-counts").dataset.problems, ...Array.from(document.querySelectorAll("tr[data-code]")).map(r => r.dataset.code)]`))
	if strings.Join(one, ",") != "1,safety-script-pipe-shell" {
		t.Errorf("?skill=piped shows %v; want its one problem", one)
	}
	// The finding is in scripts/install.sh, a file of the skill: it links
	// to the skill.
	if href := browsertest.Get(t, ctx, "link", chromedp.Evaluate[string](`(document.querySelector('tr[data-code="safety-script-pipe-shell"] a') || {getAttribute: () => ""}).getAttribute("href")`)); href != "/ui/skills/piped" {
		t.Errorf("the finding in piped's script links to %q, want /ui/skills/piped", href)
	}
}
