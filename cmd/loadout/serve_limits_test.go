package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/mcpserver"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// inProcess is serverHandler over a real catalog (two agents, one folder)
// and a real SQLite store with tokens.
type inProcess struct {
	svc                 *service.Service
	h                   http.Handler
	agents              *agentMounts
	admin, coder, other string
}

func newInProcess(t *testing.T, requireTokens bool) *inProcess {
	t.Helper()
	root := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(root, name), 0o755))
		testutil.Write(t, filepath.Join(root, name, "SKILL.md"), "---\nname: "+name+"\ndescription: The "+name+" skill.\n---\nBody of "+name+".\n")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}},
		{AgentID: "writer", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"beta"}}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var srv store.Server = st
	svc := service.New(cat, service.Options{Store: st, Server: srv, RequireTokens: requireTokens, Logger: quietLog})
	t.Cleanup(func() { svc.Close() })
	p := &inProcess{svc: svc}
	for _, x := range []struct {
		dst   *string
		scope string
	}{{&p.admin, "admin"}, {&p.coder, "agent:coder"}, {&p.other, "agent:writer"}} {
		if *x.dst, _, err = srv.CreateToken(context.Background(), x.scope, []string{x.scope}); err != nil {
			t.Fatal(err)
		}
	}
	p.h, p.agents, err = serverHandler(svc, quietLog, handlerOptions{
		guard:    httpapi.GuardOptions{Listen: "127.0.0.1:7777"},
		timeouts: httpapi.TimeoutOptions{Read: time.Minute, Write: time.Minute},
		sessions: mcpserver.NewSessions(100, time.Hour, quietLog),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *inProcess) do(method, path, token string, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Host = "localhost:7777"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, req)
	return rec
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestUnknownAgentsHoldNothing: requests for 10,000 agent ids that are not
// configured are refused before anything is made for them: the handlers
// kept stay those of the configured agents, and the heap does not grow.
// Before, each id got an MCP server and an index handler, kept for good
// (30,000 ids: +350 MB).
func TestUnknownAgentsHoldNothing(t *testing.T) {
	for _, tokens := range []bool{false, true} {
		t.Run(fmt.Sprintf("tokens=%v", tokens), func(t *testing.T) {
			p := newInProcess(t, tokens)
			tok, wantStatus := "", http.StatusNotFound // open loopback: admin
			if tokens {
				tok, wantStatus = p.coder, http.StatusForbidden
			}
			if n := p.agents.len(); n != 2 {
				t.Fatalf("%d agents with handlers at start, want 2", n)
			}
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			probe := func(i int) {
				id := fmt.Sprintf("ghost-%d", i)
				for _, c := range []struct{ method, path, body string }{
					{"POST", "/agents/" + id + "/mcp", initBody},
					{"GET", "/agents/" + id + "/.well-known/agent-skills/index.json", ""},
				} {
					rec := p.do(c.method, c.path, tok, c.body)
					if rec.Code != wantStatus {
						t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, rec.Code, rec.Body, wantStatus)
					}
					var e struct{ Error struct{ Code string } }
					if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
						t.Fatalf("%s %s: not the JSON error envelope: %s", c.method, c.path, rec.Body)
					}
				}
			}
			for i := range 100 { // warm up pools and caches
				probe(i)
			}
			before := heap()
			const n = 10000
			for i := range n {
				probe(i)
			}
			after := heap()
			if got := p.agents.len(); got != 2 {
				t.Errorf("%d agents with handlers after %d unknown ids, want 2", got, n)
			}
			if after > before && after-before > 1<<20 {
				t.Errorf("the heap grew by %d bytes over %d unknown agent ids", after-before, n)
			}
			// The configured agents still work.
			if rec := p.do("POST", "/agents/coder/mcp", tok, initBody); rec.Code != 200 {
				t.Errorf("coder's MCP: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// mounts are what serverHandler serves beside the API's route table, with
// the scope each needs. TestMountAccess checks them like the table.
var mounts = []struct{ method, path, scope, body string }{
	{"POST", "/mcp", "admin", initBody},
	{"POST", "/agents/coder/mcp", "agent", initBody},
	{"GET", "/.well-known/agent-skills/index.json", "admin", ""},
	{"GET", "/.well-known/skills/index.json", "admin", ""},
	{"GET", "/agents/coder/.well-known/agent-skills/index.json", "agent", ""},
	{"GET", "/agents/coder/.well-known/skills/alpha/SKILL.md", "agent", ""},
}

// TestMountAccess: the MCP endpoints and well-known indexes answer each
// caller as their scope says, and refuse in the API's error envelope.
func TestMountAccess(t *testing.T) {
	p := newInProcess(t, true)
	callers := []struct{ name, token string }{
		{"no token", ""}, {"wrong token", "nope"}, {"agent token for this agent", p.coder},
		{"agent token for another agent", p.other}, {"admin token", p.admin},
	}
	wants := map[string][5]int{
		"agent": {401, 401, 200, 403, 200},
		"admin": {401, 401, 403, 403, 200},
	}
	for _, m := range mounts {
		for i, c := range callers {
			rec := p.do(m.method, m.path, c.token, m.body)
			if w := wants[m.scope][i]; rec.Code != w {
				t.Errorf("%s %s as %s: %d, want %d: %s", m.method, m.path, c.name, rec.Code, w, rec.Body)
				continue
			}
			if rec.Code >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
					t.Errorf("%s %s as %s: not the error envelope: %s", m.method, m.path, c.name, rec.Body)
				}
			}
		}
	}
}

// TestHostCheckedEverywhere: a foreign Host is refused the same way (403
// host_not_allowed, the API's envelope) on the API, MCP, the well-known
// indexes and /healthz; an allowed proxy name passes everywhere, MCP
// included (the SDK's own check, which allows only localhost, is off).
func TestHostCheckedEverywhere(t *testing.T) {
	p := newInProcess(t, false)
	h, _, err := serverHandler(p.svc, quietLog, handlerOptions{
		guard:    httpapi.GuardOptions{Listen: "127.0.0.1:7777", AllowedHosts: []string{"skills.example.com"}},
		sessions: mcpserver.NewSessions(100, time.Hour, quietLog),
	})
	if err != nil {
		t.Fatal(err)
	}
	paths := []struct{ method, path, body string }{
		{"GET", "/healthz", ""}, {"GET", "/v1/skills", ""}, {"POST", "/mcp", initBody}, {"POST", "/agents/coder/mcp", initBody},
		{"GET", "/.well-known/agent-skills/index.json", ""}, {"GET", "/agents/coder/.well-known/skills/index.json", ""},
	}
	for _, host := range []string{"evil.example:7777", "skills.example.com", "localhost:7777"} {
		for _, c := range paths {
			var rd io.Reader
			if c.body != "" {
				rd = strings.NewReader(c.body)
			}
			req := httptest.NewRequest(c.method, c.path, rd)
			req.Host = host
			// As the server's own connections would: a loopback local address.
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, loopbackAddr{}))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if host == "evil.example:7777" {
				var e struct{ Error struct{ Code string } }
				json.Unmarshal(rec.Body.Bytes(), &e)
				if rec.Code != 403 || e.Error.Code != httpapi.CodeHostNotAllowed {
					t.Errorf("%s %s with Host %s: %d %s, want 403 host_not_allowed", c.method, c.path, host, rec.Code, rec.Body)
				}
			} else if rec.Code != 200 {
				t.Errorf("%s %s with Host %s: %d %s", c.method, c.path, host, rec.Code, rec.Body)
			}
		}
	}
}

type loopbackAddr struct{}

func (loopbackAddr) Network() string { return "tcp" }
func (loopbackAddr) String() string  { return "127.0.0.1:7777" }

// rssKB reads a process's resident set size (VmRSS) and its peak (VmHWM).
func rssKB(t *testing.T, pid int) (rss, hwm int) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var v int
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &v); err == nil {
			rss = v
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &v); err == nil {
			hwm = v
		}
	}
	return rss, hwm
}

