package webui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// devCookie is what the DevTools protocol's Network.getCookies says of a
// cookie (the fields this test reads).
type devCookie struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Path     string `json:"path"`
	HTTPOnly bool   `json:"httpOnly"`
	Secure   bool   `json:"secure"`
	SameSite string `json:"sameSite"`
}

// cookies returns the browser's cookies for u, through the DevTools
// cookie API.
func cookies(u string) chromedp.Action[[]devCookie] {
	return func(ctx context.Context, t *chromedp.Target) ([]devCookie, error) {
		var res struct {
			Cookies []devCookie `json:"cookies"`
		}
		err := t.Call(ctx, "Network.getCookies", map[string]any{"urls": []string{u}}, &res)
		return res.Cookies, err
	}
}

func sessionCookieOf(cs []devCookie) *devCookie {
	for i := range cs {
		if cs[i].Name == "loadout_session" {
			return &cs[i]
		}
	}
	return nil
}

// cli runs the loadout binary and returns its standard output, trimmed.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(browsertest.Binary(t), args...)
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loadout %q: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// eventually polls cond for up to 15 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 15 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// at waits until the browser is at a URL whose path and query start with
// prefix (are "/ui/" exactly, for the home page), and the page has loaded.
func at(t *testing.T, ctx context.Context, base, prefix string) string {
	t.Helper()
	var loc string
	eventually(t, "the browser at "+prefix, func() bool {
		loc = browsertest.Get(t, ctx, "location", chromedp.Location())
		if prefix == "/ui/" {
			return loc == base+prefix
		}
		return strings.HasPrefix(loc, base+prefix)
	})
	browsertest.Do(t, ctx, "page loaded", chromedp.WaitReady(chromedp.CSS("main h1")))
	return loc
}

