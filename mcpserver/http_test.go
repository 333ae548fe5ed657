package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// testAuth stands in for the real auth middleware: X-Test-Principal names
// the principal ("open", "coder" for a token scoped to agent coder, none
// for the zero principal).
func testAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p service.Principal
		switch r.Header.Get("X-Test-Principal") {
		case "open":
			p = service.Principal{Open: true}
		case "coder":
			p = service.Principal{TokenID: "tok-coder", Name: "coder bot", Scopes: []string{"agent:coder"}}
		}
		next.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
	})
}

func newHTTPServer(t testing.TB, svc *service.Service, stateless bool) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", HTTPHandler(svc, Options{Logger: quiet, Stateless: stateless}))
	for _, id := range []string{"coder", "other", "ghost"} {
		mux.Handle("/agents/"+id+"/mcp", HTTPHandler(svc, Options{Agent: id, Logger: quiet, Stateless: stateless}))
	}
	srv := httptest.NewServer(testAuth(mux))
	t.Cleanup(srv.Close)
	return srv
}

type headerTransport struct {
	principal string
	base      http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Principal", h.principal)
	return h.base.RoundTrip(r)
}

// pooled keeps enough idle connections for parallel calls (the default
// transport keeps two per host and would reconnect for the others).
var pooled = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}

func httpClient(principal string) *http.Client {
	return &http.Client{Transport: headerTransport{principal, pooled}}
}

// legacyRevision is the newest MCP revision with sessions: connectHTTP
// opens a session at it. (The Go client's default, 2026-07-28, has no
// sessions: connectHTTPAt.)
const legacyRevision = "2025-11-25"

func connectHTTP(t testing.TB, url, principal string, copt *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return connectHTTPAt(t, url, principal, legacyRevision, copt)
}

// connectHTTPAt connects at a protocol revision ("" for the client's
// newest).
func connectHTTPAt(t testing.TB, url, principal, revision string, copt *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := newClient(t, copt).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(principal)}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTPScopesAndReceipts(t *testing.T) {
	f := newFixture(t)
	srv := newHTTPServer(t, f.svc, false)

	// Refused before the SDK: another agent, the global catalog, no
	// principal, an unknown agent.
	for _, c := range []struct {
		path, principal string
		status          int
	}{
		{"/agents/other/mcp", "coder", http.StatusForbidden},
		{"/mcp", "coder", http.StatusForbidden},
		{"/agents/coder/mcp", "", http.StatusForbidden},
		{"/agents/ghost/mcp", "open", http.StatusNotFound},
	} {
		req, _ := http.NewRequest("POST", srv.URL+c.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := httpClient(c.principal).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s as %q: %d %s, want %d", c.path, c.principal, resp.StatusCode, body, c.status)
		}
		if _, err := connectHTTP(t, srv.URL+c.path, c.principal, nil); err == nil {
			t.Errorf("%s as %q: a client connected", c.path, c.principal)
		}
	}

	cs, err := connectHTTP(t, srv.URL+"/agents/coder/mcp", "coder", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, cs, "read_skill_file", map[string]any{"name": "alpha", "path": "references/guide.md"}); res.IsError {
		t.Fatal(text(res))
	}
	entries, _, _ := allSkills(t, cs)
	for _, e := range entries {
		for _, r := range e.Resources {
			data, _ := readBytes(t, cs, r.URI)
			if sha(data) != r.Digest {
				t.Errorf("%s over HTTP: digest %s, served %s", r.URI, r.Digest, sha(data))
			}
		}
	}
	rs, err := f.svc.Receipts(context.Background(), openPrincipal, store.ReceiptQuery{Agent: "coder", Skill: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatal("no receipts")
	}
	for _, r := range rs {
		if r.Transport != service.TransportMCPHTTP || r.Token != "tok-coder" {
			t.Errorf("receipt %+v: want transport mcp-http and the caller's token", r)
		}
	}

	// The global catalog is open to an open (admin) principal.
	g, err := connectHTTP(t, srv.URL+"/mcp", "open", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, g, "load_skill", map[string]any{"name": "delta"}); res.IsError {
		t.Errorf("global load delta: %s", text(res))
	}
}

func TestHTTPSessionCannotChangeHands(t *testing.T) {
	f := newFixture(t)
	srv := newHTTPServer(t, f.svc, false)
	cs, err := connectHTTP(t, srv.URL+"/agents/coder/mcp", "coder", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Another principal (open, so allowed on the agent) reusing the
	// session id is refused by the SDK's session user check.
	req, _ := http.NewRequest("POST", srv.URL+"/agents/coder/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	resp, err := httpClient("open").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("session reused by another principal: %d, want 403", resp.StatusCode)
	}
}

func TestHTTPStateless(t *testing.T) {
	f := newFixture(t)
	srv := newHTTPServer(t, f.svc, true)
	cs, err := connectHTTP(t, srv.URL+"/agents/coder/mcp", "coder", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, cs, "load_skill", map[string]any{"name": "beta"}); res.IsError {
		t.Fatal(text(res))
	}
	if got := listSkills(t, cs, ""); len(got.Skills) != 3 || got.CacheScope != "private" {
		t.Errorf("stateless skills/list: %d skills, scope %s", len(got.Skills), got.CacheScope)
	}
}

func TestHTTPListChanged(t *testing.T) {
	f := newFixture(t)
	srv := newHTTPServer(t, f.svc, false)
	tools, resources := make(chan struct{}, 10), make(chan struct{}, 10)
	_, err := connectHTTP(t, srv.URL+"/agents/coder/mcp", "coder", &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the client open its GET stream
	writeSkill(t, f.rootA, "epsilon", "Added while serving.", "", nil)
	f.svc.Reload(context.Background(), "test")
	for name, ch := range map[string]chan struct{}{"tools": tools, "resources": resources} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s list_changed over HTTP", name)
		}
	}
}

// BenchmarkReadSkillFileHTTP measures read_skill_file calls over MCP
// streamable HTTP: one session, calls from GOMAXPROCS goroutines.
func BenchmarkReadSkillFileHTTP(b *testing.B) {
	f := newFixture(b)
	srv := newHTTPServer(b, f.svc, false)
	cs, err := connectHTTP(b, srv.URL+"/agents/coder/mcp", "coder", nil)
	if err != nil {
		b.Fatal(err)
	}
	args := &mcp.CallToolParams{Name: "read_skill_file", Arguments: map[string]any{"name": "alpha", "path": "references/guide.md"}}
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := cs.CallTool(context.Background(), args)
			if err != nil || res.IsError {
				b.Error(err, res)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}
