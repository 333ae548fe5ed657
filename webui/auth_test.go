package webui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
)

// Signing in may only send the browser to a page of the UI.
func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"":                            "/ui/",
		"/ui/skills/deploy?tab=files": "/ui/skills/deploy?tab=files",
		"/ui/tokens":                  "/ui/tokens",
		"https://evil.example/":       "/ui/",
		"//evil.example/ui/":          "/ui/",
		"/\\evil.example":             "/ui/",
		"/ui/\\..\\x":                 "/ui/",
		"/ui/../v1/skills":            "/ui/",
		"/ui/%2e%2e/v1/skills":        "/ui/",
		"/ui/login":                   "/ui/",
		"/ui/logout":                  "/ui/",
		"javascript:alert(1)":         "/ui/",
		"/ui/x\r\nSet-Cookie: a":      "/ui/",
		"/v1/skills":                  "/ui/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

type authEnv struct {
	svc *service.Service
	srv *httptest.Server
}

func newAuthEnv(t *testing.T, requireTokens bool) *authEnv {
	return newAuthEnvOpt(t, requireTokens, Options{})
}

// newAuthEnvOpt is newAuthEnv with the UI's options (the logger is set).
func newAuthEnvOpt(t *testing.T, requireTokens bool, uiOpt Options) *authEnv {
	dir := t.TempDir()
	for _, n := range []string{"deploy", "lint"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, n), 0o755))
		testutil.Write(t, filepath.Join(dir, n, "SKILL.md"), "---\nname: "+n+"\ndescription: Does "+n+".\n---\nDo it.\n")
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir, Available: []string{"deploy"}}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cat, service.Options{Store: st, Server: st, RequireTokens: requireTokens, Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	uiOpt.Logger = quiet
	srv := httptest.NewServer(New(svc, uiOpt))
	t.Cleanup(srv.Close)
	return &authEnv{svc: svc, srv: srv}
}

