package webui_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

// TestOIDCSignInBrowser signs in to `loadout serve` in Chromium with a
// real OpenID provider (zitadel/oidc's example provider): the UI's
// sign-in page, its "Sign in with" button, the provider's own login form,
// back in the UI as the person with the role their group maps to (what
// it allows and forbids), sign-out, and the old cookie refused.
func TestOIDCSignInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)) // the redirect URL registered at the provider names it before serve starts
	base := "http://" + addr
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "loadout", Secret: "e2e-secret", RedirectURIs: []string{base + "/ui/oidc/callback"}}},
		Users:   []oidctest.User{{ID: "u3", Username: "carol", Password: "pw", Email: "carol@corp.test", Groups: []string{"skill-readers"}}},
	})
	dir := t.TempDir()
	for _, n := range []string{"alpha", "beta"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", n), 0o755))
		testutil.Write(t, filepath.Join(dir, "skills", n, "SKILL.md"), "---\nname: "+n+"\ndescription: Use when "+n+".\n---\nDo "+n+".\n")
	}
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}],
	  "oidc": {"issuer": "`+p.Issuer+`", "name": "Corp SSO", "clientId": "loadout", "clientSecretEnv": "E2E_OIDC_SECRET",
	    "redirectURL": "`+base+`/ui/oidc/callback", "roles": {"groups": {"skill-readers": ["viewer"]}}}}`)
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir(), "E2E_OIDC_SECRET=e2e-secret"}, "--config", cfg, "--db", filepath.Join(dir, "loadout.db"), "--no-watch", "--addr", addr)
	if srv.URL != base {
		t.Fatalf("served at %s, want %s", srv.URL, base)
	}
	if strings.Contains(srv.Log(), "e2e-secret") {
		t.Error("the server logs the client secret")
	}

	// Not signed in: the sign-in page, with the provider's button beside
	// the token form.
	browsertest.Do(t, ctx, "open the UI", chromedp.Navigate(base+"/ui/skills/alpha"))
	at(t, ctx, base, "/ui/login")
	browsertest.Do(t, ctx, "the button", chromedp.WaitVisible(chromedp.ID("sso")))
	if b := browsertest.Get(t, ctx, "button", chromedp.Text(chromedp.ID("sso"))); b != "Sign in with Corp SSO" {
		t.Errorf("button = %q", b)
	}
	browsertest.Do(t, ctx, "the token form", chromedp.WaitVisible(chromedp.ID("token")))
	browsertest.Screenshot(t, ctx, "signin-oidc-laptop-light")

	// The provider's own login page, filled in as a person would.
	browsertest.Do(t, ctx, "sign in with the provider", chromedp.Click(chromedp.ID("sso")), chromedp.WaitVisible(chromedp.ID("username")))
	if loc := browsertest.Get(t, ctx, "location", chromedp.Location()); !strings.HasPrefix(loc, p.Issuer+"login/username") {
		t.Errorf("at %s, want the provider's login page", loc)
	}
	browsertest.Do(t, ctx, "the provider's form",
		chromedp.SendKeys(chromedp.ID("username"), "carol"),
		chromedp.SendKeys(chromedp.ID("password"), "pw"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	at(t, ctx, base, "/ui/skills/alpha")
	if who := browsertest.Get(t, ctx, "who", chromedp.Text(chromedp.ID("who-name"))); who != "carol@corp.test" {
		t.Errorf("header name = %q", who)
	}
	if role := browsertest.Get(t, ctx, "role", chromedp.Text(chromedp.ID("who-role"))); role != "viewer" {
		t.Errorf("header role = %q", role)
	}
	c := sessionCookieOf(browsertest.Get(t, ctx, "cookies", cookies(base)))
	if c == nil || !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/" || len(c.Value) < 40 {
		t.Fatalf("session cookie: %+v", c)
	}
	session := c.Value
	browsertest.Do(t, ctx, "the skills list", chromedp.Navigate(base+"/ui/"))
	at(t, ctx, base, "/ui/")
	if body := browsertest.Get(t, ctx, "skills", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "alpha") || !strings.Contains(body, "beta") {
		t.Errorf("a viewer's skills list:\n%s", body)
	}
	browsertest.Screenshot(t, ctx, "signin-oidc-signed-in-laptop-light")
	// A viewer may not write: the editor's page refuses, naming the role.
	browsertest.Do(t, ctx, "new page", chromedp.Navigate(base+"/ui/new"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if txt := browsertest.Get(t, ctx, "page", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(txt, "needs the author role") {
		t.Errorf("a viewer's /ui/new:\n%s", txt)
	}
	// The session works for the API's reads, as a token session does.
	if code, _ := rawDo(t, "GET", base+"/v1/skills", session, "", nil); code != 200 {
		t.Errorf("GET /v1/skills with the session: %d", code)
	}
	if code, _ := rawDo(t, "GET", base+"/v1/audit", session, "", nil); code != http.StatusForbidden {
		t.Errorf("GET /v1/audit (admin) with a viewer's session: %d, want 403", code)
	}

	// Sign out: the old cookie no longer works.
	browsertest.Do(t, ctx, "sign out", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`form[action="/ui/logout"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/ui/logout"] button`)))
	at(t, ctx, base, "/ui/login")
	if code, _ := rawDo(t, "GET", base+"/ui/", session, "", nil); code != http.StatusSeeOther {
		t.Errorf("the signed-out cookie on /ui/: %d, want a redirect to sign in", code)
	}
	if code, _ := rawDo(t, "GET", base+"/v1/skills", session, "", nil); code != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie on /v1/skills: %d, want 401", code)
	}
}
