package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/metrics"
	"github.com/loadout/loadout/service"
)

// chainMetrics is chain with serve's metrics: Measure inside Log, GET
// /metrics served, loads counted through the service's hook. The hook is
// removed when the test ends.
func chainMetrics(t testing.TB, svc *service.Service) (http.Handler, *metrics.Metrics) {
	m, err := metrics.New(metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.WatchService(svc)
	svc.OnActivation(m.Activation)
	t.Cleanup(func() { svc.OnActivation(nil) })
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	guarded, err := httpapi.Guard(httpapi.GuardOptions{Listen: "127.0.0.1:8080"}, httpapi.Auth(svc, httpapi.New(svc, httpapi.Options{Logger: logger, Metrics: m.Handler()})))
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.Timeouts(httpapi.TimeoutOptions{Read: time.Minute, Write: time.Minute}, httpapi.RequestID(httpapi.Log(logger, httpapi.Measure(m, guarded)))), m
}

// TestMeasureLoadAllocs: the metrics add no allocation to a cached load
// (the request's series and the load's are found without a label hash).
func TestMeasureLoadAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	svc := allocService(t)
	req := httptest.NewRequest("GET", "http://127.0.0.1:8080/v1/agents/coder/skills/skill-042", nil)
	count := func(h http.Handler) float64 {
		w := &deadlineRecorder{nopWriter: nopWriter{h: http.Header{}}}
		serve := func() { clear(w.h); h.ServeHTTP(w, req) }
		serve()
		if w.h.Get("Content-Type") != "application/json" {
			t.Fatalf("the load was not answered: %v", w.h)
		}
		return testing.AllocsPerRun(2000, serve)
	}
	without := count(chain(t, svc))
	h, m := chainMetrics(t, svc)
	with := count(h)
	t.Logf("allocations per cached load: %.1f without metrics, %.1f with", without, with)
	if with > without {
		t.Errorf("the metrics add %.1f allocations to a cached load", with-without)
	}
	// And they counted: the route's pattern, the load by agent.
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`loadout_http_requests_total{method="GET",route="/v1/agents/{id}/skills/{name}",status="200"} 2002`, `loadout_activations_total{agent="coder",outcome="ok"} 2002`} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
}

// TestMeasureRoutes: Measure labels a request with the API route's
// pattern, a refusal before routing with "" (Unrouted), and a path of no
// route with the catch-all's "/".
func TestMeasureRoutes(t *testing.T) {
	e := newEnv(t, baseFiles)
	var got []string
	obsv := observerFunc(func(route, method string, status int, _ time.Duration) {
		got = append(got, method+" "+route+" "+http.StatusText(status))
	})
	h := httpapi.RequestID(httpapi.Log(slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Measure(obsv, e.h)))
	for _, c := range []struct{ method, path, tok, want string }{
		{"GET", "/v1/agents/coder/skills/alpha", e.coder, "GET /v1/agents/{id}/skills/{name} OK"},
		{"GET", "/v1/agents/coder/skills/zzz", e.coder, "GET /v1/agents/{id}/skills/{name} Not Found"},
		{"GET", "/v1/skills/alpha", "", "GET  Unauthorized"},
		{"GET", "/v1/nothing/here", e.admin, "GET / Not Found"},
		{"GET", "/metrics", e.coder, "GET /metrics Forbidden"},
	} {
		got = got[:0]
		r := httptest.NewRequest(c.method, c.path, nil)
		if c.tok != "" {
			r.Header.Set("Authorization", "Bearer "+c.tok)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s %s: observed %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

// TestMeasureWithoutLog: without Log inside, Measure records the status
// and the duration itself.
func TestMeasureWithoutLog(t *testing.T) {
	e := newEnv(t, baseFiles)
	var got []string
	var took time.Duration
	h := httpapi.Measure(observerFunc(func(route, method string, status int, d time.Duration) {
		got = append(got, method+" "+route+" "+http.StatusText(status))
		took = d
	}), e.h)
	r := httptest.NewRequest("GET", "/v1/agents/coder/skills/zzz", nil)
	r.Header.Set("Authorization", "Bearer "+e.coder)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if len(got) != 1 || got[0] != "GET /v1/agents/{id}/skills/{name} Not Found" || took <= 0 {
		t.Errorf("observed %q in %v", got, took)
	}
}

type observerFunc func(route, method string, status int, took time.Duration)

func (f observerFunc) ObserveRequest(route, method string, status int, took time.Duration) {
	f(route, method, status, took)
}