func (e *authEnv) client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func send(t *testing.T, c *http.Client, method, u string, form url.Values, hdr ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`)

func pageCSRF(t *testing.T, body string) string {
	t.Helper()
	m := csrfMeta.FindStringSubmatch(body)
	if m == nil || m[1] == "" {
		t.Fatalf("the page has no CSRF token:\n%s", body)
	}
	return m[1]
}

// The sign-in flow over HTTP: redirected to the login page, a bad token
// refused with a message, a good one gives a session cookie (flags
// checked) and the page asked for; CSRF is required on every post; a
// sign-out clears the cookie and ends the session.
func TestLoginFlow(t *testing.T) {
	e := newAuthEnv(t, true)
	ctx := context.Background()
	admin, _, err := e.svc.CreateToken(ctx, service.Principal{Open: true}, "root", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	res, _ := send(t, c, "GET", e.srv.URL+"/ui/tokens", nil)
	if res.StatusCode != 303 || res.Header.Get("Location") != "/ui/login?next=%2Fui%2Ftokens" {
		t.Fatalf("a page without a session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body := send(t, c, "GET", e.srv.URL+"/ui/login?next=%2Fui%2Ftokens", nil)
	csrf := pageCSRF(t, body)
	if !strings.Contains(body, `type="password"`) {
		t.Errorf("the login page has no password field:\n%s", body)
	}
	// Without the form's CSRF token, nothing.
	res, body = send(t, c, "POST", e.srv.URL+"/ui/login", url.Values{"token": {admin}, "next": {"/ui/tokens"}})
	if res.StatusCode != 403 || len(res.Cookies()) != 0 {
		t.Errorf("a login post without the CSRF token: %d %v", res.StatusCode, res.Cookies())
	}
	res, body = send(t, c, "POST", e.srv.URL+"/ui/login", url.Values{"token": {"lo_wrong"}, "csrf": {csrf}, "next": {"/ui/tokens"}})
	if res.StatusCode != 401 || !strings.Contains(body, "That token was not accepted") || strings.Contains(body, "lo_wrong") {
		t.Errorf("a bad token: %d\n%s", res.StatusCode, body)
	}
	res, _ = send(t, c, "POST", e.srv.URL+"/ui/login", url.Values{"token": {admin}, "csrf": {csrf}, "next": {"https://evil.example/"}})
	if res.StatusCode != 303 || res.Header.Get("Location") != "/ui/" {
		t.Errorf("login with an outside next: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	var sess *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == service.SessionCookie {
			sess = ck
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/" || sess.Secure || strings.Contains(sess.Value, admin) {
		t.Fatalf("session cookie: %+v", sess)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/tokens", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "root") {
		t.Fatalf("tokens page: %d\n%s", res.StatusCode, body)
	}
	scsrf := pageCSRF(t, body)
	if scsrf == csrf {
		t.Error("a session's CSRF token is the login form's")
	}
	// Posts need the session's CSRF token: absent, the login's, or wrong.
	for _, bad := range []string{"", csrf, scsrf + "x"} {
		res, body = send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"ci"}, "scope": {"agent:ops"}, "csrf": {bad}})
		if res.StatusCode != 403 || !strings.Contains(body, "reload the page") {
			t.Errorf("create with CSRF %q: %d\n%s", bad, res.StatusCode, body)
		}
	}
	// A script's request gets JSON.
	res, body = send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"ci"}, "scope": {"agent:ops"}}, "Accept", "application/json", "X-CSRF-Token", "nope")
	if res.StatusCode != 403 || !strings.Contains(body, `"code":"csrf"`) {
		t.Errorf("a script's post with a bad CSRF header: %d %s", res.StatusCode, body)
	}
	if toks, _ := e.svc.Tokens(ctx, service.Principal{Open: true}); len(toks) != 1 {
		t.Fatalf("refused posts created tokens: %v", toks)
	}
	res, body = send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"ci"}, "scope": {"agent:ops"}, "csrf": {scsrf}})
	if res.StatusCode != 200 || !strings.Contains(body, "shown only this once") || !regexp.MustCompile(`value="lo_[^"]+"`).MatchString(body) {
		t.Fatalf("create: %d\n%s", res.StatusCode, body)
	}
	// An invalid scope is refused in the form.
	res, body = send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"x"}, "scope": {"agent:nobody"}, "csrf": {scsrf}})
	if res.StatusCode != 422 || !strings.Contains(body, "Scope:") {
		t.Errorf("a bad scope: %d\n%s", res.StatusCode, body)
	}

	// Sign out: cookie cleared, session over.
	res, _ = send(t, c, "POST", e.srv.URL+"/ui/logout", url.Values{"csrf": {scsrf}})
	if res.StatusCode != 303 {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	cleared := false
	for _, ck := range res.Cookies() {
		cleared = cleared || (ck.Name == service.SessionCookie && ck.MaxAge < 0)
	}
	if !cleared {
		t.Errorf("logout did not clear the cookie: %v", res.Cookies())
	}
	if _, _, ok := e.svc.Session(ctx, sess.Value); ok {
		t.Error("the session outlived the sign-out")
	}
	if res, _ = send(t, c, "GET", e.srv.URL+"/ui/", nil); res.StatusCode != 303 {
		t.Errorf("after sign-out, a page: %d", res.StatusCode)
	}
}

// An agent token's session sees its agent's skills only, and no admin
// page.
func TestAgentSession(t *testing.T) {
	e := newAuthEnv(t, true)
	ctx := context.Background()
	agent, _, _ := e.svc.CreateToken(ctx, service.Principal{Open: true}, "ops", []string{"agent:ops"})
	id, _, err := e.svc.StartSession(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	u, _ := url.Parse(e.srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: service.SessionCookie, Value: id, Path: "/"}})
	res, body := send(t, c, "GET", e.srv.URL+"/ui/", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "deploy") || strings.Contains(body, "/ui/skills/lint") || strings.Contains(body, "/ui/tokens") {
		t.Errorf("an agent's skills page: %d\n%s", res.StatusCode, body)
	}
	for p, says := range map[string]string{"/ui/tokens": "admin token", "/ui/receipts": "the viewer role"} {
		if res, body := send(t, c, "GET", e.srv.URL+p, nil); res.StatusCode != 403 || !strings.Contains(body, says) {
			t.Errorf("an agent on %s: %d\n%s", p, res.StatusCode, body)
		}
	}
}

