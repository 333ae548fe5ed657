package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// TestHalfOpenFlood: one unauthenticated client on
// loopback, where every client has the same address, keeps 520
// connections open without a complete request (nothing, or half a request
// line), reopening each one the server closes. A legitimate client on the
// same address asks /healthz on a new connection every 20 ms meanwhile:
// at least 99% of its requests must succeed. Before the fix the flood
// held every place of the 512 per address until the header timeout, and
// /healthz failed 145 times out of 148.
func TestHalfOpenFlood(t *testing.T) {
	s := Start(t, Options{})
	addr := strings.TrimPrefix(s.Base, "http://")
	const attackers = 520
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				opened.Add(1)
				if i%2 == 1 {
					c.Write([]byte("GET /healthz HT")) // half a request line
				}
				// Hold it until the server lets go of it, or a while.
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				c.Read(buf)
				c.Close()
			}
		}()
	}
	time.Sleep(time.Second) // the flood fills its places
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok, total := 0, 0
	var fails []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		total++
		resp, err := client.Get(s.Base + "/healthz")
		if err != nil {
			fails = append(fails, err.Error())
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			ok++
		} else {
			fails = append(fails, resp.Status)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("legitimate /healthz: %d of %d succeeded; the flood opened %d connections; server CPU %.1f s, peak RSS %.0f MB",
		ok, total, opened.Load(), s.CPUSeconds(t), s.PeakRSSMB(t))
	if total < 100 {
		t.Fatalf("only %d requests in 10 s: the client was held up", total)
	}
	if ok*100 < total*99 {
		t.Errorf("%d of %d /healthz requests succeeded under the half-open flood, want at least 99%%; failures: %.400q", ok, total, fails)
	}
	if opened.Load() < attackers {
		t.Errorf("the flood opened only %d connections", opened.Load())
	}
	if rss := s.PeakRSSMB(t); rss > 200 {
		t.Errorf("peak RSS %.0f MB under the flood, want under 200", rss)
	}
	s.Healthy(t)
}

// twoAgents serves agents coder and ops over the same skills.
const twoAgents = `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}]}, {"agentId": "ops", "skills": [{"root": "skills"}]}]%s}`

// tokenID is the id of the one token with scope alone, from
// `loadout token list --json`.
func tokenID(t *testing.T, s *Server, scope string) string {
	t.Helper()
	out, errOut, code := s.CLI(t, "token", "list", "--json", "--db", s.DB)
	if code != 0 {
		t.Fatalf("token list: %d %s", code, errOut)
	}
	var list struct {
		Tokens []struct {
			ID     string   `json:"id"`
			Scopes []string `json:"scopes"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("token list --json: %v\n%s", err, out)
	}
	for _, tk := range list.Tokens {
		if len(tk.Scopes) == 1 && tk.Scopes[0] == scope {
			return tk.ID
		}
	}
	t.Fatalf("no token with scope %s in %s", scope, out)
	return ""
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`)

// signIn signs in to the UI with a token's secret; it returns the status
// of the sign-in and the session cookie's value ("" if none), and the
// page's error when it was refused.
func signIn(t *testing.T, s *Server, secret string) (int, string, string) {
	t.Helper()
	_, _, page := s.Do(t, "GET", "/ui/login", "", "")
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the sign-in page:\n%.500s", page)
	}
	form := url.Values{"token": {secret}, "csrf": {m[1]}, "next": {"/ui/"}}.Encode()
	code, hdr, body := s.Do(t, "POST", "/ui/login", "", form, "Content-Type", "application/x-www-form-urlencoded")
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if c.Name == "loadout_session" && c.Value != "" {
			return code, c.Value, ""
		}
	}
	return code, "", body
}

// openUIStream opens /ui/events with a session; br is nil when refused.
func openUIStream(t *testing.T, ctx context.Context, s *Server, session string) (int, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.Base+"/ui/events", nil)
	req.Header.Set("Cookie", "loadout_session="+session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/ui/events: %v", err)
	}
	if res.StatusCode != 200 {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, nil
	}
	br := bufio.NewReader(res.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("/ui/events began with %q %v", line, err)
	}
	return 200, br
}

