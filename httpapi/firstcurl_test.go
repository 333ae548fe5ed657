package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GET / is a JSON index of every endpoint with links, without a token.
func TestIndex(t *testing.T) {
	e := newEnv(t, baseFiles)
	r := e.do(t, "GET", "/", "", nil)
	want(t, r, 200)
	if ct := r.h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	m := r.json(t)
	links, _ := m["links"].(map[string]any)
	for k, v := range map[string]string{"openapi": "/v1/openapi.json", "mcp": "/mcp", "agentMcp": "/agents/{id}/mcp", "wellKnown": "/.well-known/agent-skills/index.json"} {
		if links[k] != v {
			t.Errorf("links.%s = %v, want %s", k, links[k], v)
		}
	}
	eps, _ := m["endpoints"].([]any)
	seen := map[string]map[string]any{}
	for _, x := range eps {
		ep := x.(map[string]any)
		seen[ep["method"].(string)+" "+ep["path"].(string)] = ep
		if ep["summary"] == "" || ep["name"] == "" {
			t.Errorf("endpoint without name or summary: %v", ep)
		}
	}
	for _, k := range []string{"GET /", "GET /v1/agents", "GET /v1/agents/{id}/search", "GET /v1/skills/{name}/files/{path}", "POST /v1/import"} {
		if seen[k] == nil {
			t.Errorf("index lacks %s: %s", k, r.body)
		}
	}
	if seen["GET /v1/skills"]["auth"] != "viewer" || seen["POST /v1/reload"]["auth"] != "admin" || seen["GET /"]["auth"] != "none" {
		t.Errorf("auth: %v %v", seen["GET /v1/skills"], seen["GET /"])
	}
	// The OpenAPI document has the root as "/", not "/{$}".
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(e.do(t, "GET", "/v1/openapi.json", e.admin, nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Paths["/"]["get"] == nil || doc.Paths["/{$}"] != nil {
		t.Errorf("openapi root path: %v", doc.Paths["/"])
	}
}

// A path without a route is a JSON 404; a route with another method a
// JSON 405 with Allow.
func TestRouterErrorsAreJSON(t *testing.T) {
	e := newEnv(t, baseFiles)
	for _, p := range []string{"/nope", "/v1/nope", "/v1/agents/coder/nope", "/index.html"} {
		r := e.do(t, "GET", p, e.admin, nil)
		wantErr(t, r, 404, "not_found")
		if !strings.Contains(r.body2(), "GET /") {
			t.Errorf("%s: the 404 does not point at the index: %s", p, r.body)
		}
	}
	r := e.do(t, "DELETE", "/v1/agents", e.admin, nil)
	wantErr(t, r, 405, "method_not_allowed")
	if got := r.h.Get("Allow"); got != "GET, HEAD" {
		t.Errorf("Allow %q", got)
	}
	r = e.do(t, "PATCH", "/v1/skills/alpha", e.admin, []byte("{}"))
	wantErr(t, r, 405, "method_not_allowed")
	if got := r.h.Get("Allow"); got != "GET, HEAD, PUT, DELETE" {
		t.Errorf("Allow %q", got)
	}
	wantErr(t, e.do(t, "POST", "/", "", nil), 405, "method_not_allowed")
	// Routes still answer.
	want(t, e.do(t, "GET", "/healthz", "", nil), 200)
	want(t, e.do(t, "HEAD", "/v1/agents", e.admin, nil), 200)
}

func (r resp) body2() string { return string(r.body) }

// Admin routes answer a missing skill with a message for a person, not the
// model-facing one ("available to this agent", "Call search_skills").
func TestAdminNotFoundIsForPeople(t *testing.T) {
	e := newEnv(t, baseFiles)
	for _, p := range []string{"/v1/skills/zzzzzz", "/v1/skills/zzzzzz/files", "/v1/skills/zzzzzz/files/SKILL.md", "/v1/skills/zzzzzz/export", "/v1/skills/alpah"} {
		r := e.do(t, "GET", p, e.admin, nil)
		wantErr(t, r, 404, "not_found")
		msg := r.json(t)["error"].(map[string]any)["message"].(string)
		for _, bad := range []string{"search_skills", "this agent", "Call "} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s: message worded for a model (%q): %s", p, bad, msg)
			}
		}
	}
	r := e.do(t, "GET", "/v1/skills/alpah", e.admin, nil)
	if msg := r.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "did you mean alpha") {
		t.Errorf("no suggestion: %s", r.body)
	}
}

