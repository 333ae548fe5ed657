package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// TestRolePages: each role signs in; the pages that write are refused
// server-side below the author role (403, a page naming the role needed
// and the session's), and their buttons and links are hidden; an author
// sees them. A role limited to some skills does not sign in, with a
// message saying why.
func TestRolePages(t *testing.T) {
	u, st := pagesUI(t, Options{})
	ctx := context.Background()
	admin := service.Principal{Open: true}
	if _, err := u.svc.Put(ctx, admin, &skill.Bundle{Content: []byte("---\nname: gamma\ndescription: G.\n---\nBody.\n")}, 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	u.svc.RequireTokens(true)
	srv := httptest.NewServer(New(u.svc, Options{}))
	t.Cleanup(srv.Close)
	e := &authEnv{svc: u.svc, srv: srv}
	signIn := func(scopes ...string) (*http.Client, int, string) {
		tok, _, err := u.svc.CreateToken(ctx, admin, strings.Join(scopes, " "), scopes)
		if err != nil {
			t.Fatal(err)
		}
		c := e.client(t)
		_, body := send(t, c, "GET", srv.URL+"/ui/login", nil)
		res, body := send(t, c, "POST", srv.URL+"/ui/login", url.Values{"token": {tok}, "csrf": {pageCSRF(t, body)}, "next": {"/ui/"}})
		return c, res.StatusCode, body
	}
	for _, c := range []struct {
		role  string
		write bool
	}{{"viewer", false}, {"author", true}, {"reviewer", true}, {"admin", true}} {
		cl, code, body := signIn(c.role)
		if code != http.StatusSeeOther {
			t.Fatalf("%s: sign-in %d\n%s", c.role, code, body)
		}
		_, body = send(t, cl, "GET", srv.URL+"/ui/", nil)
		if strings.Contains(body, `id="new-skill-link"`) != c.write || strings.Contains(body, `href="/ui/import"`) != c.write {
			t.Errorf("%s: the skills page shows New skill / Import: %v, want %v", c.role, !c.write, c.write)
		}
		if !strings.Contains(body, `id="who-role">`+c.role+`<`) {
			t.Errorf("%s: the header does not show the role", c.role)
		}
		res, body := send(t, cl, "GET", srv.URL+"/ui/skills/gamma?tab=skill-md", nil)
		if res.StatusCode != 200 || strings.Contains(body, `id="md-save"`) != c.write || strings.Contains(body, `data-editable="true"`) != c.write {
			t.Errorf("%s: the SKILL.md tab (%d) shows Save: %v, want %v", c.role, res.StatusCode, !c.write, c.write)
		}
		for _, p := range []string{"/ui/new", "/ui/import"} {
			res, body := send(t, cl, "GET", srv.URL+p, nil)
			if c.write {
				if res.StatusCode != 200 {
					t.Errorf("%s on %s: %d", c.role, p, res.StatusCode)
				}
				continue
			}
			if res.StatusCode != 403 || !strings.Contains(body, "Authors only") || !strings.Contains(body, "needs the author role") || !strings.Contains(body, "a viewer&#39;s") {
				t.Errorf("%s on %s: %d\n%s", c.role, p, res.StatusCode, body)
			}
		}
		// A write refused server-side: the restore form's post, with the
		// session's CSRF token, leaves the store as it was.
		_, body = send(t, cl, "GET", srv.URL+"/ui/", nil)
		res, _ = send(t, cl, "POST", srv.URL+"/ui/skills/gamma/restore", url.Values{"csrf": {pageCSRF(t, body)}, "version": {"1"}, "current": {"1"}})
		if !c.write && res.StatusCode != 403 {
			t.Errorf("%s restoring: %d", c.role, res.StatusCode)
		}
		if rec, err := st.Get(ctx, "gamma"); err != nil || !c.write && rec.Version != 1 {
			t.Errorf("%s: gamma after a refused restore: %+v %v", c.role, rec, err)
		}
		res, body = send(t, cl, "GET", srv.URL+"/ui/tokens", nil)
		if (res.StatusCode == 200) != (c.role == "admin") {
			t.Errorf("%s on /ui/tokens: %d", c.role, res.StatusCode)
		}
		if c.role != "admin" && !strings.Contains(body, "needs an admin token") {
			t.Errorf("%s on /ui/tokens: the refusal does not say why:\n%s", c.role, body)
		}
		if res, _ := send(t, cl, "GET", srv.URL+"/ui/receipts", nil); res.StatusCode != 200 {
			t.Errorf("%s on /ui/receipts: %d", c.role, res.StatusCode)
		}
	}
	// Limited roles do not sign in; a limited role beside an agent scope
	// signs in as the agent's reader.
	for _, scopes := range [][]string{{"author:gam*"}, {"viewer:tag=data"}} {
		_, code, body := signIn(scopes...)
		if code != http.StatusForbidden || !strings.Contains(body, "limited to some skills") || !strings.Contains(body, "unlimited role") {
			t.Errorf("%v: sign-in %d\n%s", scopes, code, body)
		}
	}
	if _, code, body := signIn("author:gam*", "agent:dev"); code != http.StatusSeeOther {
		t.Errorf("a limited author with agent:dev: sign-in %d\n%s", code, body)
	}
}

// TestTokenFormRoles: the token page creates a role token, limited or
// not; a bad limit is refused naming the field and the scope.
func TestTokenFormRoles(t *testing.T) {
	u, _ := pagesUI(t, Options{})
	ctx := context.Background()
	post := func(scope, limit string) (int, string) {
		r := httptest.NewRequest("POST", "/ui/tokens", strings.NewReader(url.Values{"name": {"n"}, "scope": {scope}, "limit": {limit}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := serve(u.createToken, service.Principal{Open: true}, r)
		return w.Code, w.Body.String()
	}
	for _, c := range [][2]string{{"author", "team-data-*"}, {"reviewer", "tag=data"}, {"viewer", ""}, {"metrics", ""}} {
		if code, body := post(c[0], c[1]); code != 200 || !strings.Contains(body, `id="new-secret"`) {
			t.Errorf("%v: %d", c, code)
		}
	}
	toks, err := u.svc.Tokens(ctx, service.Principal{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, strings.Join(tk.Scopes, ","))
	}
	for _, want := range []string{"author:team-data-*", "reviewer:tag=data", "viewer", "metrics"} {
		if !slices.Contains(got, want) {
			t.Errorf("no token %s: %v", want, got)
		}
	}
	for _, c := range []struct{ scope, limit, says string }{
		{"author", "Team-*", `author:Team-*`},
		{"author", "team-[", "not a valid pattern"},
		{"agent:ops", "team-*", "only a role can be limited"},
		{"metrics", "team-*", "only a role can be limited"},
		{"owner", "", "not one of this server"},
	} {
		code, body := post(c.scope, c.limit)
		if code != http.StatusUnprocessableEntity && code != http.StatusConflict || !strings.Contains(body, c.says) {
			t.Errorf("%s %q: %d, want a refusal saying %q", c.scope, c.limit, code, c.says)
		}
	}
}
