package webui

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// publicRoutes are the routes anyone may reach without a session, and
// why. A new public route must be added here too, on purpose.
var publicRoutes = map[string]string{
	"GET /ui/login":         "the sign-in form",
	"POST /ui/login":        "signing in (the form's CSRF token is checked by the handler)",
	"POST /ui/logout":       "signing out only ends the cookie's own session (its CSRF token is checked)",
	"GET /ui/static/":       "the stylesheet and scripts the sign-in page loads",
	"GET /ui/oidc/start":    "starting a sign-in with the identity provider (a bounded, short-lived pending sign-in)",
	"GET /ui/oidc/callback": "the provider's redirect back (bound to the browser by the state cookie; state, PKCE and nonce checked)",
}

// Every row of the route table declares a known scope, and only the rows
// of publicRoutes are public.
func TestRouteTableDeclaresScopes(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range routes {
		switch rt.Scope {
		case scopeSession, scopeViewer, scopeAuthor, scopeReviewer, scopeAdmin:
		case scopePublic:
			if _, ok := publicRoutes[rt.Pattern]; !ok {
				t.Errorf("route %q is public but not in publicRoutes: make it scopeSession or scopeAdmin, or say in publicRoutes why anyone may reach it", rt.Pattern)
			}
		default:
			t.Errorf("route %q declares no scope (%q)", rt.Pattern, rt.Scope)
		}
		if seen[rt.Pattern] {
			t.Errorf("route %q is in the table twice", rt.Pattern)
		}
		seen[rt.Pattern] = true
	}
	for p := range publicRoutes {
		if !seen[p] {
			t.Errorf("publicRoutes names %q, which is not in the route table", p)
		}
	}
}

// A row without a scope, or with one the table does not know, stops New.
func TestRouteWithoutScopePanics(t *testing.T) {
	u := uiOf(New(newRouteEnv(t, false).svc, Options{Logger: slog.New(slog.DiscardHandler)}))
	for _, sc := range []scope{"", "authed", "Admin"} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "declares no scope") || !strings.Contains(r.(string), "GET /ui/x") {
					t.Errorf("a route of scope %q registered (recovered %v)", sc, r)
				}
			}()
			u.register(http.NewServeMux(), []route{{"GET /ui/x", sc, handle((*ui).notFound)}})
		}()
	}
	// The three known scopes register.
	u.register(http.NewServeMux(), []route{{"GET /ui/a", scopePublic, handle((*ui).notFound)}, {"GET /ui/b", scopeSession, handle((*ui).notFound)}, {"GET /ui/c", scopeAdmin, handle((*ui).notFound)}})
}

// Nothing in the package registers a handler but register, which reads
// only the route table: a HandleFunc or Handle call anywhere else is a
// route the table does not know.
func TestRoutesOnlyFromTable(t *testing.T) {
	fset, files := packageFiles(t)
	for name, f := range files {
		for _, d := range f.Decls {
			fn, isFunc := d.(*ast.FuncDecl)
			ast.Inspect(d, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
					return true
				}
				if isFunc && fn.Name.Name == "register" && name == "routes.go" {
					return true
				}
				t.Errorf("%s: a handler is registered outside the route table: add a row to routes (routes.go) instead", fset.Position(call.Pos()))
				return true
			})
		}
	}
}

// routeURL is a request path for a table pattern, with its wildcards
// filled in with names the test environment has.
func routeURL(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "GET", pattern
	}
	r := strings.NewReplacer("{$}", "", "{name}", "deploy", "{id}", "ops", "{path...}", "SKILL.md")
	path = r.Replace(path)
	switch path {
	case "/ui/":
		if pattern == "/ui/" {
			path = "/ui/no-such-page"
		}
	case "/ui/static/":
		path = "/ui/static/app.css"
	}
	return method, path
}

type routeEnv struct {
	svc *service.Service
	srv *httptest.Server
}

func newRouteEnv(t *testing.T, requireTokens bool) *routeEnv {
	e := newAuthEnv(t, requireTokens)
	return &routeEnv{svc: e.svc, srv: e.srv}
}

// do sends one request and returns its answer without reading a body (the
// event stream's never ends).
func (e *routeEnv) do(t *testing.T, method, path, session string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, method, e.srv.URL+path, nil)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: service.SessionCookie, Value: session})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	res.Body.Close()
	return res
}

// toLogin says whether an answer is authed's: a GET sent to sign in, a
// write refused as not signed in.
func toLogin(res *http.Response) bool {
	return res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/ui/login?next=") ||
		res.StatusCode == http.StatusUnauthorized
}