// /v1/agents shows the budget the prompt is rendered with, never the
// config's 0.
func TestAgentsEffectiveBudget(t *testing.T) {
	e := newEnv(t, baseFiles)
	r := e.do(t, "GET", "/v1/agents", e.admin, nil)
	want(t, r, 200)
	got := map[string]float64{}
	for _, x := range r.json(t)["agents"].([]any) {
		a := x.(map[string]any)
		got[a["id"].(string)] = a["budget"].(float64)
		if a["format"] != "pi" {
			t.Errorf("format: %v", a)
		}
	}
	if got["coder"] != 4000 || got["writer"] != 8000 {
		t.Errorf("budgets %v, want coder 4000 and writer 8000 (the default)", got)
	}
	// The prompt agrees.
	p := e.do(t, "GET", "/v1/agents/writer/prompt", e.admin, nil).json(t)
	if b := p["report"].(map[string]any)["budget"].(float64); b != got["writer"] {
		t.Errorf("prompt budget %v, agents budget %v", b, got["writer"])
	}
}

// HTTP search and MCP search_skills answer with the same field names.
func TestSearchShapeMatchesMCP(t *testing.T) {
	e := newEnv(t, baseFiles)
	r := e.do(t, "GET", "/v1/agents/coder/search?q=second", e.coder, nil)
	want(t, r, 200)
	var httpBody map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &httpBody); err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.do(t, "GET", "/v1/agents/coder/search?q=", e.coder, nil), 400, "bad_request")

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.HTTPHandler(e.svc, mcpserver.Options{Agent: "coder", Stateless: true}))
	srv := httptest.NewServer(httpapi.Auth(e.svc, mux))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: bearer{e.coder}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": "second"}})
	if err != nil || res.IsError {
		t.Fatalf("search_skills: %v %v", err, res)
	}
	var mcpBody map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &mcpBody); err != nil {
		t.Fatal(err)
	}
	for k := range mcpBody {
		if _, ok := httpBody[k]; !ok {
			t.Errorf("MCP has %q, HTTP does not: %s", k, r.body)
		}
	}
	if string(httpBody["skills"]) != string(mcpBody["skills"]) {
		t.Errorf("hits differ:\nHTTP %s\nMCP  %s", httpBody["skills"], mcpBody["skills"])
	}
	if len(keysOf(t, httpBody["skills"])) == 0 {
		t.Errorf("no hits: %s", r.body)
	}
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func keysOf(t *testing.T, raw json.RawMessage) []string {
	var hits []map[string]any
	if err := json.Unmarshal(raw, &hits); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		for k := range h {
			out = append(out, k)
		}
		sort.Strings(out)
		if !reflect.DeepEqual(out, []string{"description", "name", "score", "source"}) {
			t.Errorf("hit fields %v", out)
		}
		break
	}
	return out
}

// The OpenAPI document is served compact: indented it was 139 KB.
func TestOpenAPICompact(t *testing.T) {
	e := newEnv(t, baseFiles)
	r := e.do(t, "GET", "/v1/openapi.json", e.admin, nil)
	want(t, r, 200)
	if n := bytes.Count(r.body, []byte("\n")); n > 1 {
		t.Errorf("the OpenAPI document has %d lines, want one (compact JSON)", n)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil || doc["openapi"] == nil {
		t.Errorf("the compact document does not parse as OpenAPI: %v", err)
	}
	t.Logf("OpenAPI document: %d bytes", len(r.body))
}
