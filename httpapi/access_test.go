package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// accessCaller is one column of the access matrix.
type accessCaller struct {
	name  string
	token func(e *env) string
}

// roleToken makes a token of scopes in e's store.
func roleToken(t testing.TB, e *env, scopes ...string) string {
	t.Helper()
	secret, _, err := e.st.(store.Server).CreateToken(context.Background(), strings.Join(scopes, " "), scopes)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

var accessCallers = []accessCaller{
	{"no token", func(*env) string { return "" }},
	{"wrong token", func(*env) string { return "not-a-token" }},
	{"agent token for this agent", func(e *env) string { return e.coder }},
	{"agent token for another agent", func(e *env) string { return e.other }},
	// A link token (index:coder) works only in the URL /i/TOKEN/.well-known/…
	// (wellknown.Link): as a bearer it is refused on every route.
	{"link token for this agent", func(e *env) string { return e.link }},
	{"viewer", func(e *env) string { return roleToken(e.t, e, "viewer") }},
	{"author", func(e *env) string { return roleToken(e.t, e, "author") }},
	{"reviewer", func(e *env) string { return roleToken(e.t, e, "reviewer") }},
	// The fixture's skill is gamma, and the bodies create gamma-new and
	// import gamma-imported: author:gam* covers all three.
	{"author of gam*", func(e *env) string { return roleToken(e.t, e, "author:gam*") }},
	{"author of team-data-*", func(e *env) string { return roleToken(e.t, e, "author:team-data-*") }},
	{"author of tag=other", func(e *env) string { return roleToken(e.t, e, "author:tag=other") }},
	{"admin token", func(e *env) string { return e.admin }},
	// A metrics token (Prometheus's) reads GET /metrics and nothing else:
	// as a bearer anywhere else it is refused like a link token.
	{"metrics token", func(e *env) string { return roleToken(e.t, e, "metrics") }},
}

// accessWant is what a caller gets from a route: "ok" (a 2xx: the
// fixture is made so that every route succeeds for those it admits),
// "401" or "403". The key is the route's scope, and for a role, "/skill"
// when the route is about one skill ({name} in its path, or PerSkill: the
// skills of its body), where a limited role covering the skill is
// admitted.
var accessWant = map[string][13]string{
	//              none   wrong  agent  agent2 link   viewer author review gam*   team   tag    admin  metrics
	"none":           {"ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"},
	"any":            {"401", "401", "ok", "ok", "401", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "401"},
	"agent":          {"401", "401", "ok", "403", "401", "403", "403", "403", "403", "403", "403", "ok", "401"},
	"viewer":         {"401", "401", "403", "403", "401", "ok", "ok", "ok", "403", "403", "403", "ok", "401"},
	"viewer/skill":   {"401", "401", "403", "403", "401", "ok", "ok", "ok", "ok", "403", "403", "ok", "401"},
	"author":         {"401", "401", "403", "403", "401", "403", "ok", "ok", "403", "403", "403", "ok", "401"},
	"author/skill":   {"401", "401", "403", "403", "401", "403", "ok", "ok", "ok", "403", "403", "ok", "401"},
	"reviewer":       {"401", "401", "403", "403", "401", "403", "403", "ok", "403", "403", "403", "ok", "401"},
	"reviewer/skill": {"401", "401", "403", "403", "401", "403", "403", "ok", "403", "403", "403", "ok", "401"},
	"admin":          {"401", "401", "403", "403", "401", "403", "403", "403", "403", "403", "403", "ok", "401"},
	// GET /metrics: a metrics token only; an admin token is refused on
	// purpose (docs/metrics.md).
	"metrics": {"401", "401", "403", "403", "401", "403", "403", "403", "403", "403", "403", "403", "ok"},
}

// accessParams fills the path parameters: a stored skill coder can see,
// one of its files, its first version, the agent the tokens are about.
var accessParams = map[string]string{"{$}": "", "{name}": "gamma", "{path...}": "notes.md", "{v}": "1", "{id}": "coder", "{source}": "team", "{review}": "REVIEW", "{block}": "gamma"}

// TestAccessMatrix is generated from the route table: every route, called
// by each caller (no token, agent and link tokens, every role, limited
// roles that cover the fixture's skill and that do not), answers as its
// declared scope says. A route without a scope, or with a path parameter
// this test cannot fill, fails it, so no route can be added without its
// access being tested. A call after a successful write gets a fresh
// server, so what one call changes cannot hide another's refusal; a
// refused write must also leave the store as it was.
func TestAccessMatrix(t *testing.T) {
	for _, rt := range httpapi.RouteSpecs() {
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			key := rt.Scope
			perSkill := rt.PerSkill || strings.Contains(rt.Pattern, "{name}")
			// Only the roles below admin are checked per skill (see
			// requireScope); admin, agent, any and none never are.
			if perSkill && (rt.Scope == "viewer" || rt.Scope == "author" || rt.Scope == "reviewer") {
				key += "/skill"
			}
			wants, ok := accessWant[key]
			if !ok {
				t.Fatalf("route %s %s declares scope %q (%s): declare none, any, agent, viewer, author, reviewer, admin or metrics in routes.go, and give its row here", rt.Method, rt.Pattern, rt.Scope, key)
			}
			path := rt.Pattern
			for k, v := range accessParams {
				path = strings.ReplaceAll(path, k, v)
			}
			if strings.Contains(path, "{") {
				t.Fatalf("%s: a path parameter has no value in accessParams", rt.Pattern)
			}
			if strings.HasSuffix(path, "/search") {
				path += "?q=gamma" // q is required
			}
			ctx := context.Background()
			basePath := path
			var e *env
			var before *store.Record
			for i, c := range accessCallers {
				// A fresh server for the first caller and after each write
				// that succeeded, so every call meets the fixture as made.
				if e == nil {
					e = newEnv(t, baseFiles)
					want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})), 201)
					var err error
					if strings.Contains(rt.Pattern, "{review}") {
						// A draft of gamma by another principal than the admin.
						if _, err := e.st.PutFile(store.WithDraft(ctx, store.Author{Token: "someone-else"}), "gamma", "notes.md", []byte("draft"), false, -1); err != nil {
							t.Fatal(err)
						}
						rs, err := e.st.(store.Drafts).Reviews(ctx, store.ReviewFilter{})
						if err != nil || len(rs) != 1 {
							t.Fatalf("reviews: %v %v", rs, err)
						}
						path = strings.ReplaceAll(basePath, "REVIEW", rs[0].ID)
					}
					if before, err = e.st.Get(ctx, "gamma"); err != nil {
						t.Fatal(err)
					}
				}
				body, hdr := accessBody(t, rt)
				r := e.do(t, rt.Method, path, c.token(e), body, hdr...)
				switch wants[i] {
				case "ok":
					if r.code < 200 || r.code > 299 {
						t.Errorf("%s: %d, want success: %s", c.name, r.code, r.body)
					}
				case "401":
					wantErrSoft(t, c.name, r, 401, "unauthorized")
				case "403":
					wantErrSoft(t, c.name, r, 403, "forbidden")
					m, _ := r.json(t)["error"].(map[string]any)
					msg, _ := m["message"].(string)
					switch rt.Scope {
					case "agent", "admin", "metrics":
						// The route's scope check refused it, the same way
						// on every route, whether or not the target exists.
						want := httpapi.MsgNeedsAdmin
						switch rt.Scope {
						case "agent":
							want = httpapi.MsgNotAgent
						case "metrics":
							want = httpapi.MsgNeedsMetrics
						}
						if msg != want {
							t.Errorf("%s: refusal %s, want the scope check's %q", c.name, r.body, want)
						}
					default:
						// A role refusal names the role, and the skill on a
						// route about one.
						if !strings.Contains(msg, "needs the "+rt.Scope+" role") {
							t.Errorf("%s: refusal %q does not name the role %s", c.name, msg, rt.Scope)
						}
						// (A route taking its skills from the body names
						// the skill once the caller holds the role over
						// some skill: the service refused that one.)
						if strings.HasSuffix(key, "/skill") && (!rt.PerSkill || strings.Contains(c.name, rt.Scope+" of ")) && !strings.Contains(msg, `"gamma`) {
							t.Errorf("%s: refusal %q does not name the skill", c.name, msg)
						}
					}
				}
				if wants[i] == "ok" && rt.Method != "GET" {
					e = nil
				}
				if wants[i] != "ok" && rt.Method != "GET" {
					after, err := e.st.Get(ctx, "gamma")
					if err != nil || after.Version != before.Version || after.Digest != before.Digest {
						t.Errorf("%s: a refused %s changed the store (%v)", c.name, rt.Method, err)
					}
					if rs, _ := e.st.List(ctx); len(rs) != 1 {
						t.Errorf("%s: a refused %s changed the store: %d skills", c.name, rt.Method, len(rs))
					}
				}
			}
		})
	}
}

