package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/service"
)

// deadlineRecorder is a ResponseWriter that discards what is written and
// takes deadlines, as the server's does.
type deadlineRecorder struct {
	nopWriter
	deadlines int
}

func (w *deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (w *deadlineRecorder) SetWriteDeadline(time.Time) error { w.deadlines++; return nil }

// chain is the middleware chain loadout serve puts in front of the API
// (serverHandler), with an info-level logger as serve's default.
func chain(t testing.TB, svc *service.Service) http.Handler {
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	api := httpapi.New(svc, httpapi.Options{Logger: logger})
	guarded, err := httpapi.Guard(httpapi.GuardOptions{Listen: "127.0.0.1:8080"}, httpapi.Auth(svc, api))
	if err != nil {
		t.Fatal(err)
	}
	traced := httpapi.Trace(httpapi.RouteOf(api), guarded)
	return httpapi.Timeouts(httpapi.TimeoutOptions{Read: time.Minute, Write: time.Minute}, httpapi.RequestID(httpapi.Log(logger, traced)))
}

// maxLoadAllocs bounds the allocations of one cached load through the
// whole chain (timeouts, request id, log, guard, auth, routing, the
// handler and its receipt), with the skill's body held as serve holds it.
// It was 31 (and two deadline changes) before the middlewares shared one per-request state (each
// copied the request and allocated its own wrapper and context value),
// requireScope stopped allocating its refusal up front, the receipt
// buffer was reused and IsOAuthDiscovery stopped concatenating; 7 before
// the load cache kept its Content-Length encoded (2 fewer).
const maxLoadAllocs = 5

// allocService is the service the allocation counts load through: the
// benchmark's skills, bodies held as serve holds them, and no store:
// receipts go to the in-memory ring, so a count is the request's and not
// a background flush's.
func allocService(t *testing.T) *service.Service {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, benchFiles())
	opts := catalog.Options{}
	opts.Scan.KeepBodies = true
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { svc.Close() })
	return svc
}

// TestLoadAllocs counts the allocations of the hot path, so that a change
// that adds some per request fails here rather than in a benchmark that
// nobody reads.
func TestLoadAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	svc := allocService(t)
	h := chain(t, svc)
	req := httptest.NewRequest("GET", "http://127.0.0.1:8080/v1/agents/coder/skills/skill-042", nil)
	w := &deadlineRecorder{nopWriter: nopWriter{h: http.Header{}}}
	serve := func() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
	serve()
	if w.h.Get("X-Request-Id") == "" || w.h.Get("Content-Type") != "application/json" {
		t.Fatalf("the load was not answered: %v", w.h)
	}
	w.deadlines = 0
	allocs := testing.AllocsPerRun(2000, serve)
	t.Logf("%.1f allocations per cached load, %.2f write deadline changes", allocs, float64(w.deadlines)/2001)
	if allocs > maxLoadAllocs {
		t.Errorf("a cached load allocates %.1f times, more than %d: see what was added to the hot path (go test -bench BenchmarkLoad -memprofile)", allocs, maxLoadAllocs)
	}
	if d := float64(w.deadlines) / 2001; d > 1.01 {
		t.Errorf("%.2f write deadline changes per request, want 1", d)
	}
}
