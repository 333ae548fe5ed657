package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// sessionServer serves agent coder over HTTP with a session bound of its
// own, and returns the server to count the SDK's sessions.
func sessionServer(t testing.TB, svc *service.Service, max int, idle time.Duration) (*httptest.Server, *server, *Sessions) {
	t.Helper()
	pool := NewSessions(max, idle, quiet)
	s, h := newHTTPHandler(svc, Options{Agent: "coder", Logger: quiet, Sessions: pool})
	srv := httptest.NewServer(testAuth(h))
	t.Cleanup(srv.Close)
	return srv, s, pool
}

func sdkSessions(s *server) int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// initialize opens a session with one raw initialize request, as a client
// that never comes back would; it returns the status, the session id and
// the body.
func initialize(t testing.TB, url string) (int, string, string) {
	t.Helper()
	return initializeAt(t, url, "2025-06-18")
}

// idleClient connects an SDK client that keeps no GET stream, so its
// session is idle between calls.
func idleClient(t testing.TB, url string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := newClient(t, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient("coder"), DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyRevision})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestSessionCapEvictsIdle: past the cap, a new session closes the one
// idle the longest; the others keep working, and the SDK holds no more
// sessions than the cap.
func TestSessionCapEvictsIdle(t *testing.T) {
	f := newFixture(t)
	srv, s, pool := sessionServer(t, f.svc, 3, time.Hour)
	var css []*mcp.ClientSession
	for range 3 {
		cs, err := idleClient(t, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		css = append(css, cs)
	}
	// Use the first, so the second is now the one idle the longest.
	if res := callTool(t, css[0], "load_skill", map[string]any{"name": "beta"}); res.IsError {
		t.Fatal(text(res))
	}
	cs4, err := idleClient(t, srv.URL)
	if err != nil {
		t.Fatalf("a fourth session over a cap of 3 with idle sessions: %v", err)
	}
	if open, evicted, _ := pool.Stats(); open != 3 || evicted != 1 {
		t.Errorf("open %d, evicted %d; want 3 and 1", open, evicted)
	}
	// The evicted session is closed after the pool counts it.
	eventually(t, func() bool { return sdkSessions(s) == 3 })
	if _, err := css[1].CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "beta"}}); err == nil {
		t.Error("the evicted session still answers")
	}
	for _, cs := range []*mcp.ClientSession{css[0], css[2], cs4} {
		if res := callTool(t, cs, "load_skill", map[string]any{"name": "beta"}); res.IsError {
			t.Errorf("a kept session: %s", text(res))
		}
	}
}

// TestSessionCapRefusesWhenAllBusy: sessions with an open GET stream are
// busy and never evicted; a new session past the cap gets 503
// too_many_sessions, in the API's error shape.
func TestSessionCapRefusesWhenAllBusy(t *testing.T) {
	f := newFixture(t)
	srv, _, pool := sessionServer(t, f.svc, 2, time.Hour)
	for range 2 {
		if _, err := connectHTTP(t, srv.URL, "coder", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for both clients' GET streams.
	eventually(t, func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		busy := 0
		for _, e := range pool.m {
			if e.busy > 0 {
				busy++
			}
		}
		return busy == 2
	})
	status, id, body := initialize(t, srv.URL)
	if status != http.StatusServiceUnavailable || id != "" {
		t.Fatalf("a third session over a cap of 2, both busy: %d (session %q) %s", status, id, body)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != CodeTooManySessions || !strings.Contains(e.Error.Message, "--mcp-sessions") {
		t.Errorf("refusal body: %s", body)
	}
	if _, err := idleClient(t, srv.URL); err == nil {
		t.Error("an SDK client connected past the cap")
	}
	if open, evicted, _ := pool.Stats(); open != 2 || evicted != 0 {
		t.Errorf("open %d, evicted %d; want 2 and 0", open, evicted)
	}
}

// TestSessionsStayBounded is the attack of the report: sessions opened
// with one initialize each and never used again. The SDK's session count
// and the heap stay bounded by the cap.
func TestSessionsStayBounded(t *testing.T) {
	f := newFixture(t)
	const max = 20
	srv, s, pool := sessionServer(t, f.svc, max, time.Hour)
	for i := range 2 * max {
		if status, id, body := initialize(t, srv.URL); status != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: %d %s", i, status, body)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const n = 2000
	for i := range n {
		if status, _, body := initialize(t, srv.URL); status != http.StatusOK {
			t.Fatalf("initialize %d: %d %s", i, status, body)
		}
	}
	after := heap()
	t.Logf("heap %d -> %d (%+d)", before, after, int64(after)-int64(before))
	eventually(t, func() bool { return sdkSessions(s) <= max })
	if open, evicted, _ := pool.Stats(); open != max || evicted != n+max {
		t.Errorf("open %d, evicted %d; want %d and %d", open, evicted, max, n+max)
	}
	// Unbounded, 2,000 sessions hold about 17 MB.
	if after > before && after-before > 4<<20 {
		t.Errorf("the heap grew by %d bytes over %d initialize-only sessions", after-before, n)
	}
}

// TestSessionIdleTimeout: a session without requests for the idle timeout
// is closed; one with a GET stream open is not.
func TestSessionIdleTimeout(t *testing.T) {
	f := newFixture(t)
	srv, s, pool := sessionServer(t, f.svc, 10, 300*time.Millisecond)
	streaming, err := connectHTTP(t, srv.URL, "coder", nil)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := idleClient(t, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		_, _, expired := pool.Stats()
		return expired >= 1
	})
	if open, _, expired := pool.Stats(); open != 1 || expired != 1 {
		t.Errorf("open %d, expired %d; want 1 and 1", open, expired)
	}
	// The pool counts an expiry before it closes the session, and the SDK
	// lets go of a closed session on its own time.
	eventually(t, func() bool { return sdkSessions(s) == 1 })
	if _, err := idle.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "beta"}}); err == nil {
		t.Error("the idle session still answers after the timeout")
	}
	if res := callTool(t, streaming, "load_skill", map[string]any{"name": "beta"}); res.IsError {
		t.Errorf("the streaming session: %s", text(res))
	}
}

