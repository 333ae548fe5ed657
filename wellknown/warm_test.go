package wellknown

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// TestWarm: after Warm, every agent's indexes are built, and requests for
// them build nothing (the first request paid for the build, 1.5
// CPU-seconds at 400 skills). The global catalog's is left to its first
// request.
func TestWarm(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, testSkills())
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	t.Cleanup(srv.Close)

	before := builds.Load()
	var logs strings.Builder
	Warm(context.Background(), svc, slog.New(slog.NewTextHandler(&logs, nil)))
	if got := builds.Load() - before; got != 2 {
		t.Errorf("Warm built %d indexes, want 2 (coder and writer)", got)
	}
	// Its summary names no agent left to its first request: none was.
	if l := logs.String(); strings.Count(l, `msg="well-known indexes built"`) != 1 || !strings.Contains(l, `msg="well-known indexes built" agents=2 took=`) || strings.Contains(l, "built_on_first_request") {
		t.Errorf("Warm logged:\n%s", l)
	}
	for _, id := range []string{"coder", "writer"} {
		sl := slotFor(svc, id)
		sl.mu.Lock()
		s := sl.snap
		sl.mu.Unlock()
		if s == nil || s.gen != svc.Generation() {
			t.Errorf("%s: no index after Warm", id)
		}
	}
	before = builds.Load()
	for _, p := range []string{"/agents/coder/.well-known/agent-skills/index.json", "/agents/writer/.well-known/skills/index.json"} {
		if r := get(t, srv.URL+p); r.status != http.StatusOK {
			t.Fatalf("%s: %d", p, r.status)
		}
	}
	if got := builds.Load() - before; got != 0 {
		t.Errorf("requests after Warm built %d indexes, want 0", got)
	}
	// Warm again at the same generation builds nothing; a cancelled Warm
	// stops.
	Warm(context.Background(), svc, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Warm(ctx, svc, nil)
	if got := builds.Load() - before; got != 0 {
		t.Errorf("a second Warm built %d indexes", got)
	}
}

// TestRequestWaitsForBuild: a request that arrives while an index is being
// built waits for that build and is answered from it; one whose request
// ends first gets 503.
func TestRequestWaitsForBuild(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, testSkills())
	svc := newService(t, root)
	srv := httptest.NewServer(mux(svc))
	t.Cleanup(srv.Close)

	// A build under way, as Warm leaves it: a slot whose building is set.
	l, _ := svc.Catalog().Agent("coder")
	gen := svc.Generation()
	sl := slotFor(svc, "coder")
	b := &building{gen: gen, l: l, done: make(chan struct{})}
	sl.mu.Lock()
	sl.building = b
	sl.mu.Unlock()

	before := builds.Load()
	got := make(chan response, 1)
	go func() { got <- get(t, srv.URL+"/agents/coder/.well-known/agent-skills/index.json") }()
	// It waits: no answer while the build is under way (one of its own
	// would have answered by now and counted a build).
	select {
	case r := <-got:
		t.Fatalf("answered %d during the build", r.status)
	case <-time.After(300 * time.Millisecond):
	}
	s := build(l, gen, "coder", slog.Default(), func(string, []byte) {})
	sl.mu.Lock()
	sl.building, sl.snap = nil, s
	sl.mu.Unlock()
	b.snap = s
	close(b.done)
	if r := <-got; r.status != http.StatusOK || !strings.Contains(string(r.body), `"multi"`) {
		t.Errorf("the waiting request: %d %s", r.status, r.body)
	}
	if n := builds.Load() - before; n != 0 {
		t.Errorf("the waiting request built %d indexes itself", n)
	}
}

// TestWarmLeavesLargeAgents: an agent of more than WarmMaxSkills skills is
// left to its first request, and the log line names it; exactly
// WarmMaxSkills is built. The bound is at least 10,000.
func TestWarmLeavesLargeAgents(t *testing.T) {
	if WarmMaxSkills < 10000 {
		t.Errorf("WarmMaxSkills = %d: an agent of 10,000 skills pays for its index on its first request", WarmMaxSkills)
	}
	// The bound lowered: the test's tree is as many skills as it is.
	defer func(n int) { warmMax = n }(warmMax)
	warmMax = 200
	root := t.TempDir()
	files := map[string]file{}
	for i := range warmMax + 1 {
		n := fmt.Sprintf("s%04d", i)
		if i == warmMax {
			n = "t0000" // not edge's
		}
		files[n+"/SKILL.md"] = file{md(n, "Use when testing "+n+"."), 0o644}
	}
	writeTree(t, root, files)
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "big", Skills: []catalog.SourceSpec{{Root: root}}},
		{AgentID: "edge", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"s*"}}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	if l, _ := cat.Agent("edge"); len(l.Entries()) != warmMax {
		t.Fatalf("edge has %d skills, want %d", len(l.Entries()), warmMax)
	}
	var logb strings.Builder
	before := builds.Load()
	Warm(context.Background(), svc, slog.New(slog.NewTextHandler(&logb, nil)))
	if got := builds.Load() - before; got != 1 {
		t.Errorf("Warm built %d indexes, want 1 (edge)", got)
	}
	if !strings.Contains(logb.String(), "built_on_first_request=big") || !strings.Contains(logb.String(), "agents=1") {
		t.Errorf("log: %s", logb.String())
	}
}

// TestBuildLogsWarningsBounded: a build logs its first maxLoggedWarnings
// warnings one line each and the rest as one counted line; at exactly the
// bound there is no such line. Every warning stays in the index.
func TestBuildLogsWarningsBounded(t *testing.T) {
	for _, n := range []int{maxLoggedWarnings, maxLoggedWarnings + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			root := t.TempDir()
			files := map[string]file{}
			for i := range n {
				name := fmt.Sprintf("x%03d", i)
				files[name+"/SKILL.md"] = file{md(name, "Use when testing "+name+"."), 0o644}
				files[name+"/run.sh"] = file{"#!/bin/sh\necho hi\n", 0o755}
			}
			writeTree(t, root, files)
			cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Root: root}}}}, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l, _ := cat.Agent("a")
			var buf strings.Builder
			s := build(l, 1, "a", slog.New(slog.NewTextHandler(&buf, nil)), func(string, []byte) {})
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			each := 0
			var more string
			for _, ln := range lines {
				switch {
				case strings.Contains(ln, "more warnings not logged"):
					more = ln
				case strings.Contains(ln, "code=executable-dropped"):
					each++
				}
			}
			if each != maxLoggedWarnings {
				t.Errorf("%d warnings logged one by one, want %d:\n%s", each, maxLoggedWarnings, buf.String())
			}
			switch {
			case n == maxLoggedWarnings && more != "":
				t.Errorf("at the bound, a line about more: %s", more)
			case n > maxLoggedWarnings && !strings.Contains(more, fmt.Sprintf("not_logged=%d", n-maxLoggedWarnings)):
				t.Errorf("past the bound: %q, want not_logged=%d", more, n-maxLoggedWarnings)
			}
			if s.v2.warnings != n || s.v1.warnings != n {
				t.Errorf("the indexes hold %d and %d warnings, want %d each", s.v2.warnings, s.v1.warnings, n)
			}
		})
	}
}