func rawDo(t *testing.T, method, u, cookie, bearer string, body io.Reader, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, body)
	if cookie != "" {
		req.Header.Set("Cookie", "loadout_session="+cookie)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestAuthInBrowser drives sign-in, the Tokens and Receipts pages, an
// agent's read-only view, sign-out and CSRF refusals in Chromium against
// `loadout serve` on a SQLite store and a folder of skills.
func TestAuthInBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 900)
	dir := t.TempDir()
	for _, n := range []string{"alpha", "beta"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", n), 0o755))
		testutil.Write(t, filepath.Join(dir, "skills", n, "SKILL.md"), "---\nname: "+n+"\ndescription: Use when "+n+".\n---\nDo "+n+".\n")
	}
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills", "available": ["alpha"]}]}, {"agentId": "writer", "skills": [{"root": "skills"}]}]}`)
	db := filepath.Join(dir, "loadout.db")
	srv := browsertest.Serve(t, []string{"HOME=" + t.TempDir()}, "--config", cfg, "--db", db, "--no-watch")
	base := srv.URL

	// Open mode: no tokens, loopback: no sign-in.
	browsertest.Do(t, ctx, "open mode", chromedp.Navigate(base+"/ui/"))
	at(t, ctx, base, "/ui/")
	if body := browsertest.Get(t, ctx, "skills", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "alpha") || !strings.Contains(body, "beta") {
		t.Fatalf("open mode skills page:\n%s", body)
	}

	// A token created by the CLI: the UI asks for one.
	admin := cli(t, "token", "create", "--db", db, "--scope", "admin", "--name", "root")
	agent := cli(t, "token", "create", "--db", db, "--scope", "agent:coder", "--name", "coder-bot")
	eventually(t, "the server requiring tokens", func() bool {
		code, _ := rawDo(t, "GET", base+"/ui/", "", "", nil)
		return code == http.StatusSeeOther
	})
	browsertest.Do(t, ctx, "open tokens page", chromedp.Navigate(base+"/ui/tokens"))
	if loc := at(t, ctx, base, "/ui/login"); !strings.Contains(loc, "next=%2Fui%2Ftokens") {
		t.Errorf("sent to %s, want the login page with next=/ui/tokens", loc)
	}
	browsertest.Screenshot(t, ctx, "login-laptop-light")

	// A bad token: an error on the page, no cookie.
	browsertest.Do(t, ctx, "bad token",
		chromedp.SendKeys(chromedp.ID("token"), "lo_not-a-token"),
		chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("login-error")))
	if msg := browsertest.Get(t, ctx, "error", chromedp.Text(chromedp.ID("login-error"))); !strings.Contains(msg, "not accepted") {
		t.Errorf("bad token message: %q", msg)
	}
	if c := sessionCookieOf(browsertest.Get(t, ctx, "cookies", cookies(base))); c != nil {
		t.Errorf("a bad token set a session cookie: %+v", c)
	}

	// Admin: back to the page asked for; the cookie holds no token and
	// has its flags; scripts cannot read it.
	browsertest.Do(t, ctx, "admin login",
		chromedp.SendKeys(chromedp.ID("token"), admin),
		chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")))
	at(t, ctx, base, "/ui/tokens")
	c := sessionCookieOf(browsertest.Get(t, ctx, "cookies", cookies(base)))
	if c == nil || !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/" || c.Secure || strings.Contains(c.Value, admin) || len(c.Value) < 40 {
		t.Fatalf("session cookie: %+v", c)
	}
	if dc := browsertest.Get(t, ctx, "document.cookie", chromedp.Evaluate[string]("document.cookie")); strings.Contains(dc, "loadout_session") {
		t.Errorf("scripts can read the session cookie: %q", dc)
	}
	session := c.Value
	body := browsertest.Get(t, ctx, "tokens page", chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"root", "coder-bot", "agent:coder", "this session"} {
		if !strings.Contains(body, want) {
			t.Errorf("the tokens page lacks %q:\n%s", want, body)
		}
	}
	nav := browsertest.Get(t, ctx, "nav", chromedp.Text(chromedp.CSS("header nav")))
	if !strings.Contains(nav, "Admin") || !strings.Contains(nav, "Import") {
		t.Errorf("admin nav: %q", nav)
	}

	// A link from another site opens the page signed in (the Strict
	// cookie is not sent with a cross-site navigation: the UI reloads it
	// from its own origin).
	linker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>elsewhere</title><main><h1>elsewhere</h1><a id="go" href="%s/ui/receipts">receipts</a></main>`, base)
	}))
	defer linker.Close()
	browsertest.Do(t, ctx, "another site", chromedp.Navigate(strings.Replace(linker.URL, "127.0.0.1", "localhost", 1)),
		chromedp.WaitVisible(chromedp.ID("go")), chromedp.Click(chromedp.ID("go")))
	at(t, ctx, base, "/ui/receipts")
	browsertest.Do(t, ctx, "back to tokens", chromedp.Navigate(base+"/ui/tokens"))
	at(t, ctx, base, "/ui/tokens")

	// Create a token in the UI: its secret shown once.
	browsertest.Do(t, ctx, "create token",
		chromedp.SendKeys(chromedp.ID("tok-name"), "ui-made"),
		chromedp.SetValue(chromedp.ID("tok-scope"), "agent:writer"),
		chromedp.Click(chromedp.CSS("form.create-token button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("new-secret")))
	secret := browsertest.Get(t, ctx, "secret", chromedp.Value(chromedp.ID("new-secret")))
	if !strings.HasPrefix(secret, "lo_") {
		t.Fatalf("the new secret: %q", secret)
	}
	browsertest.Screenshot(t, ctx, "tokens-created-laptop-light")
	browsertest.Do(t, ctx, "copy", chromedp.Click(chromedp.ID("copy-secret")))
	eventually(t, "the copy status", func() bool {
		return browsertest.Get(t, ctx, "copy status", chromedp.Text(chromedp.ID("copy-status"))) != ""
	})
	if code, body := rawDo(t, "GET", base+"/v1/agents/writer/prompt", "", secret, nil); code != 200 {
		t.Errorf("the UI-made token as a bearer: %d %s", code, body)
	}
	browsertest.Do(t, ctx, "tokens again", chromedp.Navigate(base+"/ui/tokens"))
	at(t, ctx, base, "/ui/tokens")
	if html := browsertest.Get(t, ctx, "html", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, secret) || !strings.Contains(html, "ui-made") {
		t.Error("the secret is shown again, or the new token is not listed")
	}
	browsertest.Screenshot(t, ctx, "tokens-laptop-light")

	// Revoke it, after the confirmation page.
	browsertest.Do(t, ctx, "revoke", chromedp.Click(chromedp.CSS(`a[aria-label="Revoke ui-made"]`)))
	at(t, ctx, base, "/ui/tokens/")
	if h := browsertest.Get(t, ctx, "h1", chromedp.Text(chromedp.CSS("main h1"))); !strings.Contains(h, "Revoke token ui-made?") {
		t.Errorf("confirmation heading: %q", h)
	}
	browsertest.Do(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm-revoke")))
	at(t, ctx, base, "/ui/tokens?revoked=")
	if code, _ := rawDo(t, "GET", base+"/v1/agents/writer/prompt", "", secret, nil); code != 401 {
		t.Errorf("a token revoked in the UI: %d, want 401", code)
	}
	if body := browsertest.Get(t, ctx, "tokens", chromedp.Text(chromedp.CSS("main table"))); strings.Contains(body, "ui-made") {
		t.Errorf("a revoked token is still listed:\n%s", body)
	}

	// Receipts: a load by the agent shows, filtered.
	if code, body := rawDo(t, "GET", base+"/v1/agents/coder/skills/alpha", "", agent, nil); code != 200 {
		t.Fatalf("load: %d %s", code, body)
	}
	browsertest.Do(t, ctx, "receipts", chromedp.Navigate(base+"/ui/receipts?agent=coder&since=1h"))
	at(t, ctx, base, "/ui/receipts")
	if body := browsertest.Get(t, ctx, "receipts", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "alpha") || !strings.Contains(body, "load") {
		t.Errorf("receipts page:\n%s", body)
	}
	browsertest.Screenshot(t, ctx, "receipts-laptop-light")
	browsertest.Do(t, ctx, "phone width", chromedp.EmulateViewport(375, 800))
	browsertest.Screenshot(t, ctx, "receipts-phone-light")
	browsertest.Do(t, ctx, "tokens at phone width", chromedp.Navigate(base+"/ui/tokens"))
	at(t, ctx, base, "/ui/tokens")
	browsertest.Screenshot(t, ctx, "tokens-phone-light")
	if w := browsertest.Get(t, ctx, "page width", chromedp.Evaluate[int]("document.documentElement.scrollWidth")); w > 375 {
		wide := browsertest.Get(t, ctx, "wide elements", chromedp.Evaluate[[]string](`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > 376).slice(0, 8).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).concat(["wrap " + document.querySelector(".table-wrap").clientWidth, "inner " + window.innerWidth])`))
		t.Errorf("the tokens page is %d px wide at a 375 px viewport: it scrolls sideways; wide: %v", w, wide)
	}
	browsertest.Do(t, ctx, "laptop width", chromedp.EmulateViewport(1280, 900))
	browsertest.Do(t, ctx, "receipts filtered", chromedp.Navigate(base+"/ui/receipts?agent=coder&outcome=refused"))
	at(t, ctx, base, "/ui/receipts")
	if body := browsertest.Get(t, ctx, "receipts", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(body, "No receipts match") {
		t.Errorf("receipts filtered by outcome refused:\n%s", body)
	}

	// CSRF: from the page, without the token, a UI post and an API write
	// are refused; with it (window.loadout.api) the API answers.
	type fetched struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	pageFetch := func(what, js string) fetched {
		return browsertest.Get(t, ctx, what, chromedp.Evaluate[fetched](js, chromedp.EvalAwaitPromise))
	}
	f := pageFetch("UI post without CSRF", `fetch("/ui/tokens", {method: "POST", body: new URLSearchParams({name: "sneaky", scope: "admin"})}).then(async r => ({status: r.status, body: await r.text()}))`)
	if f.Status != 403 || !strings.Contains(f.Body, "CSRF") {
		t.Errorf("a same-origin UI post without the CSRF token: %d %s", f.Status, f.Body)
	}
	f = pageFetch("API write without CSRF", `fetch("/v1/skills/nothing", {method: "DELETE"}).then(async r => ({status: r.status, body: await r.text()}))`)
	if f.Status != 403 || !strings.Contains(f.Body, `"csrf"`) {
		t.Errorf("a same-origin API write without the CSRF token: %d %s", f.Status, f.Body)
	}
	f = pageFetch("API write with CSRF", `window.loadout.api("DELETE", "/v1/skills/nothing").then(r => ({status: r.status, body: JSON.stringify(r.data)}))`)
	if f.Status != 404 {
		t.Errorf("an API write with the page's CSRF token: %d %s, want 404 (no such skill)", f.Status, f.Body)
	}
	// A raw request with the cookie but no CSRF token.
	if code, body := rawDo(t, "POST", base+"/ui/tokens", session, "", strings.NewReader("name=raw&scope=admin"), "Content-Type", "application/x-www-form-urlencoded"); code != 403 {
		t.Errorf("a raw post with the cookie and no CSRF token: %d %s", code, body)
	}
	// A cross-site page's form post.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/tokens"><input name="name" value="evil"><input name="scope" value="admin"></form><script>document.getElementById("f").submit()</script>`, base)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another site
	browsertest.Do(t, ctx, "cross-site post", chromedp.Navigate(evilURL))
	eventually(t, "the cross-site post answered", func() bool {
		return strings.HasPrefix(browsertest.Get(t, ctx, "location", chromedp.Location()), base)
	})
	browsertest.Do(t, ctx, "refusal", chromedp.WaitReady(chromedp.CSS("body")))
	if body := browsertest.Get(t, ctx, "refusal", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(body, "cross_origin") && !strings.Contains(body, "CSRF") {
		t.Errorf("the cross-site post's answer:\n%s", body)
	}
	if list := cli(t, "token", "list", "--db", db); strings.Contains(list, "evil") || strings.Contains(list, "sneaky") || strings.Contains(list, "raw") {
		t.Errorf("a refused post created a token:\n%s", list)
	}

	// Sign out: cookie cleared, the next page asks again.
	browsertest.Do(t, ctx, "home", chromedp.Navigate(base+"/ui/"))
	at(t, ctx, base, "/ui/")
	browsertest.Do(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form[action="/ui/logout"] button`)))
	at(t, ctx, base, "/ui/login?signedout")
	if c := sessionCookieOf(browsertest.Get(t, ctx, "cookies", cookies(base))); c != nil {
		t.Errorf("after sign-out the cookie is still there: %+v", c)
	}
	if code, _ := rawDo(t, "GET", base+"/v1/skills", session, "", nil); code != 401 {
		t.Errorf("the signed-out session's cookie on the API: %d, want 401", code)
	}
	browsertest.Do(t, ctx, "after sign out", chromedp.Navigate(base+"/ui/"))
	at(t, ctx, base, "/ui/login")

	// An agent token: that agent's skills only, read-only, no admin nav.
	browsertest.Do(t, ctx, "agent login",
		chromedp.SendKeys(chromedp.ID("token"), agent),
		chromedp.Click(chromedp.CSS("form.login-form button[type=submit]")))
	at(t, ctx, base, "/ui/")
	body = browsertest.Get(t, ctx, "agent skills", chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(body, "alpha") || strings.Contains(body, "beta") {
		t.Errorf("an agent:coder session's skills page (alpha only):\n%s", body)
	}
	nav = browsertest.Get(t, ctx, "nav", chromedp.Text(chromedp.CSS("header nav")))
	if strings.Contains(nav, "Tokens") || strings.Contains(nav, "Import") {
		t.Errorf("an agent session's nav has admin entries: %q", nav)
	}
	if who := browsertest.Get(t, ctx, "who", chromedp.Text(chromedp.CSS("header .who"))); !strings.Contains(who, "read-only") {
		t.Errorf("an agent session is not marked read-only: %q", who)
	}
	browsertest.Screenshot(t, ctx, "skills-agent-laptop-light")
	browsertest.Do(t, ctx, "agent skill", chromedp.Navigate(base+"/ui/skills/alpha"))
	at(t, ctx, base, "/ui/skills/alpha")
	edits := browsertest.Get(t, ctx, "edit controls", chromedp.Evaluate[int](
		`document.querySelectorAll('main form[method=post], main textarea:not([readonly]), main input[type=file], main button[data-action]').length`))
	if edits != 0 {
		t.Errorf("an agent session's skill page has %d edit controls", edits)
	}
	browsertest.Do(t, ctx, "beta", chromedp.Navigate(base+"/ui/skills/beta"))
	if h := browsertest.Get(t, ctx, "beta", chromedp.Text(chromedp.CSS("main h1"))); !strings.Contains(h, "No such skill") {
		t.Errorf("an agent:coder session opened beta: %q", h)
	}
	f = pageFetch("agent write", `window.loadout.api("DELETE", "/v1/skills/alpha").then(r => ({status: r.status, body: JSON.stringify(r.data)}))`)
	if f.Status != 403 || !strings.Contains(f.Body, "forbidden") {
		t.Errorf("an agent session's API write: %d %s, want 403 forbidden", f.Status, f.Body)
	}
	browsertest.Do(t, ctx, "agent tokens", chromedp.Navigate(base+"/ui/tokens"))
	if h := browsertest.Get(t, ctx, "tokens as agent", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(h, "admin token") {
		t.Errorf("an agent session on /ui/tokens:\n%s", h)
	}
}