// TestRefusedBeforeBody: a caller outside a route's scope is refused
// before its body is read, so a body over the route's cap gets 403, not
// 413, and a token without rights cannot make the server read anything.
func TestRefusedBeforeBody(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})), 201)
	n := 0
	for _, rt := range httpapi.RouteSpecs() {
		if rt.BodyTypes == nil || rt.Scope == "none" || rt.Scope == "any" {
			continue
		}
		n++
		path := rt.Pattern
		for k, v := range accessParams {
			path = strings.ReplaceAll(path, k, v)
		}
		ct := rt.BodyTypes[0]
		if ct == "*/*" {
			ct = "application/octet-stream"
		}
		for _, tok := range []string{e.coder, e.other} {
			req, _ := http.NewRequest(rt.Method, e.srv.URL+path, io.LimitReader(zeros{}, 64<<20))
			req.ContentLength = 64 << 20
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", ct)
			req.Header.Set("If-Match", "*")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", rt.Method, path, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 403 {
				t.Errorf("%s %s with a 64 MiB body and an agent token: %d %s, want 403", rt.Method, path, res.StatusCode, b)
			}
		}
	}
	if n == 0 {
		t.Fatal("no route with a body and a scope")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func wantErrSoft(t *testing.T, who string, r resp, status int, code string) {
	t.Helper()
	if r.code != status {
		t.Errorf("%s: %d, want %d: %s", who, r.code, status, r.body)
		return
	}
	if got := r.errCode(t); got != code {
		t.Errorf("%s: code %q, want %q", who, got, code)
	}
}

// accessBody is a body the route would accept from an admin, and the
// headers that go with it.
func accessBody(t *testing.T, rt httpapi.RouteSpec) ([]byte, []string) {
	hdr := []string{"If-Match", "*"}
	switch {
	case rt.BodyTypes == nil:
		return nil, hdr
	case slices.Contains(rt.BodyTypes, "*/*"):
		return []byte("new bytes"), append(hdr, "Content-Type", "application/octet-stream")
	case strings.Contains(rt.Pattern, "/reviews/") || strings.HasSuffix(rt.Pattern, "/approve") || strings.HasSuffix(rt.Pattern, "/reject") || strings.HasPrefix(rt.Pattern, "/v1/pins/") || strings.HasSuffix(rt.Pattern, "/withdraw"):
		return []byte("{}"), append(hdr, "Content-Type", "application/json")
	case strings.Contains(rt.Pattern, "/pins/"):
		return []byte(`{"version": 1}`), append(hdr, "Content-Type", "application/json")
	case rt.Pattern == "/v1/blocks":
		return []byte(`{"skill": "gamma", "reason": "access test"}`), append(hdr, "Content-Type", "application/json")
	case rt.Pattern == "/v1/import":
		return doc(t, "gamma-imported", "I.", "i"), append(hdr, "Content-Type", "application/json")
	case rt.Method == "POST":
		return doc(t, "gamma-new", "C.", "c"), append(hdr, "Content-Type", "application/json")
	}
	return doc(t, "gamma", "G2.", "changed"), append(hdr, "Content-Type", "application/json")
}

// TestFileWritesNeedAdmin: an agent token, even one for an agent that
// sees the stored skill, may not write or delete its files; the store is
// unchanged.
func TestFileWritesNeedAdmin(t *testing.T) {
	e := newEnv(t, baseFiles)
	ctx := context.Background()
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})), 201)
	// coder's sources include the store, so gamma is its skill.
	want(t, e.do(t, "GET", "/v1/agents/coder/skills/gamma", e.coder, nil), 200)
	for _, tok := range []string{e.coder, e.other} {
		wantErr(t, e.do(t, "PUT", "/v1/skills/gamma/files/notes.md", tok, []byte("evil"), "If-Match", `"v1"`, "Content-Type", "application/octet-stream"), 403, "forbidden")
		wantErr(t, e.do(t, "PUT", "/v1/skills/gamma/files/new.md", tok, []byte("evil"), "If-Match", "*", "Content-Type", "application/octet-stream"), 403, "forbidden")
		wantErr(t, e.do(t, "DELETE", "/v1/skills/gamma/files/notes.md", tok, nil, "If-Match", `"v1"`), 403, "forbidden")
		wantErr(t, e.do(t, "POST", "/v1/skills/gamma/versions/1/restore", tok, nil, "If-Match", "*"), 403, "forbidden")
	}
	rec, err := e.st.Get(ctx, "gamma")
	if err != nil || rec.Version != 1 || len(rec.Files) != 1 {
		t.Fatalf("the store changed: %+v %v", rec, err)
	}
	data, err := e.st.ReadFile(ctx, "gamma", 1, "notes.md")
	if err != nil || string(data) != "notes" {
		t.Errorf("notes.md: %q %v", data, err)
	}
	// The admin may.
	want(t, e.do(t, "PUT", "/v1/skills/gamma/files/notes.md", e.admin, []byte("fine"), "If-Match", `"v1"`, "Content-Type", "application/octet-stream"), 200)
	want(t, e.do(t, "DELETE", "/v1/skills/gamma/files/notes.md", e.admin, nil, "If-Match", `"v2"`), 200)
}
