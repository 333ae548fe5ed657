package webui_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// TestRolesInBrowser: in Chromium against `loadout serve`, a viewer signs
// in, sees its role in the header, a stored skill's SKILL.md read-only
// (no Save, no frontmatter form), no New skill or Import link, and gets
// the "Authors only" page on /ui/new; an author sees Save and New skill.
func TestRolesInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills"), 0o755))
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}]}]}`)
	db := filepath.Join(dir, "loadout.db")
	admin := cli(t, "token", "create", "--db", db, "--role", "admin", "--name", "root")
	viewer := cli(t, "token", "create", "--db", db, "--role", "viewer", "--name", "vera")
	author := cli(t, "token", "create", "--db", db, "--role", "author", "--name", "ann")
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg, "--db", db, "--no-watch")
	base := srv.URL
	code, body := rawDo(t, "POST", base+"/v1/skills", "", admin, strings.NewReader(`{"content":"---\nname: gamma\ndescription: Use when gamma.\n---\nDo gamma.\n"}`), "Content-Type", "application/json")
	if code != http.StatusCreated {
		t.Fatalf("creating gamma: %d %s", code, body)
	}
	signIn := func(tok string) {
		browsertest.Do(t, ctx, "sign in", chromedp.Navigate(base+"/ui/login"), chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), tok), chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")))
		at(t, ctx, base, "/ui/")
	}

	signIn(viewer)
	if role := browsertest.Get(t, ctx, "role", chromedp.Text(chromedp.ID("who-role"))); role != "viewer" {
		t.Errorf("the header says %q, want viewer", role)
	}
	if n := js[int](t, ctx, `document.querySelectorAll("#new-skill-link, a[href='/ui/import'], a[href='/ui/tokens']").length`); n != 0 {
		t.Errorf("a viewer sees %d of New skill, Import, Tokens", n)
	}
	browsertest.Do(t, ctx, "skill page", chromedp.Navigate(base+"/ui/skills/gamma?tab=skill-md"), chromedp.WaitReady(chromedp.ID("md-text")))
	if n := js[int](t, ctx, `document.querySelectorAll("#md-save, #fm-form").length`); n != 0 {
		t.Errorf("a viewer sees the editor's Save or frontmatter form (%d)", n)
	}
	if !js[bool](t, ctx, `document.querySelector("#md-text").readOnly`) {
		t.Error("a viewer's SKILL.md is not read-only")
	}
	shot := browsertest.Screenshot(t, ctx, "roles-viewer-skill")
	t.Logf("screenshot: %s", shot)
	browsertest.Do(t, ctx, "new page", chromedp.Navigate(base+"/ui/new"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if h := browsertest.Get(t, ctx, "heading", chromedp.Text(chromedp.CSS("main h1"))); h != "Authors only" {
		t.Errorf("a viewer on /ui/new: %q", h)
	}
	if txt := browsertest.Get(t, ctx, "page", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(txt, "needs the author role") {
		t.Errorf("the refusal does not name the role:\n%s", txt)
	}
	browsertest.Screenshot(t, ctx, "roles-viewer-refused")
	browsertest.Do(t, ctx, "sign out", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`form[action="/ui/logout"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/ui/logout"] button`)))
	at(t, ctx, base, "/ui/login")

	signIn(author)
	if n := js[int](t, ctx, `document.querySelectorAll("#new-skill-link").length`); n != 1 {
		t.Errorf("an author does not see New skill")
	}
	browsertest.Do(t, ctx, "skill page", chromedp.Navigate(base+"/ui/skills/gamma?tab=skill-md"), chromedp.WaitReady(chromedp.ID("md-save")))
	browsertest.Screenshot(t, ctx, "roles-author-skill")
}
