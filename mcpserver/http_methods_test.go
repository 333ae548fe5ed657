package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// postRaw POSTs a JSON-RPC body as curl would, with a session id and a
// revision when given; it returns the status, the Content-Type and the
// body.
func postRaw(t testing.TB, url, sid, revision, body string, hdr ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if revision != "" {
		req.Header.Set("Mcp-Protocol-Version", revision)
	}
	resp, err := httpClient("coder").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestHTTPUnknownMethod: an unknown method over HTTP gets JSON-RPC
// -32601 (as over stdio), not HTTP 400 text/plain, and the Go client's
// session stays usable, in both modes and at every revision the client
// speaks.
func TestHTTPUnknownMethod(t *testing.T) {
	f := newFixture(t)
	for _, stateless := range []bool{false, true} {
		srv := newHTTPServer(t, f.svc, stateless)
		url := srv.URL + "/agents/coder/mcp"
		for _, rev := range []string{legacyRevision, "2025-06-18", "2025-03-26", ""} {
			t.Run(fmt.Sprintf("stateless=%v/revision=%q", stateless, rev), func(t *testing.T) {
				c := newClient(t, nil)
				for _, m := range []string{"bogus/method", "tasks/list"} {
					if err := mcp.AddSendingCustomMethod[*ListSkillsParams, *ListSkillsResult](c, m); err != nil {
						t.Fatal(err)
					}
				}
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient("coder"), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				for _, m := range []string{"bogus/method", "tasks/list"} {
					_, err := mcp.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](context.Background(), cs, m, &ListSkillsParams{})
					if code := rpcCode(err); code != -32601 {
						t.Errorf("%s: %v (code %d), want -32601", m, err, code)
					}
				}
				// The session still works.
				if res := callTool(t, cs, "load_skill", map[string]any{"name": "beta"}); res.IsError {
					t.Errorf("load_skill after the unknown methods: %s", text(res))
				}
				if got := listSkills(t, cs, ""); len(got.Skills) != 3 {
					t.Errorf("skills/list after the unknown methods: %d skills", len(got.Skills))
				}
			})
		}
	}
}

