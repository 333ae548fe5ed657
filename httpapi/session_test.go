package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
)

// The web UI's session cookie authenticates API calls made by its pages:
// reads with the cookie alone, writes only with the session's CSRF token
// in X-CSRF-Token (403 csrf otherwise); an agent session keeps the agent
// token's scopes; an ended session is a 401 saying to sign in again; a
// bearer request needs no CSRF token, cookie or not.
func TestSessionCookieAuth(t *testing.T) {
	e := newEnv(t, baseFiles)
	ctx := context.Background()
	id, csrf, err := e.svc.StartSession(ctx, e.admin)
	if err != nil {
		t.Fatal(err)
	}
	cookie := service.SessionCookie + "=" + id
	create := func(name string) []byte { return doc(t, name, "Made from the UI.", "Body.") }

	want(t, e.do(t, "GET", "/v1/skills", "", nil, "Cookie", cookie), 200)
	for _, c := range []struct{ why, token string }{{"no CSRF token", ""}, {"another token", "x" + csrf}} {
		r := e.do(t, "POST", "/v1/skills", "", create("made"), "Cookie", cookie, "X-CSRF-Token", c.token)
		wantErr(t, r, 403, service.CodeCSRF)
		if !strings.Contains(string(r.body), "reload the page") {
			t.Errorf("a CSRF refusal must say what to do: %s", r.body)
		}
		if _, err := e.st.Get(ctx, "made"); err == nil {
			t.Fatalf("a POST with %s wrote the skill", c.why)
		}
	}
	// DELETE and PUT too (any method but GET, HEAD, OPTIONS).
	wantErr(t, e.do(t, "DELETE", "/v1/skills/alpha", "", nil, "Cookie", cookie), 403, service.CodeCSRF)
	want(t, e.do(t, "POST", "/v1/skills", "", create("made"), "Cookie", cookie, "X-CSRF-Token", csrf), 201)

	// A bearer request with a cookie is the bearer's, and needs no CSRF.
	want(t, e.do(t, "POST", "/v1/skills", e.admin, create("bearer"), "Cookie", cookie), 201)
	// An agent's session reads its agent only and cannot write.
	aid, acsrf, err := e.svc.StartSession(ctx, e.coder)
	if err != nil {
		t.Fatal(err)
	}
	acookie := service.SessionCookie + "=" + aid
	want(t, e.do(t, "GET", "/v1/agents/coder/prompt", "", nil, "Cookie", acookie), 200)
	wantErr(t, e.do(t, "GET", "/v1/agents/writer/prompt", "", nil, "Cookie", acookie), 403, service.CodeForbidden)
	wantErr(t, e.do(t, "POST", "/v1/skills", "", create("agent"), "Cookie", acookie, "X-CSRF-Token", acsrf), 403, service.CodeForbidden)

	// Ended: a 401 that says to sign in again (tokens are required here).
	e.svc.EndSession(id)
	r := e.do(t, "GET", "/v1/skills", "", nil, "Cookie", cookie)
	wantErr(t, r, 401, service.CodeUnauthorized)
	if !strings.Contains(string(r.body), "sign in again") {
		t.Errorf("an ended session's refusal: %s", r.body)
	}
	// Revoking the agent token ends its session.
	toks, _ := e.svc.Tokens(ctx, service.Principal{Open: true})
	for _, tk := range toks {
		if tk.Name == "coder" {
			if err := e.svc.RevokeToken(ctx, service.Principal{Open: true}, tk.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantErr(t, e.do(t, "GET", "/v1/agents/coder/prompt", "", nil, "Cookie", acookie), 401, service.CodeUnauthorized)
}

// In the open loopback mode a stale cookie is as no cookie: the API stays
// open, as it is without one.
func TestSessionCookieOpenMode(t *testing.T) {
	e := newEnvOpt(t, baseFiles, false)
	want(t, e.do(t, "GET", "/v1/skills", "", nil, "Cookie", service.SessionCookie+"=stale"), 200)
}