// get asks for a page on a new connection from the loopback address src.
func getFrom(src, url string, host string) (int, string, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

// TestServeResourceLimits drives the real binary the way the report did,
// at a smaller scale with small configured limits: unknown agent ids,
// initialize-only MCP sessions, idle connections, a slow body, and Host
// headers. /healthz keeps answering and the server's memory stays bounded.
func TestServeResourceLimits(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", "alpha"), 0o755))
	testutil.Write(t, filepath.Join(dir, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A.\n---\nBody.\n")
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Must(t, os.WriteFile(cfg, []byte(`{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}],
  "storeLimits": {"maxFileSize": 65536},
  "server": {"allowedHosts": ["skills.example.com"], "readTimeout": "1s", "mcpSessions": 50}}`), 0o644))
	srv := startServe(t, "--config", cfg, "--db", filepath.Join(dir, "x.db"), "--no-watch",
		"--max-conns", "64", "--max-conns-per-ip", "32", "--read-header-timeout", "1s")
	base := srv.base
	pid := srv.cmd.Process.Pid
	healthz := func(src string) bool {
		code, _, err := getFrom(src, base+"/healthz", "")
		return err == nil && code == 200
	}
	if !healthz("127.0.0.1") {
		t.Fatal("healthz")
	}
	rss0, _ := rssKB(t, pid)

	// Host: refused on the API and MCP alike, the config's name allowed.
	for _, path := range []string{"/v1/agents", "/mcp", "/.well-known/agent-skills/index.json"} {
		code, body, err := getFrom("127.0.0.1", base+path, "evil.example")
		if err != nil || code != 403 || !strings.Contains(body, `"host_not_allowed"`) {
			t.Errorf("%s with a foreign Host: %d %s %v", path, code, body, err)
		}
	}
	mcpPost := func(path, host string) (int, string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(initBody))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := mcpPost("/agents/coder/mcp", "skills.example.com"); code != 200 {
		t.Errorf("MCP through the allowed proxy name: %d %s", code, body)
	}

	// Unknown agent ids and initialize-only sessions.
	for i := range 2000 {
		if code, _ := mcpPost(fmt.Sprintf("/agents/ghost-%d/mcp", i), ""); code != 404 {
			t.Fatalf("unknown agent: %d", code)
		}
		if code, _, err := getFrom("127.0.0.1", fmt.Sprintf("%s/agents/ghost-%d/.well-known/agent-skills/index.json", base, i), ""); err != nil || code != 404 {
			t.Fatalf("unknown agent's index: %d %v", code, err)
		}
	}
	for i := range 500 {
		if code, body := mcpPost("/agents/coder/mcp", ""); code != 200 {
			t.Fatalf("initialize %d: %d %s", i, code, body)
		}
	}
	if !strings.Contains(srv.log(), "too many sessions") {
		t.Errorf("no eviction was logged:\n%s", srv.log())
	}

	// Idle connections past the per-address bound: another address is
	// served meanwhile, and once the header timeout cuts them, so is this one.
	var idle []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	if !healthz("127.0.0.2") {
		t.Error("healthz from another address while one held its connections")
	}
	eventually(t, 10*time.Second, "healthz from the address whose idle connections were cut", func() bool { return healthz("127.0.0.1") })
	if !strings.Contains(srv.log(), "maxConnsPerIP") {
		t.Errorf("refused connections were not logged:\n%s", srv.log())
	}

	// A body that stops arriving is cut after the read timeout (1s).
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/skills HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 408 {
		t.Errorf("slow body: %v %v", res, err)
	}

	// The API's body caps follow the config's store limits (they were the
	// defaults whatever the config said): a file PUT over maxFileSize
	// (64 KiB here, 1 MiB by default) is refused while it streams.
	doc := `{"schemaVersion": 2, "skill": {"content": "---\nname: big\ndescription: B.\n---\nb\n"}}`
	if code, body := httpDo(t, "POST", base+"/v1/skills", "", strings.NewReader(doc), "Content-Type", "application/json"); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := httpDo(t, "PUT", base+"/v1/skills/big/files/data.bin", "", strings.NewReader(strings.Repeat("x", 60<<10)), "If-Match", "*"); code != 200 {
		t.Errorf("a 60 KiB file under storeLimits.maxFileSize 64 KiB: %d %s", code, body)
	}
	if code, body := httpDo(t, "PUT", base+"/v1/skills/big/files/data.bin", "", strings.NewReader(strings.Repeat("x", 100<<10)), "If-Match", "*"); code != 413 {
		t.Errorf("a 100 KiB file over storeLimits.maxFileSize 64 KiB: %d %s", code, body)
	}

	if !healthz("127.0.0.1") {
		t.Error("healthz at the end")
	}
	rss1, hwm := rssKB(t, pid)
	t.Logf("RSS %d kB at start, %d kB at the end, peak %d kB", rss0, rss1, hwm)
	if rss1-rss0 > 40<<10 {
		t.Errorf("RSS grew by %d kB", rss1-rss0)
	}
}

// TestMCPStreamOutlivesTimeouts: with read and write timeouts far shorter
// than a session, an MCP client's GET stream stays open and still carries
// a list-changed notification, and calls keep working: the timeouts bound
// stalls, not the life of a request.
func TestMCPStreamOutlivesTimeouts(t *testing.T) {
	p := newInProcess(t, false)
	const d = 200 * time.Millisecond
	h, _, err := serverHandler(p.svc, quietLog, handlerOptions{
		guard:    httpapi.GuardOptions{Listen: "127.0.0.1:0"},
		timeouts: httpapi.TimeoutOptions{Read: d, Write: d},
		sessions: mcpserver.NewSessions(10, time.Hour, quietLog),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	changed := make(chan struct{}, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/agents/coder/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	time.Sleep(10 * d)
	// A new skill: a reload that changes none of the agent's skills sends
	// its sessions nothing.
	root := p.svc.Catalog().Roots()[0]
	testutil.Must(t, os.MkdirAll(filepath.Join(root, "gamma"), 0o755))
	testutil.Write(t, filepath.Join(root, "gamma", "SKILL.md"), "---\nname: gamma\ndescription: The gamma skill.\n---\nBody of gamma.\n")
	p.svc.Reload(context.Background(), "test")
	select {
	case <-changed:
	case <-testutil.After(t):
		t.Fatal("no list-changed notification on a stream older than the timeouts")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "alpha"}})
	if err != nil || res.IsError {
		t.Fatalf("a call after the wait: %v %+v", err, res)
	}
}