// TestHTTPUnknownMethodRaw: the same over raw HTTP, as curl sends it: a
// call gets HTTP 200 application/json with its id and -32601, a
// notification 202, and in a batch (revision 2025-03-26) each unknown
// call gets its error beside the answers to the known ones.
func TestHTTPUnknownMethodRaw(t *testing.T) {
	f := newFixture(t)
	srv := newHTTPServer(t, f.svc, false)
	url := srv.URL + "/agents/coder/mcp"

	// Without a session, and at any legacy revision.
	for _, rev := range []string{"", "2025-03-26", "2025-06-18", legacyRevision} {
		status, ct, body := postRaw(t, url, "", rev, `{"jsonrpc":"2.0","id":"x-7","method":"bogus/method","params":{}}`)
		var a rpcAnswer
		if status != 200 || !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &a) != nil || a.Error == nil || a.Error.Code != -32601 || string(a.ID) != `"x-7"` {
			t.Errorf("revision %q: unknown call: %d %s %s, want 200 application/json -32601 with id \"x-7\"", rev, status, ct, body)
		} else if !strings.Contains(a.Error.Message, `"bogus/method"`) {
			t.Errorf("the error does not name the method: %s", a.Error.Message)
		}
		if status, _, body := postRaw(t, url, "", rev, `{"jsonrpc":"2.0","method":"notifications/bogus"}`); status != http.StatusAccepted {
			t.Errorf("revision %q: unknown notification: %d %s, want 202", rev, status, body)
		}
	}

	// In a session opened at 2025-03-26, the revision with batches.
	status, sid, body := initializeAt(t, url, "2025-03-26")
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	postRaw(t, url, sid, "2025-03-26", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	status, ct, body := postRaw(t, url, sid, "2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"tasks/list"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/bogus"},{"jsonrpc":"2.0","id":3,"method":"bogus/method"}]`)
	var answers []rpcAnswer
	if status != 200 || !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &answers) != nil {
		t.Fatalf("batch: %d %s %s", status, ct, body)
	}
	got := map[string]int64{}
	for _, a := range answers {
		if a.Error != nil {
			got[string(a.ID)] = a.Error.Code
		} else {
			got[string(a.ID)] = 0
		}
	}
	if want := map[string]int64{"1": -32601, "2": 0, "3": -32601}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batch answers %v (%s), want %v", got, body, want)
	}
	// Only unknown methods in a batch.
	status, _, body = postRaw(t, url, sid, "2025-03-26", `[{"jsonrpc":"2.0","id":4,"method":"tasks/list"},{"jsonrpc":"2.0","method":"notifications/bogus"}]`)
	if status != 200 || !strings.Contains(body, `"id":4`) || !strings.Contains(body, "-32601") || !strings.HasPrefix(body, "[") {
		t.Errorf("batch of unknown methods: %d %s", status, body)
	}
	// The session is still usable.
	if status, _, body := postRaw(t, url, sid, "2025-03-26", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); status != 200 || !strings.Contains(body, "load_skill") {
		t.Errorf("tools/list after: %d %s", status, body)
	}
	// An unknown session is the SDK's 404 first (the client must start a
	// new one), not -32601.
	if status, _, body := postRaw(t, url, "no-such-session", legacyRevision, `{"jsonrpc":"2.0","id":6,"method":"bogus/method"}`); status != http.StatusNotFound {
		t.Errorf("unknown session: %d %s, want 404", status, body)
	}
	// A body over MaxRequestBytes.
	big := `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", MaxRequestBytes) + `"}}`
	if status, _, body := postRaw(t, url, sid, legacyRevision, big); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "too_large") {
		t.Errorf("oversized body: %d %.200s, want 413 too_large", status, body)
	}
}

// initializeAt opens a session at a revision with one raw initialize.
func initializeAt(t testing.TB, url, revision string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + revision + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := httpClient("coder").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestHTTPKnownMethodsReachSDK: every standard method in knownMethods is
// one the SDK handles (it refuses to register a custom method of that
// name), and loadout's custom ones answer over HTTP.
func TestHTTPKnownMethodsReachSDK(t *testing.T) {
	custom := map[string]bool{"skills/list": true, "skills/get": true, "resources/directory/read": true}
	c := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	for m := range knownMethods {
		err := mcp.AddSendingCustomMethod[*ListSkillsParams, *ListSkillsResult](c, m)
		if custom[m] != (err == nil) {
			t.Errorf("%s: standard in the SDK = %v, in knownMethods = %v", m, err != nil, !custom[m])
		}
	}
}

// TestHTTPModernRevisionStateful: the Go client at its newest revision,
// 2026-07-28 (SEP-2575, no sessions), is served by the default stateful
// handler too: it negotiates 2026-07-28 (not a fallback to 2025-11-25),
// calls tools and the skills extension's methods, and gets list_changed.
func TestHTTPModernRevisionStateful(t *testing.T) {
	f := newFixture(t)
	pool := NewSessions(0, 0, quiet)
	mux := http.NewServeMux()
	mux.Handle("/mcp", HTTPHandler(f.svc, Options{Logger: quiet, Sessions: pool}))
	mux.Handle("/agents/coder/mcp", HTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, Sessions: pool}))
	srv := httptest.NewServer(testAuth(mux))
	t.Cleanup(srv.Close) // after the client's Close (cleanups run last first)
	tools := make(chan struct{}, 10)
	cs, err := connectHTTPAt(t, srv.URL+"/agents/coder/mcp", "coder", "2026-07-28", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	if res := callTool(t, cs, "load_skill", map[string]any{"name": "beta"}); res.IsError {
		t.Fatal(text(res))
	}
	if got := listSkills(t, cs, ""); len(got.Skills) != 3 {
		t.Errorf("skills/list: %d skills", len(got.Skills))
	}
	if _, err := mcp.CallCustomMethod[*GetSkillParams, *GetSkillResult](context.Background(), cs, "skills/get", &GetSkillParams{URI: "skill://beta/SKILL.md"}); err != nil {
		t.Errorf("skills/get: %v", err)
	}
	// Raw: discover at 2026-07-28 offers it; a _meta revision of
	// 2026-07-28 with another header (or none) is the stateless
	// handler's header mismatch (-32020), not a stateful refusal.
	url := srv.URL + "/agents/coder/mcp"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if status, _, body := postRaw(t, url, "", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`, "Mcp-Method", "server/discover"); status != 200 || !strings.Contains(body, `"2026-07-28"`) {
		t.Errorf("server/discover at 2026-07-28: %d %s", status, body)
	}
	for _, header := range []string{"", "2025-06-18"} {
		status, _, body := postRaw(t, url, "", header, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`, "Mcp-Method", "tools/list")
		if status != 400 || !strings.Contains(body, "-32020") {
			t.Errorf("_meta 2026-07-28 with header %q: %d %s, want 400 -32020", header, status, body)
		}
	}
	// Scopes hold: the coder token cannot use the global endpoint.
	if _, err := connectHTTPAt(t, srv.URL+"/mcp", "coder", "2026-07-28", nil); err == nil {
		t.Error("coder connected to the global catalog at 2026-07-28")
	}
	time.Sleep(100 * time.Millisecond) // let the client open subscriptions/listen
	writeSkill(t, f.rootA, "epsilon", "Added while serving.", "", nil)
	f.svc.Reload(context.Background(), "test")
	select {
	case <-tools:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools list_changed at 2026-07-28")
	}
	// No session was kept for it.
	if open, _, _ := pool.Stats(); open != 0 {
		t.Errorf("%d sessions held for a sessionless revision", open)
	}
}