// Every route of the table, asked without a session on a server that
// requires tokens, is refused (sent to sign in) unless the table says it
// is public; each role's session (an agent's, a viewer's, an author's, a
// reviewer's, an admin's) is refused, with a page naming the role needed,
// exactly on the routes whose scope is above it.
func TestRoutesClosedWithoutSession(t *testing.T) {
	e := newRouteEnv(t, true)
	ctx := context.Background()
	mint := func(scope string) string {
		tok, _, err := e.svc.CreateToken(ctx, service.Principal{Open: true}, scope, []string{scope})
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := e.svc.StartSession(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// rank is how far up each session's token is; a route's scope needs
	// its rank.
	sessions := []struct {
		scope string
		rank  int
	}{{"agent:ops", 0}, {"viewer", 1}, {"author", 2}, {"reviewer", 3}, {"admin", 4}}
	need := map[scope]int{scopePublic: 0, scopeSession: 0, scopeViewer: 1, scopeAuthor: 2, scopeReviewer: 3, scopeAdmin: 4}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = mint(s.scope)
	}
	for _, rt := range routes {
		method, path := routeURL(rt.Pattern)
		res := e.do(t, method, path, "")
		if got := toLogin(res); got != (rt.Scope != scopePublic) {
			t.Errorf("%s %s without a session (scope %s): %d %s", method, path, rt.Scope, res.StatusCode, res.Header.Get("Location"))
		}
		if method != http.MethodGet {
			continue // writes need a CSRF token: TestLoginFlow and the pages' tests cover them
		}
		for i, s := range sessions {
			res := e.do(t, method, path, ids[i])
			refused := res.StatusCode == http.StatusForbidden || toLogin(res)
			if refused != (s.rank < need[rt.Scope]) {
				t.Errorf("%s %s with a session of %s (scope %s): %d", method, path, s.scope, rt.Scope, res.StatusCode)
			}
		}
	}
	// A path outside the table without a session: sent to sign in too.
	if res := e.do(t, "GET", "/ui/skills/deploy/nothing/here", ""); !toLogin(res) {
		t.Errorf("a path no row names, without a session: %d", res.StatusCode)
	}
}

// Two UIs in one process share no state: the open mode's CSRF token of
// one is refused by the other, and their skills-list caches are apart.
func TestTwoUIsShareNoState(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	testutil.Write(t, filepath.Join(dir, "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Does deploy.\n---\nDo it.\n")
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "all", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { svc.Close() })
	ha, hb := New(svc, Options{Logger: slog.New(slog.DiscardHandler)}), New(svc, Options{Logger: slog.New(slog.DiscardHandler)})
	a, b := httptest.NewServer(ha), httptest.NewServer(hb)
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	c := (&authEnv{}).client(t)
	_, body := send(t, c, "GET", a.URL+"/ui/", nil)
	csrfA := pageCSRF(t, body)
	_, body = send(t, c, "GET", b.URL+"/ui/", nil)
	csrfB := pageCSRF(t, body)
	if csrfA == csrfB {
		t.Fatalf("two UIs give the same open-mode CSRF token %q", csrfA)
	}
	// A write to B with A's token (the login form posts it): refused.
	if res, _ := send(t, c, "POST", b.URL+"/ui/login", url.Values{"token": {"lo_x"}, "csrf": {csrfA}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("UI b took UI a's CSRF token: %d", res.StatusCode)
	}
	if res, _ := send(t, c, "POST", b.URL+"/ui/login", url.Values{"token": {"lo_x"}, "csrf": {csrfB}}); res.StatusCode == http.StatusForbidden {
		t.Errorf("UI b refused its own CSRF token: %d", res.StatusCode)
	}
	ua, ub := uiOf(ha), uiOf(hb)
	if ua.cache() == ub.cache() {
		t.Fatal("two UIs share one skills cache")
	}
	ua.cache().mu.Lock()
	na := len(ua.cache().sets)
	ua.cache().mu.Unlock()
	if na == 0 {
		t.Error("UI a's skills page left no rows in its cache: the test does not see the cache")
	}
	ub2 := uiOf(New(svc, Options{Logger: slog.New(slog.DiscardHandler)}))
	if n := len(ub2.cache().sets); n != 0 {
		t.Errorf("a new UI starts with %d cached row sets", n)
	}
}

// A UI that is dropped is collected with its state: nothing in the
// package keeps it (a package-level map of UIs would).
func TestUIStateGoesWithUI(t *testing.T) {
	e := newRouteEnv(t, false)
	collected := make(chan struct{})
	func() {
		h := New(e.svc, Options{Logger: slog.New(slog.DiscardHandler)})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/", nil))
		if rec.Code != 200 {
			t.Fatalf("skills page: %d", rec.Code)
		}
		u := uiOf(h)
		runtime.AddCleanup(u, func(ch chan struct{}) { close(ch) }, collected)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("a dropped UI is still reachable: something outside the UI holds it")
		}
	}
}

// No package variable holds mutable state: locks, sync.Maps, atomics or
// maps made at start are per-UI fields instead (sync.Pool, a cache of
// spare buffers with no meaning, is allowed).
func TestNoPackageState(t *testing.T) {
	fset, files := packageFiles(t)
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				var bad string
				ast.Inspect(vs, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "sync" && sel.Sel.Name != "Pool" || x.Name == "atomic") {
							bad = x.Name + "." + sel.Sel.Name
						}
					}
					if call, ok := n.(*ast.CallExpr); ok {
						if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "newToken" {
							bad = "a token made at start"
						}
					}
					return true
				})
				if bad != "" {
					t.Errorf("%s: package variable %s holds state (%s): make it a field of ui", fset.Position(vs.Pos()), vs.Names[0].Name, bad)
				}
			}
		}
	}
}

// uiOf is the ui behind New's handler.
func uiOf(h http.Handler) *ui { return h.(handler).u }

// reset empties the cache, as after a catalog change (the benchmarks'
// cold runs).
func (c *skillsCache) reset() {
	c.mu.Lock()
	c.sets = nil
	c.mu.Unlock()
	c.usageMu.Lock()
	c.usage = usageSnap{}
	c.usageMu.Unlock()
}

// packageFiles parses the package's Go files, tests left out, by name.
func packageFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) == 0 {
		t.Fatal("no Go files of the package")
	}
	return fset, files
}
