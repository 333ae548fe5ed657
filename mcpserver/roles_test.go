package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// TestRolesOnMCP: the MCP endpoints are an agent's: a role below admin,
// limited or not, has no agent rights and is refused (403) on
// /agents/ID/mcp and on the global /mcp, as on the API's agent routes; a
// role token that also holds agent:ID reads that agent; admin reads both.
func TestRolesOnMCP(t *testing.T) {
	f := newFixture(t)
	serve := func(agent string) string {
		_, h := newHTTPHandler(f.svc, Options{Agent: agent, Logger: quiet, Sessions: NewSessions(0, time.Hour, quiet)})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := service.Principal{TokenID: "t-" + r.Header.Get("X-Test-Scopes"), Scopes: strings.Fields(r.Header.Get("X-Test-Scopes"))}
			h.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	urls := map[string]string{"coder": serve("coder"), catalog.GlobalID: serve(catalog.GlobalID)}
	for _, c := range []struct {
		scopes       string
		coder, globl int
	}{
		{"viewer", 403, 403},
		{"author", 403, 403},
		{"reviewer", 403, 403},
		{"author:gam*", 403, 403},
		{"viewer agent:coder", 200, 403},
		{"reviewer agent:other", 403, 403},
		{"admin:alpha", 403, 403}, // a limited admin is no admin
		{"admin", 200, 200},
	} {
		for agent, want := range map[string]int{"coder": c.coder, catalog.GlobalID: c.globl} {
			body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
			req, _ := http.NewRequest("POST", urls[agent], strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-Test-Scopes", c.scopes)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != want {
				t.Errorf("%s on agent %s: %d, want %d: %s", c.scopes, agent, res.StatusCode, want, b)
			}
		}
	}
}
