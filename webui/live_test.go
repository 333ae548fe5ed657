package webui

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// liveFixture is a service over a folder of skills (agents "ops", which
// sees deploy only, and "dev"), a hub with a cap of max streams, and a
// server of its event stream; the caller is whoever who says.
func liveFixture(t *testing.T, max int, who service.Principal) (*service.Service, string, *liveHub, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"deploy", "lint"} {
		writeTestSkill(t, dir, name, "Do "+name+".")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir, Available: []string{"deploy"}}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	u := &ui{svc: svc, log: slog.Default()}
	h := newLiveHub(svc, max, max)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.serveEvents(w, r.WithContext(service.WithPrincipal(r.Context(), who)), h, time.Hour)
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	return svc, dir, h, srv
}

func writeTestSkill(t *testing.T, dir, name, desc string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, name), 0o755)
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nBody.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openStream GETs the stream and returns its reader once the hello event
// has arrived (the client is then registered).
func openStream(t *testing.T, ctx context.Context, url string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev["event"] != "hello" {
		t.Fatalf("first event %v, want hello", ev)
	}
	return resp, br
}

// readEvent reads one SSE event (skipping comments) as field -> value.
func readEvent(t *testing.T, br *bufio.Reader) map[string]string {
	t.Helper()
	ev := map[string]string{}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %v)", err, ev)
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			if len(ev) > 0 {
				return ev
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		k, v, _ := strings.Cut(line, ": ")
		ev[k] = v
	}
}

// TestLiveStreamNamesChangedSkills: an edit on disk reaches an open stream
// as a "changed" event with the new generation and the skill's name; an
// agent's stream hears only of the skills that agent can see.
func TestLiveStreamNamesChangedSkills(t *testing.T) {
	svc, dir, _, srv := liveFixture(t, 8, service.Principal{Open: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, br := openStream(t, ctx, srv.URL)

	writeTestSkill(t, dir, "lint", "Lint, changed.")
	svc.Refresh(ctx, []string{filepath.Join(dir, "lint", "SKILL.md")}, "test")
	ev := readEvent(t, br)
	want := fmt.Sprintf(`{"generation":%d,"changed":["lint"],"truncated":false}`, svc.Generation())
	if ev["event"] != "changed" || ev["data"] != want || ev["id"] != fmt.Sprint(svc.Generation()) {
		t.Errorf("event %v, want changed %s", ev, want)
	}
}

func TestLiveStreamAgentSeesOwnSkills(t *testing.T) {
	svc, dir, _, srv := liveFixture(t, 8, service.Principal{TokenID: "t", Scopes: []string{"agent:ops"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, br := openStream(t, ctx, srv.URL)
	writeTestSkill(t, dir, "lint", "Lint, changed.")
	writeTestSkill(t, dir, "deploy", "Deploy, changed.")
	svc.Refresh(ctx, []string{filepath.Join(dir, "lint", "SKILL.md"), filepath.Join(dir, "deploy", "SKILL.md")}, "test")
	ev := readEvent(t, br)
	if !strings.Contains(ev["data"], `"changed":["deploy"]`) {
		t.Errorf("the ops agent's stream got %v: want deploy only (lint is not its skill)", ev)
	}
}

// TestLiveStreamCap: over MaxLiveStreams a client gets 503 with
// Retry-After; a stream that ends frees its place.
func TestLiveStreamCap(t *testing.T) {
	_, _, h, srv := liveFixture(t, 2, service.Principal{Open: true})
	// Every stream is cancelled when the test ends, failed or not: an
	// open stream would hold the test server's Close for ever.
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	openStream(t, ctx1, srv.URL)
	openStream(t, ctx2, srv.URL)
	resp, _ := openStream(t, ctx3, srv.URL)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a third stream over a cap of 2: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	cancel1()
	for i := 0; h.streams() != 1; i++ {
		if i > 1000 {
			t.Fatalf("a closed stream still counts: %d streams", h.streams())
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, br := openStream(t, ctx3, srv.URL)
	if resp.StatusCode != http.StatusOK || br == nil {
		t.Errorf("after one stream ended, a new one: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestLiveStreamsDoNotHoldShutdown: open streams end when the server's
// base context is cancelled (serve cancels it on SIGTERM), so Shutdown
// returns without waiting for its deadline.
func TestLiveStreamsDoNotHoldShutdown(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "lint", "Lint.")
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	defer svc.Close()
	base, stop := context.WithCancel(context.Background())
	hs := &http.Server{Handler: New(svc, Options{}), BaseContext: func(net.Listener) context.Context { return base }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	for range 3 {
		openStream(t, context.Background(), "http://"+ln.Addr().String()+"/ui/events")
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		t.Errorf("Shutdown with open streams: %v (the streams held it)", err)
	}
}

// TestChangeEventBounded: a client that reads slower than the catalog
// changes holds one pending event, whose names stay capped.
func TestChangeEventBounded(t *testing.T) {
	c := &liveClient{wake: make(chan struct{}, 1)}
	for i := range 1000 {
		c.post(changeEvent{Generation: uint64(i + 1), Changed: []string{fmt.Sprintf("skill-%04d", i)}})
	}
	e := c.take()
	if e.Generation != 1000 || len(e.Changed) != MaxLiveNames || !e.Truncated {
		t.Errorf("merged event: generation %d, %d names, truncated %v; want 1000, %d, true", e.Generation, len(e.Changed), e.Truncated, MaxLiveNames)
	}
	if c.take() != nil || len(c.wake) != 1 {
		t.Errorf("a taken event stays pending")
	}
}

// TestChangedSkills: two catalogs of the same folder (every skill read
// again) differ in nothing; an edit, an addition and a removal are named;
// past MaxLiveNames the list is cut and says so.
func TestChangedSkills(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		writeTestSkill(t, dir, fmt.Sprintf("s%02d", i), "Skill.")
	}
	build := func() *catalog.Loadout {
		c, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Global()
	}
	a := build()
	if names, tr := changedSkills(a, build()); len(names) != 0 || tr {
		t.Errorf("the same folder read twice: changed %v %v", names, tr)
	}
	os.WriteFile(filepath.Join(dir, "s03", "SKILL.md"), []byte("---\nname: s03\ndescription: Skill.\n---\nA new body.\n"), 0o644)
	writeTestSkill(t, dir, "s10", "New.")
	os.RemoveAll(filepath.Join(dir, "s07"))
	names, tr := changedSkills(a, build())
	if strings.Join(names, ",") != "s03,s07,s10" || tr {
		t.Errorf("after an edit, an addition and a removal: %v %v", names, tr)
	}
	for i := range MaxLiveNames + 5 {
		writeTestSkill(t, dir, fmt.Sprintf("n%03d", i), "New.")
	}
	if names, tr := changedSkills(a, build()); len(names) != MaxLiveNames || !tr {
		t.Errorf("%d additions: %d names, truncated %v; want %d, true", MaxLiveNames+5, len(names), tr, MaxLiveNames)
	}
}
