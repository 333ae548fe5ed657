package mcpserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/service"
)

// tokenAuth gives each request the token id of its X-Test-Token header,
// with agent:coder.
func tokenAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := service.Principal{TokenID: r.Header.Get("X-Test-Token"), Scopes: []string{"agent:coder"}}
		next.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
	})
}

func tokenSessionServer(t *testing.T, max, perToken int) (*httptest.Server, *server, *Sessions) {
	t.Helper()
	f := newFixture(t)
	pool := NewSessions(max, time.Hour, quiet).PerToken(perToken)
	s, h := newHTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, Sessions: pool})
	srv := httptest.NewServer(tokenAuth(h))
	t.Cleanup(srv.Close)
	return srv, s, pool
}

// initAs opens a session with one initialize as token tok; it returns the
// status and the session id.
func initAs(t *testing.T, url, tok string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Token", tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Mcp-Session-Id")
}

// pingAs reports whether session id still answers token tok.
func pingAs(t *testing.T, url, tok, id string) bool {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Test-Token", tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == 200
}

// TestSessionsPerTokenNoCrossEviction: one token
// opening session after session replaces only its own, at its bound (not
// before); at the global bound a token with no session of its own is
// refused, and no other token's session is closed.
func TestSessionsPerTokenNoCrossEviction(t *testing.T) {
	srv, s, pool := tokenSessionServer(t, 5, 2)
	_, ops := initAs(t, srv.URL, "ops")
	_, c1 := initAs(t, srv.URL, "coder")
	_, c2 := initAs(t, srv.URL, "coder")
	if !pingAs(t, srv.URL, "coder", c1) || !pingAs(t, srv.URL, "coder", c2) {
		t.Fatal("a session was closed at exactly the token's bound")
	}
	for i := range 200 {
		if code, id := initAs(t, srv.URL, "coder"); code != 200 || id == "" {
			t.Fatalf("initialize %d: %d", i, code)
		}
	}
	if !pingAs(t, srv.URL, "ops", ops) {
		t.Fatal("one token's initialize calls closed another token's session")
	}
	if pingAs(t, srv.URL, "coder", c1) {
		t.Error("the token's own session idle the longest was kept past its bound")
	}
	if open, evicted, _ := pool.Stats(); open != 3 || evicted != 200 {
		t.Errorf("open %d, evicted %d; want 3 and 200", open, evicted)
	}
	// Global bound: ops 1, coder 2, dev 2 = 5.
	_, d1 := initAs(t, srv.URL, "dev")
	_, d2 := initAs(t, srv.URL, "dev")
	if code, _ := initAs(t, srv.URL, "late"); code != http.StatusServiceUnavailable {
		t.Errorf("a token with no session past the global bound: %d, want 503", code)
	}
	for tok, id := range map[string]string{"ops": ops, "dev": d1} {
		if !pingAs(t, srv.URL, tok, id) {
			t.Errorf("a refused initialize closed %s's session", tok)
		}
	}
	// ops is under its own bound: at the global one it replaces its own.
	if code, _ := initAs(t, srv.URL, "ops"); code != 200 {
		t.Errorf("ops with an idle session of its own at the global bound: %d", code)
	}
	if pingAs(t, srv.URL, "ops", ops) || !pingAs(t, srv.URL, "dev", d2) {
		t.Error("at the global bound, ops's new session did not replace its own old one alone")
	}
	eventually(t, func() bool { return sdkSessions(s) == 5 })
}

// TestSessionsParallelInitialize: initialize requests in flight at once
// count against the bounds, so together they cannot pass them: 40
// tokens at once against a bound of 3 open exactly 3 sessions.
func TestSessionsParallelInitialize(t *testing.T) {
	srv, s, pool := tokenSessionServer(t, 3, 3)
	const n = 40
	var wg sync.WaitGroup
	codes := make(chan int, n)
	start := make(chan struct{})
	// Hold every admitted request before its session opens until the
	// others have been answered (or 3 s have passed): all are in flight
	// at once.
	gate := make(chan struct{})
	pool.reserved = func() { <-gate }
	var refusedSoFar atomic.Int64
	go func() {
		for end := time.Now().Add(3 * time.Second); refusedSoFar.Load() < n-3 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		close(gate)
	}()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, _ := initAs(t, srv.URL, fmt.Sprint("tok-", i))
			if code != 200 {
				refusedSoFar.Add(1)
			}
			codes <- code
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	ok, refused := 0, 0
	for c := range codes {
		switch c {
		case 200:
			ok++
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Errorf("initialize: %d", c)
		}
	}
	if ok != 3 || refused != n-3 {
		t.Errorf("%d opened and %d refused, want 3 and %d", ok, refused, n-3)
	}
	if open, evicted, _ := pool.Stats(); open != 3 || evicted != 0 {
		t.Errorf("open %d, evicted %d; want 3 and 0", open, evicted)
	}
	if got := sdkSessions(s); got > 3 {
		t.Errorf("the SDK holds %d sessions, over the bound of 3", got)
	}
}

// TestSessionsPerTokenBound: PerToken at 0 and below is the default, at
// 1 it is 1, and never more than the global bound; sessions without a
// token have only the global one.
func TestSessionsPerTokenBound(t *testing.T) {
	for n, want := range map[int]int{-1: min(DefaultMaxSessionsPerToken, 100), 0: min(DefaultMaxSessionsPerToken, 100), 1: 1, 100: 100, 101: 100} {
		p := NewSessions(100, time.Hour, quiet).PerToken(n)
		if got := p.limitFor("tok"); got != want {
			t.Errorf("PerToken(%d): a token's bound is %d, want %d", n, got, want)
		}
		if got := p.limitFor(""); got != 100 {
			t.Errorf("PerToken(%d): the bound without a token is %d, want 100", n, got)
		}
	}
}

// TestSessionsRefusalNamesTheBound: a refusal at the global bound names
// --mcp-sessions and the server's bound, not the per-token switch.
func TestSessionsRefusalNamesTheBound(t *testing.T) {
	srv, _, _ := tokenSessionServer(t, 1, 1)
	if code, _ := initAs(t, srv.URL, "ops"); code != 200 {
		t.Fatalf("first session: %d", code)
	}
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Token", "late")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "the server holds its most MCP sessions (1)") || strings.Contains(string(b), "per-token") {
		t.Errorf("refused at the global bound: %d %s", res.StatusCode, b)
	}
}