// TestSessionDeleteFreesItsPlace: a client that closes its session gives
// its place back at once.
func TestSessionDeleteFreesItsPlace(t *testing.T) {
	f := newFixture(t)
	srv, _, pool := sessionServer(t, f.svc, 5, time.Hour)
	cs, err := idleClient(t, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if open, _, _ := pool.Stats(); open != 1 {
		t.Fatalf("open %d", open)
	}
	cs.Close()
	eventually(t, func() bool { open, _, _ := pool.Stats(); return open == 0 })
}

// TestHiddenSkillsNotInEnum: a skill with disable-model-invocation is left
// out of the tools' name enum (the model must not be offered it), and the
// model-facing tools refuse it by name too, so schema and behaviour agree;
// skills/list, skills/get and resources/read still serve it to the host.
func TestHiddenSkillsNotInEnum(t *testing.T) {
	f := newFixture(t)
	writeSkill(t, f.rootA, "secret", "Only when the user asks by name.", "disable-model-invocation: true\n", nil)
	f.svc.Reload(context.Background(), "test")
	cs := connect(t, f.svc, Options{Agent: "coder"}, openPrincipal, nil)
	tools := toolSchemas(t, cs)
	for _, n := range []string{"load_skill", "use_skill", "read_skill_file"} {
		e := nameEnum(tools[n])
		if len(e) == 0 {
			t.Fatalf("%s has no enum", n)
		}
		if slices.Contains(e, any("secret")) {
			t.Errorf("%s name enum lists the hidden skill: %v", n, e)
		}
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"load_skill", map[string]any{"name": "secret"}},
		{"use_skill", map[string]any{"name": "secret"}},
		{"read_skill_file", map[string]any{"name": "secret", "path": "SKILL.md"}},
	} {
		res := callTool(t, cs, call.tool, call.args)
		if !res.IsError || !strings.Contains(text(res), "disable-model-invocation: true, so only a person can start it") {
			t.Errorf("%s of a hidden skill: error %v: %s", call.tool, res.IsError, text(res))
		}
	}
	// Each refusal leaves a receipt with its code, as the service's own do.
	rs, err := f.svc.Receipts(context.Background(), openPrincipal, store.ReceiptQuery{Agent: "coder", Skill: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		// Identical receipts of one flush share a row with a count.
		for range max(r.Count, 1) {
			got = append(got, r.Action+" "+r.Path+" "+r.Outcome+" "+r.Code)
		}
	}
	slices.Sort(got)
	want := []string{"load  refused model-invocation-disabled", "load  refused model-invocation-disabled", "read SKILL.md refused model-invocation-disabled"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("receipts of the refusals (-want +got):\n%s", diff)
	}
	res := callTool(t, cs, "search_skills", map[string]any{"query": "only when the user asks by name"})
	if strings.Contains(text(res), "secret") {
		t.Errorf("search_skills offers the hidden skill: %s", text(res))
	}
	entries, _, omitted := allSkills(t, cs)
	if !slices.ContainsFunc(entries, func(e *SkillEntry) bool { return e.URI == "skill://secret/SKILL.md" }) || len(omitted) != 0 {
		t.Errorf("skills/list should serve the hidden skill to the host: %d entries, omitted %v", len(entries), omitted)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://secret/SKILL.md"}); err != nil {
		t.Errorf("resources/read of the hidden skill: %v", err)
	}
}

func eventually(t testing.TB, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
