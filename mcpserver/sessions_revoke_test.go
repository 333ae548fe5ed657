package mcpserver

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
)

// revokeServer serves agent coder over HTTP from a service with a real
// SQLite token store; requests carry the token id of X-Test-Token (as the
// auth middleware would set it). It returns two live token ids.
func revokeServer(t *testing.T) (srv *httptest.Server, svc *service.Service, pool *Sessions, a, b string) {
	t.Helper()
	f := newFixture(t)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: f.rootA}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc = service.New(cat, service.Options{Logger: quiet, Store: st, Server: st, RequireTokens: true})
	t.Cleanup(func() { svc.Close() })
	admin := service.Principal{Open: true}
	for _, id := range []*string{&a, &b} {
		_, tok, err := svc.CreateToken(context.Background(), admin, "coder", []string{"agent:coder"})
		if err != nil {
			t.Fatal(err)
		}
		*id = tok.ID
	}
	pool = NewSessions(10, time.Hour, quiet)
	_, h := newHTTPHandler(svc, Options{Agent: "coder", Logger: quiet, Sessions: pool})
	srv = httptest.NewServer(tokenAuth(h))
	t.Cleanup(srv.Close)
	return srv, svc, pool, a, b
}

// openStream sends req and returns a channel closed when its response
// body ends (the server ended the stream), after checking it answered 200.
func openStream(t *testing.T, req *http.Request) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d, want 200", req.Method, req.Header.Get("Mcp-Method"), res.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
		}
	}()
	return ended
}

func endsWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestRevokedTokenEndsItsSessions: revoking a token closes its MCP
// sessions, busy ones included (an open GET stream ends, and the session
// answers 404 after), within a second; another token's session and
// stream go on.
func TestRevokedTokenEndsItsSessions(t *testing.T) {
	srv, svc, pool, a, b := revokeServer(t)
	_, sa := initAs(t, srv.URL, a)
	_, sb := initAs(t, srv.URL, b)
	if sa == "" || sb == "" {
		t.Fatal("no session opened")
	}
	get := func(tok, sid string) <-chan struct{} {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("X-Test-Token", tok)
		return openStream(t, req)
	}
	streamA, streamB := get(a, sa), get(b, sb)
	if err := svc.RevokeToken(context.Background(), service.Principal{Open: true}, a); err != nil {
		t.Fatal(err)
	}
	if !endsWithin(streamA, 2*time.Second) {
		t.Fatal("the revoked token's GET stream is still open 2 s after the revocation")
	}
	eventually(t, func() bool { return !pingAs(t, srv.URL, a, sa) })
	if endsWithin(streamB, 500*time.Millisecond) {
		t.Error("another token's GET stream ended")
	}
	if !pingAs(t, srv.URL, b, sb) {
		t.Error("another token's session was closed")
	}
	pool.mu.Lock()
	revoked, held := pool.revoked, pool.held[a]
	pool.mu.Unlock()
	if revoked != 1 || held != 0 {
		t.Errorf("revoked %d sessions, the token holds %d places; want 1 and 0", revoked, held)
	}
}

// listenAs opens a subscriptions/listen stream (revision 2026-07-28, no
// session) as token tok.
func listenAs(t *testing.T, url, tok string) <-chan struct{} {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("X-Test-Token", tok)
	return openStream(t, req)
}

// TestRevokedTokenEndsItsListenStream: a subscriptions/listen stream
// (which has no session to close) ends within 2 s of its token's
// revocation; another token's stays open.
func TestRevokedTokenEndsItsListenStream(t *testing.T) {
	srv, svc, _, a, b := revokeServer(t)
	la, lb := listenAs(t, srv.URL, a), listenAs(t, srv.URL, b)
	if endsWithin(la, 300*time.Millisecond) {
		t.Fatal("the listen stream ended before any revocation")
	}
	if err := svc.RevokeToken(context.Background(), service.Principal{Open: true}, a); err != nil {
		t.Fatal(err)
	}
	if !endsWithin(la, 2*time.Second) {
		t.Fatal("the revoked token's subscriptions/listen stream is still open 2 s after the revocation")
	}
	if endsWithin(lb, 500*time.Millisecond) {
		t.Error("another token's subscriptions/listen stream ended")
	}
}

// TestRevokedWhileOpeningASession: a token revoked while its initialize is
// in flight (after the request was authenticated, before the session
// exists) gets its answer, as any request that is not a stream does, and
// the session it opened is closed at once after: it never outlives the
// revocation.
func TestRevokedWhileOpeningASession(t *testing.T) {
	srv, svc, pool, a, b := revokeServer(t)
	var once sync.Once
	pool.reserved = func() {
		once.Do(func() {
			if err := svc.RevokeToken(context.Background(), service.Principal{Open: true}, a); err != nil {
				t.Error(err)
			}
			time.Sleep(300 * time.Millisecond) // the revocation is seen meanwhile
		})
	}
	status, sid := initAs(t, srv.URL, a)
	if status != 200 || sid == "" {
		t.Fatalf("initialize in flight at the revocation: %d, session %q; want 200 and a session", status, sid)
	}
	eventually(t, func() bool { return !pingAs(t, srv.URL, a, sid) })
	if _, sb := initAs(t, srv.URL, b); sb == "" || !pingAs(t, srv.URL, b, sb) {
		t.Error("another token cannot open a session")
	}
}
