package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// TestAuditPageInBrowser: the Audit page, reached from the nav (Tokens &
// receipts, then its Audit tab), lists the
// CLI's imports (transport cli); the action filter narrows it; the verify
// link says the chain holds.
func TestAuditPageInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	c := newCatalog(t)
	srv := c.serve(t)

	browsertest.Do(t, ctx, "open skills", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	browsertest.Do(t, ctx, "nav to tokens", chromedp.Click(chromedp.CSS(`#nav-main a[href="/ui/tokens"]`)), chromedp.WaitVisible(chromedp.CSS("nav.subnav")))
	browsertest.Do(t, ctx, "on to audit", chromedp.Click(chromedp.CSS(`nav.subnav a[href="/ui/audit"]`)), chromedp.WaitVisible(chromedp.CSS("table.audit")))
	rows := browsertest.Get(t, ctx, "rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.audit tbody tr")).map(r => r.textContent.replace(/\s+/g, " "))`))
	if len(rows) != 2 || !strings.Contains(rows[0], "import") || !strings.Contains(rows[0], "cli") || !strings.Contains(rows[0], "release-notes") {
		t.Fatalf("the audit rows: %q", rows)
	}
	browsertest.Do(t, ctx, "filter by action",
		chromedp.SetValue(chromedp.CSS("#f-action"), "token.create"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Filter the audit trail"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`main p[role="status"]`)))
	if n := browsertest.Get(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll("table.audit tbody tr").length`)); n != 0 {
		t.Errorf("action=token.create shows %d rows; the catalog made no token", n)
	}
	browsertest.Do(t, ctx, "verify", chromedp.Navigate(srv.URL+"/ui/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit")),
		chromedp.Click(chromedp.CSS(`a[href="/ui/audit?verify=1"]`)), chromedp.WaitVisible(chromedp.CSS(`p.notice.ok`)))
	msg := browsertest.Get(t, ctx, "verdict", chromedp.Text(chromedp.CSS(`p.notice.ok`)))
	if !strings.Contains(msg, "verifies: 2 records") {
		t.Errorf("verify says %q", msg)
	}
}
