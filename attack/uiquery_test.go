package attack

// Attacks on the UI surfaces added with the skills list at size: the
// list's source filter (?source=) and the Diagnostics page's ?skill=,
// which echo what the request says, and the route table that closes
// every UI route without a session.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestUIQueryEchoes: markup in ?source=, ?skill=, ?code= and ?q= comes
// back as text, never as markup of the page; a 24 KB value (near the
// server's 32 KB bound on a request's head) costs one bounded page, not
// a page that repeats it per row or per option.
func TestUIQueryEchoes(t *testing.T) {
	s := Start(t, Options{})
	const mark = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	long := strings.Repeat("a", 24<<10)
	for _, path := range []string{
		"/ui/?source=" + url.QueryEscape(mark),
		"/ui/?source=folder:" + url.QueryEscape(mark),
		"/ui/?q=" + url.QueryEscape(mark) + "&source=" + url.QueryEscape(mark),
		"/ui/diagnostics?skill=" + url.QueryEscape(mark),
		"/ui/diagnostics?code=" + url.QueryEscape(mark) + "&severity=" + url.QueryEscape(mark),
	} {
		code, body := getWithin(t, s, path, 30*time.Second)
		// 200 (a filter that matches nothing) or 400 (a severity that is
		// none): either way a page of the UI's own.
		if code != http.StatusOK && code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 200 or 400", path, code)
		}
		for _, raw := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(body, raw) {
				t.Errorf("GET %s: the page holds %q as markup", path, raw)
			}
		}
	}
	for _, path := range []string{"/ui/?source=" + long, "/ui/?source=folder:" + long, "/ui/diagnostics?skill=" + long} {
		code, body := getWithin(t, s, path, 30*time.Second)
		if code != http.StatusOK {
			t.Errorf("GET %.40s…: %d, want 200", path, code)
			continue
		}
		// The value may be shown (the filter in force) and kept in a few
		// links; never once per row or per option.
		if n := strings.Count(body, long); n > 4 {
			t.Errorf("GET %.40s…: the 24 KB value is in the page %d times (%d bytes)", path, n, len(body))
		}
	}
	s.Healthy(t)
}

// TestUIClosedWithoutSession: with tokens, every UI route but the sign-in
// form and the static files sends a caller without a session to sign in,
// a path no route names included, whatever the method; an API bearer
// token is no UI session.
func TestUIClosedWithoutSession(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, r := range []struct{ method, path string }{
		{"GET", "/ui/"}, {"GET", "/ui/?source=store"}, {"GET", "/ui/diagnostics?skill=deploy"},
		{"GET", "/ui/skills/deploy"}, {"GET", "/ui/agents"}, {"GET", "/ui/import"}, {"GET", "/ui/new"},
		{"GET", "/ui/tokens"}, {"GET", "/ui/receipts"}, {"GET", "/ui/events"}, {"GET", "/ui/no-such-page"},
		{"POST", "/ui/import"}, {"POST", "/ui/new"}, {"POST", "/ui/skills/deploy/restore"},
	} {
		for _, bearer := range []bool{false, true} {
			req, err := http.NewRequest(r.method, s.Base+r.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			if bearer {
				req.Header.Set("Authorization", "Bearer "+s.Admin)
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", r.method, r.path, err)
			}
			res.Body.Close()
			loc := res.Header.Get("Location")
			signIn := res.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/ui/login")
			refused := res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden
			if !signIn && !refused {
				t.Errorf("%s %s (bearer %v) without a session: %d %q; want a refusal or the sign-in page", r.method, r.path, bearer, res.StatusCode, loc)
			}
		}
	}
	for _, open := range []string{"/ui/login", "/ui/static/app.css"} {
		res, err := c.Get(s.Base + open)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a session: %d, want 200 (public by the route table)", open, res.StatusCode)
		}
	}
}
