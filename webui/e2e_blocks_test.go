package webui_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// TestBlockInBrowser: an admin blocks a skill from its page with a reason
// (the Block button), lands on the Blocks page that lists it, sees it
// marked in the skills list, finds its page refused naming the reason,
// and unblocks it with the Blocks page's button: its page is served
// again. Screenshots of the skill's block form and the Blocks page are
// saved.
func TestBlockInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	c := newCatalog(t)
	srv := c.serve(t)
	name := c.Folder
	const reason = "leaks the deploy key <i>now</i>"

	browsertest.Do(t, ctx, "the skill's page", chromedp.Navigate(srv.URL+"/ui/skills/"+name))
	settle(t, ctx)
	// The reason is set, not typed: the page's scripts may still take the
	// focus while it loads, and a required field left empty keeps the form
	// from being sent at all.
	browsertest.Do(t, ctx, "open the block form", chromedp.Click(chromedp.CSS("details.block-skill summary")),
		chromedp.WaitVisible(chromedp.CSS("#block-reason")), chromedp.SetValue(chromedp.CSS("#block-reason"), reason))
	if got := browsertest.Get(t, ctx, "the reason", chromedp.Evaluate[string](`document.querySelector("#block-reason").value`)); got != reason {
		t.Fatalf("the reason field holds %q", got)
	}
	browsertest.Screenshot(t, ctx, "block-form")
	// The Block button is pressed with the reason set in the same step: a
	// live refresh of the page between the two would leave the required
	// field empty, and the form unsent.
	submit := `(() => { const f = document.querySelector("#block-form"); if (!f) return false; f.querySelector("#block-reason").value = ` + strconv.Quote(reason) + `; f.requestSubmit(document.querySelector("#block-button")); return true })()`
	browsertest.Get(t, ctx, "block it", chromedp.Evaluate[bool](submit))
	// The form's answer is the Blocks page. The block's own change
	// reaches the page's live stream before that answer, and the skill
	// page's script once reloaded the page then, cancelling the
	// navigation: the person stayed on the skill's page (live.js now
	// ignores changes while a form takes the page away).
	if !arrived(t, ctx, srv.URL+"/ui/blocks", 15*time.Second) {
		loc := browsertest.Get(t, ctx, "location", chromedp.Location())
		_, blocks := rawDo(t, "GET", srv.URL+"/v1/blocks", "", "", nil)
		t.Fatalf("not at /ui/blocks 15 s after pressing Block: at %s; GET /v1/blocks: %.300s", loc, blocks)
	}
	at(t, ctx, srv.URL, "/ui/blocks")
	settle(t, ctx)
	table := browsertest.Get(t, ctx, "the blocks table", chromedp.Text(chromedp.CSS("table.blocks")))
	if !strings.Contains(table, "skill:"+name) || !strings.Contains(table, reason) {
		t.Errorf("the Blocks page does not list the block with its reason (as text): %q", table)
	}
	if n := browsertest.Get(t, ctx, "no markup from the reason", chromedp.Evaluate[int](`document.querySelectorAll("table.blocks i").length`)); n != 0 {
		t.Errorf("the reason's markup was rendered: %d <i> elements", n)
	}
	browsertest.Screenshot(t, ctx, "blocks-page")

	// The skills list marks it; its page is refused naming the reason.
	browsertest.Do(t, ctx, "the skills list", chromedp.Navigate(srv.URL+"/ui/"))
	settle(t, ctx)
	row := browsertest.Get(t, ctx, "the blocked skill's row", chromedp.Evaluate[string](`(() => {
		const a = Array.from(document.querySelectorAll("td.nm a")).find(a => a.textContent === `+"`"+name+"`"+`);
		return a ? a.closest("tr").querySelector("td.st").textContent : "(no row)";
	})()`))
	if strings.TrimSpace(row) != "blocked" {
		t.Errorf("the skills list shows %s as %q, want blocked", name, row)
	}
	resp, err := http.Get(srv.URL + "/ui/skills/" + name)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the blocked skill's page: %d, want 403", resp.StatusCode)
	}
	browsertest.Do(t, ctx, "the blocked skill's page", chromedp.Navigate(srv.URL+"/ui/skills/"+name))
	settle(t, ctx)
	if body := browsertest.Get(t, ctx, "its text", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, reason) || !strings.Contains(body, "Blocks page") {
		t.Errorf("the blocked skill's page does not say why and how to unblock: %q", body)
	}
	browsertest.Screenshot(t, ctx, "blocked-skill")

	// Unblock from the Blocks page: the skill is served again.
	browsertest.Do(t, ctx, "the Blocks page", chromedp.Navigate(srv.URL+"/ui/blocks"))
	settle(t, ctx)
	browsertest.Do(t, ctx, "unblock", chromedp.Click(chromedp.CSS("table.blocks button")))
	at(t, ctx, srv.URL, "/ui/blocks?done=")
	settle(t, ctx)
	if done := browsertest.Get(t, ctx, "the notice", chromedp.Text(chromedp.CSS("#block-done"))); !strings.Contains(done, "Unblocked skill:"+name) {
		t.Errorf("after unblocking: %q", done)
	}
	if n := browsertest.Get(t, ctx, "the blocks left", chromedp.Evaluate[int](`document.querySelectorAll("table.blocks tbody tr").length`)); n != 0 {
		t.Errorf("%d blocks left after the unblock", n)
	}
	resp, err = http.Get(srv.URL + "/ui/skills/" + name)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the unblocked skill's page: %d, want 200", resp.StatusCode)
	}
}

// arrived reports whether the browser reaches a URL starting with prefix
// within d.
func arrived(t *testing.T, ctx context.Context, prefix string, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.HasPrefix(browsertest.Get(t, ctx, "location", chromedp.Location()), prefix) {
			return true
		}
	}
	return false
}
