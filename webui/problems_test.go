package webui

import (
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// TestProblemCountsIncludeSafetyFindings: the skills list's Problems
// column and the agents list's errors count the safety checks' errors and
// warnings about a folder skill served with them (a secret in a script, a
// zero-width character in SKILL.md), not only the catalog's diagnostics;
// a clean skill counts none, and info findings ("use when") count none.
func TestProblemCountsIncludeSafetyFindings(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "clean", "Use when it is clean.")
	testutil.Mkdir(t, filepath.Join(dir, "keyed", "scripts"))
	testutil.Write(t, filepath.Join(dir, "keyed", "SKILL.md"), "---\nname: keyed\ndescription: Use when keyed.\n---\nRun sc\u200bripts/ship.sh.\n")
	testutil.Write(t, filepath.Join(dir, "keyed", "scripts", "ship.sh"), "#!/bin/sh\nAWS_ACCESS_KEY_ID=AKIAZ7QX3M5KJ2W4PN8R aws s3 ls\n")
	// misnamed's one problem is the catalog's: its name is not its
	// folder's.
	testutil.Mkdir(t, filepath.Join(dir, "folder"))
	testutil.Write(t, filepath.Join(dir, "folder", "SKILL.md"), "---\nname: misnamed\ndescription: Use when misnamed.\n---\nRun it.\n")
	// linky's is the safety checks' warning: a link to a file it lacks.
	testutil.Mkdir(t, filepath.Join(dir, "linky"))
	testutil.Write(t, filepath.Join(dir, "linky", "SKILL.md"), "---\nname: linky\ndescription: Use when linky.\n---\nSee [the notes](references/missing.md).\n")
	u := folderUI(t, dir)

	w := serve(u.skillsPage, openP, httptest.NewRequest("GET", "/ui/", nil))
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `href="/ui/diagnostics?skill=keyed">2</a>`) || strings.Contains(body, `href="/ui/diagnostics?skill=clean"`) {
		t.Errorf("skills list: %d; want keyed with 2 problems and clean with none:\n%s", w.Code, body)
	}
	if !strings.Contains(body, `href="/ui/diagnostics?skill=misnamed">1</a>`) {
		t.Errorf("skills list: want misnamed with 1 problem (its name is not its folder's):\n%s", body)
	}
	if !strings.Contains(body, `href="/ui/diagnostics?skill=linky">1</a>`) {
		t.Errorf("skills list: want linky with 1 problem (a broken link):\n%s", body)
	}
	w = serve(u.agentsPage, openP, httptest.NewRequest("GET", "/ui/agents", nil))
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `<span class="badge err">2 errors</span>`) {
		t.Errorf("agents list: %d; want 2 errors:\n%s", w.Code, body)
	}
	// Its skill counts: four skills, all listed (none inline, preloaded
	// or hidden).
	if body := w.Body.String(); !regexp.MustCompile(`<td[^>]*>4</td>\s*<td[^>]*>4</td>\s*<td[^>]*>0</td>\s*<td[^>]*>0</td>\s*<td[^>]*>0</td>`).MatchString(body) {
		t.Errorf("agents list: want 4 skills, 4 listed, none inline, preloaded or hidden:\n%s", body)
	}
}
