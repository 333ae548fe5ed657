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

var accessCallers = []accessCaller{
	{"no token", func(*env) string { return "" }},
	{"wrong token", func(*env) string { return "not-a-token" }},
	{"agent token for this agent", func(e *env) string { return e.coder }},
	{"agent token for another agent", func(e *env) string { return e.other }},
	// A link token (index:coder) works only in the URL /i/TOKEN/.well-known/…
	// (wellknown.Link): as a bearer it is refused on every route.
	{"link token for this agent", func(e *env) string { return e.link }},
	// Last: its writes succeed, and the refusals above are checked against
	// the store as it was before them.
	{"admin token", func(e *env) string { return e.admin }},
}

// accessWant is what a caller gets from a route of a scope: "ok" (a 2xx:
// the fixture is made so that every route succeeds for those it admits),
// "401" or "403".
var accessWant = map[string][6]string{
	"none":  {"ok", "ok", "ok", "ok", "ok", "ok"},
	"any":   {"401", "401", "ok", "ok", "401", "ok"},
	"agent": {"401", "401", "ok", "403", "401", "ok"},
	"admin": {"401", "401", "403", "403", "401", "ok"},
}

// accessParams fills the path parameters: a stored skill coder can see,
// one of its files, its first version, the agent the tokens are about.
var accessParams = map[string]string{"{$}": "", "{name}": "gamma", "{path...}": "notes.md", "{v}": "1", "{id}": "coder", "{source}": "team", "{review}": "REVIEW"}

// TestAccessMatrix is generated from the route table: every route, called
// by each of the five callers, answers as its declared scope says. A route
// without a scope, or with a path parameter this test cannot fill, fails
// it, so no route can be added without its access being tested. Each
// route gets a fresh server, so what one route's calls change cannot hide
// another's refusal; a refused write must also leave the store as it was.
func TestAccessMatrix(t *testing.T) {
	for _, rt := range httpapi.RouteSpecs() {
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			wants, ok := accessWant[rt.Scope]
			if !ok {
				t.Fatalf("route %s %s declares scope %q: declare none, any, agent or admin in routes.go", rt.Method, rt.Pattern, rt.Scope)
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
			e := newEnv(t, baseFiles)
			ctx := context.Background()
			want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})), 201)
			if strings.Contains(path, "REVIEW") {
				// A draft of gamma by another principal than the admin.
				if _, err := e.st.PutFile(store.WithDraft(ctx, store.Author{Token: "someone-else"}), "gamma", "notes.md", []byte("draft"), false, -1); err != nil {
					t.Fatal(err)
				}
				rs, err := e.st.(store.Drafts).Reviews(ctx, store.ReviewFilter{})
				if err != nil || len(rs) != 1 {
					t.Fatalf("reviews: %v %v", rs, err)
				}
				path = strings.ReplaceAll(path, "REVIEW", rs[0].ID)
			}
			before, err := e.st.Get(ctx, "gamma")
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range accessCallers {
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
					// The route's scope check refused it, the same way on
					// every route, whether or not the target exists.
					msg := httpapi.MsgNeedsAdmin
					if rt.Scope == "agent" {
						msg = httpapi.MsgNotAgent
					}
					if m, _ := r.json(t)["error"].(map[string]any); m == nil || m["message"] != msg {
						t.Errorf("%s: refusal %s, want the scope check's %q", c.name, r.body, msg)
					}
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
	case rt.Pattern == "/v1/import":
		return doc(t, "imported", "I.", "i"), append(hdr, "Content-Type", "application/json")
	case rt.Method == "POST":
		return doc(t, "created", "C.", "c"), append(hdr, "Content-Type", "application/json")
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
