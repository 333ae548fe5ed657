package webui_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// TestReviewInBrowser: with review required, an author's edit waits in the
// review queue (its diff and findings shown), a second token approves it
// with the page's button, and the Agents tab pins an agent to a version.
// Screenshots: review-queue.png and review-pins.png (docs/ui with
// LOADOUT_UPDATE_SCREENSHOTS).
func TestReviewInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	c := newCatalog(t)
	cfg, err := os.ReadFile(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(cfg), "\n{") + 2
	cfg = []byte(string(cfg[:i]) + "\n  \"review\": {\"required\": true}," + string(cfg[i:]))
	if err := os.WriteFile(c.Config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	author := cli(t, "token", "create", "--db", c.DB, "--name", "alice", "--scope", "admin")
	reviewer := cli(t, "token", "create", "--db", c.DB, "--name", "bob", "--scope", "admin")
	srv := c.serve(t)
	base := srv.URL
	content := strings.Replace(skillMD(t, base, author, c.Stored), "Mention breaking changes first.", "Mention breaking changes first, then security fixes.", 1)
	if code, body := rawDo(t, "PUT", base+"/v1/skills/"+c.Stored+"/files/SKILL.md", "", author, strings.NewReader(content), "Content-Type", "application/octet-stream", "If-Match", `"v2"`); code != 200 {
		t.Fatalf("the author's edit: %d %s", code, body)
	}
	browsertest.Do(t, ctx, "sign in as the reviewer", chromedp.Navigate(base+"/ui/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), reviewer),
		chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")))
	at(t, ctx, base, "/ui/")
	browsertest.Do(t, ctx, "the review queue", chromedp.Navigate(base+"/ui/reviews"), chromedp.WaitReady(chromedp.CSS("main h1")))
	main := browsertest.Get(t, ctx, "queue", chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"release-notes v3", "from v2", "by alice", "Safety findings", "then security fixes"} {
		if !strings.Contains(main, want) {
			t.Errorf("the queue lacks %q:\n%s", want, main)
		}
	}
	browsertest.Screenshot(t, ctx, "review-queue")
	browsertest.Do(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS("form[aria-label^='Decide'] input[name=comment]"), "reads well"),
		chromedp.Click(chromedp.CSS("button[id^=approve-]")))
	at(t, ctx, base, "/ui/reviews?done=")
	if main := browsertest.Get(t, ctx, "after", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(main, "approved release-notes version 3") || !strings.Contains(main, "No draft awaits review") {
		t.Errorf("after approving:\n%s", main)
	}
	if code, body := rawDo(t, "GET", base+"/v1/agents/platform/skills/"+c.Stored, "", reviewer, nil); code != 200 || !strings.Contains(body, "then security fixes") {
		t.Errorf("the approved version is not served to platform: %d %s", code, body)
	}
	// Pin agent platform (it reads the store) to v2 on the Agents tab.
	browsertest.Do(t, ctx, "agents tab", chromedp.Navigate(base+"/ui/skills/"+c.Stored+"?tab=agents"), chromedp.WaitVisible(chromedp.ID("pin-platform")))
	if tab := browsertest.Get(t, ctx, "agents", chromedp.Text(chromedp.CSS("tr[data-agent=platform]"))); !strings.Contains(tab, "v3 published") {
		t.Errorf("platform before pinning:\n%s", tab)
	}
	browsertest.Do(t, ctx, "pin", chromedp.SetValue(chromedp.ID("pin-platform"), "2"), chromedp.Click(chromedp.CSS("form[aria-label='Pin platform'] button")))
	eventually(t, "the pinned version shown", func() bool {
		return strings.Contains(browsertest.Get(t, ctx, "agents", chromedp.Text(chromedp.CSS("main"))), "v2 2")
	})
	tab := browsertest.Get(t, ctx, "agents", chromedp.Text(chromedp.CSS("tr[data-agent=platform]")))
	if !strings.Contains(tab, "v2 2") {
		t.Errorf("the Agents tab after pinning to v2:\n%s", tab)
	}
	browsertest.Screenshot(t, ctx, "review-pins")
	browsertest.Do(t, ctx, "update pending", chromedp.Navigate(base+"/ui/reviews"), chromedp.WaitReady(chromedp.CSS("main h1")))
	if main := browsertest.Get(t, ctx, "pending", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(main, "Move to v3") {
		t.Errorf("update pending:\n%s", main)
	}
}

// skillMD is the latest SKILL.md of the stored skill name.
func skillMD(t *testing.T, base, token, name string) string {
	t.Helper()
	code, body := rawDo(t, "GET", base+"/v1/skills/"+name+"/export", "", token, nil)
	if code != 200 {
		t.Fatalf("export %s: %d %s", name, code, body)
	}
	var d struct{ Skill struct{ Content string } }
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	return d.Skill.Content
}
