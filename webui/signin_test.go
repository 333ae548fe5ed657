package webui

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

type oidcEnv struct {
	svc *service.Service
	srv *httptest.Server
	p   *oidctest.Provider
}

// newOIDCEnv serves the UI with sign-in at a real provider: alice is in
// skills-admins (admin), carol in readers (viewer), bob in no mapped
// group. recheck is the sessions' re-check interval.
func newOIDCEnv(t *testing.T, recheck time.Duration) *oidcEnv {
	return newOIDCEnvEnd(t, recheck, false)
}

func newOIDCEnvEnd(t *testing.T, recheck time.Duration, endSession bool) *oidcEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/ui/oidc/callback"
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "loadout", Secret: "s3cret", RedirectURIs: []string{redirect}}},
		Users: []oidctest.User{
			{ID: "u1", Username: "alice", Password: "pw", Email: "alice@corp.test", Groups: []string{"skills-admins"}},
			{ID: "u2", Username: "bob", Password: "pw", Email: "bob@corp.test", Groups: []string{"elsewhere"}},
			{ID: "u3", Username: "carol", Password: "pw", Email: "carol@corp.test", Groups: []string{"readers"}},
			{ID: "u4", Username: "dave", Password: "pw", Email: "dave@corp.test", Groups: []string{"data"}},
			{ID: "u5", Username: "erin", Password: "pw", Email: "erin@corp.test", Groups: []string{"ops-readers"}},
		},
	})
	si, err := identity.NewSignIn(identity.SignInConfig{Issuer: p.Issuer, ClientID: "loadout", ClientSecret: "s3cret", RedirectURL: redirect,
		Scopes: []string{"email", "profile", "offline_access"},
		Roles:  identity.RoleMap{Groups: map[string][]string{"skills-admins": {"admin"}, "readers": {"viewer"}, "data": {"author:team-data-*"}, "ops-readers": {"agent:ops"}}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	testutil.Write(t, filepath.Join(dir, "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Does deploy.\n---\nDo it.\n")
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cat, service.Options{Store: st, Server: st, RequireTokens: true, Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	srv := httptest.NewUnstartedServer(New(svc, Options{Logger: quiet, SignIn: &SignInOptions{Provider: si, Name: "Corp SSO", Recheck: recheck, EndSession: endSession}}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &oidcEnv{svc: svc, srv: srv, p: p}
}

// signIn runs the sign-in as user from next; it returns the callback's
// answer and body.
func (e *oidcEnv) signIn(t *testing.T, c *http.Client, user, next string) (*http.Response, string) {
	t.Helper()
	res, _ := send(t, c, "GET", e.srv.URL+"/ui/oidc/start?next="+url.QueryEscape(next), nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), e.p.Issuer) {
		t.Fatalf("start: %d %s, want a redirect to the provider", res.StatusCode, res.Header.Get("Location"))
	}
	back, err := e.p.Login(testutil.Context(t), res.Header.Get("Location"), user, "pw")
	if err != nil {
		t.Fatal(err)
	}
	return send(t, c, "GET", back.String(), nil)
}

func (e *oidcEnv) audit(t *testing.T, action string) []store.AuditRecord {
	t.Helper()
	rs, err := e.svc.Audit(context.Background(), service.Principal{Open: true}, store.AuditQuery{Action: action})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func cookieOf(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// The UI's sign-in with the provider over HTTP: the button, the state
// cookie, the session (a token session's cookie and CSRF rules), the
// person in the header, what the mapped role allows, sign-out, and the
// audit trail.
func TestOIDCSignIn(t *testing.T) {
	e := newOIDCEnv(t, time.Hour)
	c := (&authEnv{}).client(t)
	_, body := send(t, c, "GET", e.srv.URL+"/ui/login?next=%2Fui%2Fagents", nil)
	if !strings.Contains(body, `href="/ui/oidc/start?next=%2Fui%2Fagents"`) || !strings.Contains(body, "Sign in with Corp SSO") || !strings.Contains(body, `name="token"`) {
		t.Fatalf("the login page lacks the provider's button or the token form:\n%s", body)
	}
	res, _ := send(t, c, "GET", e.srv.URL+"/ui/oidc/start?next=%2Fui%2Fagents", nil)
	sc := cookieOf(res, StateCookie)
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Path != "/ui/oidc/" || sc.MaxAge <= 0 || sc.MaxAge > 600 {
		t.Fatalf("state cookie = %+v", sc)
	}
	res, body = e.signIn(t, c, "alice", "/ui/agents")
	sess := cookieOf(res, service.SessionCookie)
	if res.StatusCode != 200 || !strings.Contains(body, `url=/ui/agents"`) || sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode {
		t.Fatalf("callback: %d, session cookie %+v:\n%s", res.StatusCode, sess, body)
	}
	if sc := cookieOf(res, StateCookie); sc == nil || sc.MaxAge >= 0 {
		t.Errorf("the callback leaves the state cookie: %+v", sc)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/tokens", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `id="who-name" title="subject u1">alice@corp.test</span>`) || !strings.Contains(body, `id="who-role">admin<`) {
		t.Fatalf("admin's tokens page: %d\n%s", res.StatusCode, body)
	}
	csrf := pageCSRF(t, body)
	// A write without the session's CSRF token is refused, as for a token's session.
	if res, _ := send(t, c, "POST", e.srv.URL+"/ui/logout", url.Values{"csrf": {"wrong"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out with a wrong CSRF token: %d", res.StatusCode)
	}
	if rs := e.audit(t, "signin"); len(rs) != 1 || rs[0].ActorToken != "oidc:u1" || rs[0].Actor != "alice@corp.test" || rs[0].Role != "admin" || rs[0].Detail != "oidc" {
		t.Errorf("signin audit = %+v", rs)
	}
	res, _ = send(t, c, "POST", e.srv.URL+"/ui/logout", url.Values{"csrf": {csrf}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/login?signedout=1" {
		t.Fatalf("sign-out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// The old cookie no longer works.
	old := &http.Client{CheckRedirect: c.CheckRedirect}
	req, _ := http.NewRequest("GET", e.srv.URL+"/ui/tokens", nil)
	req.AddCookie(&http.Cookie{Name: service.SessionCookie, Value: sess.Value})
	if res, err := old.Do(req); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Errorf("the signed-out cookie: %v %v, want a redirect to sign in", res.StatusCode, err)
	}
	if rs := e.audit(t, "signout"); len(rs) != 1 || rs[0].ActorToken != "oidc:u1" {
		t.Errorf("signout audit = %+v", rs)
	}

	// A viewer reads, and is refused what needs more.
	cv := (&authEnv{}).client(t)
	if res, _ := e.signIn(t, cv, "carol", "/ui/"); cookieOf(res, service.SessionCookie) == nil {
		t.Fatal("carol got no session")
	}
	for path, want := range map[string]int{"/ui/": 200, "/ui/skills/deploy": 200, "/ui/tokens": 403, "/ui/new": 403} {
		if res, _ := send(t, cv, "GET", e.srv.URL+path, nil); res.StatusCode != want {
			t.Errorf("viewer GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}

	// agent:ID: the agent's read-only view, as an agent token gets.
	ca := (&authEnv{}).client(t)
	if res, _ := e.signIn(t, ca, "erin", "/ui/"); cookieOf(res, service.SessionCookie) == nil {
		t.Fatal("erin got no session")
	}
	if res, body := send(t, ca, "GET", e.srv.URL+"/ui/agents/ops", nil); res.StatusCode != 200 || !strings.Contains(body, "deploy") || !strings.Contains(body, `id="who-role">read-only<`) {
		t.Errorf("agent:ops GET /ui/agents/ops: %d\n%.3000s", res.StatusCode, body)
	}
	for path, want := range map[string]int{"/ui/tokens": 403, "/ui/new": 403} {
		if res, _ := send(t, ca, "GET", e.srv.URL+path, nil); res.StatusCode != want {
			t.Errorf("agent:ops GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// Refused sign-ins: no mapping, a role limited to some skills, no state
// cookie, and an open redirect through next.
func TestOIDCSignInRefused(t *testing.T) {
	e := newOIDCEnv(t, time.Hour)
	c := (&authEnv{}).client(t)
	res, body := e.signIn(t, c, "bob", "/ui/")
	if res.StatusCode != http.StatusForbidden || cookieOf(res, service.SessionCookie) != nil ||
		!strings.Contains(body, "no_role") || !strings.Contains(body, "groups: elsewhere") || !strings.Contains(body, "bob@corp.test") || strings.Contains(body, "s3cret") {
		t.Fatalf("bob: %d\n%s", res.StatusCode, body)
	}
	if rs := e.audit(t, "signin.refuse"); len(rs) != 1 || rs[0].ActorToken != "oidc:u2" || !strings.Contains(rs[0].Detail, "no_role") {
		t.Errorf("refusal audit = %+v", rs)
	}
	res, body = e.signIn(t, c, "dave", "/ui/")
	if res.StatusCode != http.StatusForbidden || cookieOf(res, service.SessionCookie) != nil || !strings.Contains(body, "limited to some skills") {
		t.Errorf("dave (a limited role): %d\n%s", res.StatusCode, body)
	}

	// The callback from a browser that did not start the sign-in.
	res, _ = send(t, c, "GET", e.srv.URL+"/ui/oidc/start", nil)
	back, err := e.p.Login(testutil.Context(t), res.Header.Get("Location"), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	other := (&authEnv{}).client(t)
	res, body = send(t, other, "GET", back.String(), nil)
	if res.StatusCode != http.StatusUnauthorized || cookieOf(res, service.SessionCookie) != nil || !strings.Contains(body, "state_missing") {
		t.Errorf("another browser's callback: %d\n%s", res.StatusCode, body)
	}

	// A start on another name of the server goes to the redirect URL's
	// host first (the state cookie must be set there).
	port := strings.TrimPrefix(e.srv.URL, "http://127.0.0.1:")
	res, _ = send(t, c, "GET", "http://localhost:"+port+"/ui/oidc/start?next=%2Fui%2Fagents", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != e.srv.URL+"/ui/oidc/start?moved=1&next=%2Fui%2Fagents" || cookieOf(res, StateCookie) != nil {
		t.Errorf("a start on localhost: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Once moved, it goes on to the provider even if the names still
	// differ (a proxy rewriting Host): no loop.
	res, _ = send(t, c, "GET", "http://localhost:"+port+"/ui/oidc/start?moved=1&next=%2Fui%2Fagents", nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), e.p.Issuer) {
		t.Errorf("a moved start on localhost: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// next may only be a UI path.
	for _, next := range []string{"https://evil.example/", "//evil.example/ui/", "/ui/../v1/skills", "/ui/skills/" + strings.Repeat("a", identity.MaxNext)} {
		res, body := e.signIn(t, (&authEnv{}).client(t), "alice", next)
		if res.StatusCode != 200 || !strings.Contains(body, `url=/ui/"`) || strings.Contains(body, "evil") {
			t.Errorf("next=%.100s: %d\n%.2000s", next, res.StatusCode, body)
		}
	}
}

// Group removal: with a re-check on every request (a 1 ns interval), the
// session keeps working while the user is in the group and ends at the
// first request after the provider removed them; the end is audited.
func TestOIDCGroupRemoval(t *testing.T) {
	e := newOIDCEnv(t, time.Nanosecond)
	c := (&authEnv{}).client(t)
	if res, _ := e.signIn(t, c, "alice", "/ui/"); cookieOf(res, service.SessionCookie) == nil {
		t.Fatal("no session")
	}
	for i := 0; i < 3; i++ { // each re-check uses the rotated refresh token
		if res, _ := send(t, c, "GET", e.srv.URL+"/ui/tokens", nil); res.StatusCode != 200 {
			t.Fatalf("request %d in the group: %d", i, res.StatusCode)
		}
	}
	e.p.SetGroups(t, "u1", []string{"readers"})
	if res, body := send(t, c, "GET", e.srv.URL+"/ui/tokens", nil); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "viewer") {
		t.Errorf("moved to readers (viewer): /ui/tokens %d, want 403", res.StatusCode)
	}
	e.p.SetGroups(t, "u1", nil)
	if res, _ := send(t, c, "GET", e.srv.URL+"/ui/", nil); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/ui/login") {
		t.Errorf("removed from every group: %d %s, want the login page", res.StatusCode, res.Header.Get("Location"))
	}
	// Back in the group: the ended session stays ended.
	e.p.SetGroups(t, "u1", []string{"skills-admins"})
	if res, _ := send(t, c, "GET", e.srv.URL+"/ui/", nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the ended session came back: %d", res.StatusCode)
	}
	if rs := e.audit(t, "signout"); len(rs) != 1 || !strings.Contains(rs[0].Detail, "no longer map") {
		t.Errorf("signout audit = %+v", rs)
	}
}

// With EndSession, signing out ends loadout's session and then sends the
// browser to the provider's end_session_endpoint (a page, since the CSP's
// form-action forbids a form's redirect elsewhere), naming the client
// and the page to come back to; a token's session signs out as before.
func TestOIDCEndSession(t *testing.T) {
	e := newOIDCEnvEnd(t, time.Hour, true)
	c := (&authEnv{}).client(t)
	res, _ := e.signIn(t, c, "alice", "/ui/")
	sess := cookieOf(res, service.SessionCookie)
	_, body := send(t, c, "GET", e.srv.URL+"/ui/", nil)
	res, body = send(t, c, "POST", e.srv.URL+"/ui/logout", url.Values{"csrf": {pageCSRF(t, body)}})
	m := regexp.MustCompile(`content="0;url=([^"]*)"`).FindStringSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("sign-out: %d\n%s", res.StatusCode, body)
	}
	end, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil || !strings.HasPrefix(end.String(), e.p.Issuer) || end.Query().Get("client_id") != "loadout" || end.Query().Get("post_logout_redirect_uri") != e.srv.URL+"/ui/login?signedout=1" {
		t.Errorf("end-session URL = %v (%v)", end, err)
	}
	if _, _, ok := e.svc.Session(context.Background(), sess.Value); ok {
		t.Error("the session outlived the sign-out")
	}
	if c := cookieOf(res, service.SessionCookie); c == nil || c.MaxAge >= 0 {
		t.Errorf("the sign-out did not clear the cookie: %+v", c)
	}
}
