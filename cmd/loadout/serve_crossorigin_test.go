package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrossOriginWritesRefused walks the server's own route table (the
// index at GET /: every API endpoint, the MCP endpoints and the other
// links) and sends each path every state-changing method as a browser
// page of another origin can without a preflight (a "simple" request:
// text/plain, a form, no Content-Type, Origin null, or only
// Sec-Fetch-Site), on an open loopback server, where a request without a
// token acts as admin. Every one is refused with 403 cross_origin before
// it reaches a handler, so a route added later is covered too. The same
// request without the browser's headers (a non-browser client) passes
// the guard, so the paths are real.
func TestCrossOriginWritesRefused(t *testing.T) {
	srv := startServe(t, "--root", filepath.Join(examplesDir(t), "skills"), "--db", filepath.Join(t.TempDir(), "x.db"), "--no-watch")
	code, body := httpDo(t, "GET", srv.base+"/", "", nil)
	if code != 200 {
		t.Fatalf("GET /: %d %s", code, body)
	}
	var index struct {
		Links     map[string]string
		Endpoints []struct{ Method, Path string }
	}
	if err := json.Unmarshal([]byte(body), &index); err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{id}", "no-such-agent", "{name}", "no-such-skill", "{path...}", "notes.md", "{path}", "notes.md", "{v}", "1", "{$}", "")
	paths := map[string]bool{}
	writes := 0
	for _, e := range index.Endpoints {
		paths[fill.Replace(e.Path)] = true
		if e.Method != "GET" && e.Method != "HEAD" {
			writes++
		}
	}
	for _, l := range index.Links {
		paths[fill.Replace(l)] = true
	}
	// Link URLs are routed before authentication (they carry their own
	// token), but not before the guard.
	paths["/i/no-such-link/.well-known/skills/index.json"] = true
	if writes < 8 || !paths["/mcp"] || !paths["/agents/no-such-agent/mcp"] {
		t.Fatalf("the route table lists %d write endpoints and paths %v: not the table this test expects", writes, paths)
	}
	foreign := []struct {
		name string
		hdr  []string
	}{
		{"text/plain from another origin", []string{"Content-Type", "text/plain", "Origin", "http://evil.example"}},
		{"a form from another origin", []string{"Content-Type", "application/x-www-form-urlencoded", "Origin", "http://evil.example"}},
		{"a multipart form from another origin", []string{"Content-Type", "multipart/form-data; boundary=x", "Origin", "http://evil.example"}},
		{"no Content-Type from another origin", []string{"Origin", "http://evil.example"}},
		{"JSON from another origin", []string{"Content-Type", "application/json", "Origin", "http://evil.example"}},
		{"Origin null (a sandboxed frame or a file)", []string{"Content-Type", "text/plain", "Origin", "null"}},
		{"Sec-Fetch-Site cross-site, no Origin", []string{"Content-Type", "text/plain", "Sec-Fetch-Site", "cross-site"}},
		{"Sec-Fetch-Site same-site (another port or subdomain)", []string{"Content-Type", "text/plain", "Sec-Fetch-Site", "same-site", "Origin", "http://localhost:1"}},
	}
	for p := range paths {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			for _, f := range foreign {
				code, body := httpDo(t, m, srv.base+p, "", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), f.hdr...)
				if code != http.StatusForbidden || !strings.Contains(body, `"code":"cross_origin"`) {
					t.Errorf("%s %s, %s: %d %.200s, want 403 cross_origin", m, p, f.name, code, body)
				}
			}
			// A non-browser client passes the guard (whatever the route
			// then answers).
			if code, body := httpDo(t, m, srv.base+p, "", strings.NewReader("x"), "Content-Type", "text/plain"); code == http.StatusForbidden {
				t.Errorf("%s %s without browser headers: %d %.200s: refused by the guard", m, p, code, body)
			}
		}
	}
	t.Logf("%d paths × 4 methods × %d cross-origin variants refused", len(paths), len(foreign))
}