// The open loopback mode needs no sign-in; its posts need the process's
// CSRF token.
func TestOpenMode(t *testing.T) {
	e := newAuthEnv(t, false)
	c := e.client(t)
	res, body := send(t, c, "GET", e.srv.URL+"/ui/tokens", nil)
	if res.StatusCode != 200 {
		t.Fatalf("open mode: %d\n%s", res.StatusCode, body)
	}
	csrf := pageCSRF(t, body)
	if res, _ := send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"first"}, "scope": {"admin"}}); res.StatusCode != 403 {
		t.Errorf("open mode, a post without CSRF: %d", res.StatusCode)
	}
	if res, body := send(t, c, "POST", e.srv.URL+"/ui/tokens", url.Values{"name": {"first"}, "scope": {"admin"}, "csrf": {csrf}}); res.StatusCode != 200 || !strings.Contains(body, "shown only this once") {
		t.Errorf("open mode, create: %d\n%s", res.StatusCode, body)
	}
}

// The receipts page: 50 a page, newest first, older pages linked with the
// filters kept; the outcome filter; a bad since named in the page.
func TestReceiptsPages(t *testing.T) {
	e := newAuthEnv(t, false)
	ctx := context.Background()
	open := service.Principal{Open: true}
	// Identical receipts of one flush are one row with a count, so the
	// 60 rows to page through are loads of 60 different (unknown) names;
	// the 3 loads of lint are one row counting 3 (or, should a flush fall
	// between them, a few rows).
	for i := 0; i < 60; i++ {
		e.svc.Load(ctx, open, "dev", fmt.Sprintf("gone-%02d", i), "http")
	}
	for i := 0; i < 3; i++ {
		if _, err := e.svc.Load(ctx, open, "dev", "lint", "http"); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(t)
	rows := func(body string) int { return max(0, strings.Count(body, "</tr>")-1) }
	res, body := send(t, c, "GET", e.srv.URL+"/ui/receipts?outcome=ok", nil)
	okRows := rows(body)
	if res.StatusCode != 200 || okRows < 1 || okRows > 3 || strings.Contains(body, `badge err`) || (okRows == 1 && !strings.Contains(body, `<td class="num" data-label="Times">3</td>`)) {
		t.Fatalf("outcome ok: %d, %d rows\n%s", res.StatusCode, okRows, body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/receipts?agent=dev&since=1h", nil)
	if res.StatusCode != 200 || rows(body) != 50 || !strings.Contains(body, `href="/ui/receipts?agent=dev&amp;page=2&amp;since=1h" rel="next"`) {
		t.Fatalf("page 1: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/receipts?agent=dev&since=1h&page=2", nil)
	if res.StatusCode != 200 || rows(body) != 10+okRows || strings.Contains(body, `rel="next"`) || !strings.Contains(body, `rel="prev"`) || !strings.Contains(body, fmt.Sprintf("Receipts 51–%d", 60+okRows)) {
		t.Fatalf("page 2: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/receipts?outcome=not_found", nil)
	if res.StatusCode != 200 || rows(body) != 50 || strings.Contains(body, `badge ok">ok`) {
		t.Fatalf("outcome not_found: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/receipts?agent=ops", nil)
	if rows(body) != 0 || !strings.Contains(body, "No receipts match") {
		t.Errorf("another agent: %d rows\n%s", rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/receipts?since=yesterday", nil)
	if res.StatusCode != 400 || !strings.Contains(body, "Since: &#34;yesterday&#34; is neither") || !strings.Contains(body, `aria-invalid="true"`) {
		t.Errorf("a bad since: %d\n%s", res.StatusCode, body)
	}
}