// mcpInit opens an MCP session on path with a token; it returns the status
// and the session id.
func mcpInit(t *testing.T, s *Server, path, token string) (int, string) {
	t.Helper()
	code, hdr, _ := s.Do(t, "POST", path, token,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`,
		"Accept", "application/json, text/event-stream")
	return code, hdr.Get("Mcp-Session-Id")
}

// mcpPing reports the status of a ping on session id.
func mcpPing(t *testing.T, s *Server, path, token, id string) int {
	t.Helper()
	code, _, _ := s.Do(t, "POST", path, token, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"Accept", "application/json, text/event-stream", "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-06-18")
	return code
}

// TestTokenCannotEvictOthers, with small bounds to be
// quick: an agent:coder token signing in again and again, opening MCP
// session after MCP session and /ui/events stream after stream, ends none
// of the admin's or agent:ops's sessions and streams; past its own bounds
// only its own go or are refused; at the global UI session bound a token
// with none of its own is refused, not served by evicting another's.
func TestTokenCannotEvictOthers(t *testing.T) {
	s := Start(t, Options{Tokens: true, Config: fmt.Sprintf(twoAgents, `, "server": {"uiSessions": 4, "uiSessionsPerToken": 2}`),
		Args: []string{"--mcp-sessions", "6", "--mcp-sessions-per-token", "3"}})
	coder, ops, dev := s.Token(t, "agent:coder"), s.Token(t, "agent:ops"), s.Token(t, "agent:coder", "agent:ops")

	// UI sessions.
	_, adminSess, _ := signIn(t, s, s.Admin)
	if adminSess == "" {
		t.Fatal("the admin could not sign in")
	}
	for i := range 200 {
		if code, sess, body := signIn(t, s, coder); sess == "" {
			t.Fatalf("coder's sign-in %d: %d %.300s", i, code, body)
		}
	}
	if code, _, _ := s.Do(t, "GET", "/ui/tokens", "", "", "Cookie", "loadout_session="+adminSess); code != 200 {
		t.Errorf("200 sign-ins with an agent token ended the admin's UI session: /ui/tokens answered %d", code)
	}
	// admin 1 + coder 2 = 3 of 4: ops takes the last, then dev is refused.
	if _, sess, _ := signIn(t, s, ops); sess == "" {
		t.Fatal("ops could not sign in under the global bound")
	}
	code, sess, body := signIn(t, s, dev)
	if sess != "" || code != http.StatusServiceUnavailable || !strings.Contains(body, "most UI sessions") {
		t.Errorf("a sign-in past the global UI session bound with no session of its own: %d, session %v, want 503 naming the bound\n%.500s", code, sess != "", body)
	}
	if code, _, _ := s.Do(t, "GET", "/ui/tokens", "", "", "Cookie", "loadout_session="+adminSess); code != 200 {
		t.Errorf("a refused sign-in ended the admin's session: %d", code)
	}

	// MCP sessions: ops keeps one, coder opens 300.
	code, opsSID := mcpInit(t, s, "/agents/ops/mcp", ops)
	if code != 200 || opsSID == "" {
		t.Fatalf("ops's initialize: %d", code)
	}
	for i := range 300 {
		if code, sid := mcpInit(t, s, "/agents/coder/mcp", coder); code != 200 || sid == "" {
			t.Fatalf("coder's initialize %d: %d", i, code)
		}
	}
	if code := mcpPing(t, s, "/agents/ops/mcp", ops, opsSID); code != 200 {
		t.Errorf("300 initialize calls with agent:coder ended agent:ops's live MCP session: ping answered %d", code)
	}

	// Live streams: coder's session opens 256 (its cap is 16).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, coderSess, _ := signIn(t, s, coder)
	opened, refused := 0, 0
	for range 256 {
		switch code, _ := openUIStream(t, ctx, s, coderSess); code {
		case 200:
			opened++
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("/ui/events: %d", code)
		}
	}
	if opened != 16 || refused != 240 {
		t.Errorf("one agent session opened %d streams (%d refused), want its cap of 16", opened, refused)
	}
	if code, br := openUIStream(t, ctx, s, adminSess); code != 200 || br == nil {
		t.Errorf("the admin's /ui/events answered %d after one agent session opened 256", code)
	}
	s.Healthy(t)
}

// TestRevokedTokenStreamsEnd: an agent token's open
// streams (the UI's /ui/events, MCP's GET stream) end within a second of
// `loadout token revoke` in another process, and its MCP session is gone;
// the admin's stream goes on.
func TestRevokedTokenStreamsEnd(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Tokens: true, Config: fmt.Sprintf(twoAgents, "")})
		ops := s.Token(t, "agent:ops")
		opsID := tokenID(t, s, "agent:ops")
		_, adminSess, _ := signIn(t, s, s.Admin)
		_, opsSess, _ := signIn(t, s, ops)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, uiStream := openUIStream(t, ctx, s, opsSess)
		_, adminStream := openUIStream(t, ctx, s, adminSess)
		if uiStream == nil || adminStream == nil {
			t.Fatal("a stream was refused")
		}
		code, sid := mcpInit(t, s, "/agents/ops/mcp", ops)
		if code != 200 {
			t.Fatalf("initialize: %d", code)
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", s.Base+"/agents/ops/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+ops)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("the MCP GET stream: %v %v", res, err)
		}
		defer res.Body.Close()
		mcpStream := bufio.NewReader(res.Body)

		if _, errOut, code := s.CLI(t, "token", "revoke", "--db", s.DB, opsID); code != 0 {
			t.Fatalf("token revoke: %d %s", code, errOut)
		}
		revoked := time.Now()
		if !testutil.EndsWithin(uiStream, time.Second) {
			t.Error("the revoked token's /ui/events stream still delivers a second after the revocation")
		}
		if !testutil.EndsWithin(mcpStream, time.Second-time.Since(revoked)) {
			t.Error("the revoked token's MCP GET stream is still open a second after the revocation")
		}
		t.Logf("%s: the streams ended %v after the revocation", engine, time.Since(revoked).Round(time.Millisecond))
		if code := mcpPing(t, s, "/agents/ops/mcp", ops, sid); code != 401 {
			t.Errorf("the revoked token's MCP session: ping answered %d, want 401", code)
		}
		if testutil.EndsWithin(adminStream, 300*time.Millisecond) {
			t.Error("the admin's stream ended with the revoked token's")
		}
	})
}
