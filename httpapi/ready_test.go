package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
)

// GET /readyz is 503 (with Retry-After, no token needed) until every
// warm-up job has run, and 200 after; /healthz answers 200 all along and
// says whether the server is ready. The API adds its own jobs (the
// diagnostics and the skill list) to the server's, which run first.
func TestReadyz(t *testing.T) {
	e := newEnv(t, baseFiles)
	rd := httpapi.NewReadiness()
	h := httpapi.Auth(e.svc, httpapi.New(e.svc, httpapi.Options{Ready: rd}))
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w
	}
	health := func() bool {
		var b struct{ Ready bool }
		w := get("/healthz")
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &b) != nil {
			t.Fatalf("/healthz: %d %s", w.Code, w.Body)
		}
		return b.Ready
	}
	if w := get("/readyz"); w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"ready":false`) {
		t.Fatalf("/readyz before the jobs: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if health() {
		t.Fatal("/healthz says ready before the jobs")
	}
	release := make(chan struct{})
	started := make(chan struct{})
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		rd.Run(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)),
			httpapi.WarmJob{Name: "first", Run: func(context.Context) { order = append(order, "first"); close(started); <-release }})
	}()
	<-started
	if w := get("/readyz"); w.Code != 503 || !strings.Contains(w.Body.String(), `"building":"first"`) || !strings.Contains(w.Body.String(), `"draining":false`) {
		t.Fatalf("/readyz while a job runs: %d %s", w.Code, w.Body)
	}
	close(release)
	<-done
	if w := get("/readyz"); w.Code != 200 || !strings.Contains(w.Body.String(), `"ready":true`) {
		t.Fatalf("/readyz after the jobs: %d %s", w.Code, w.Body)
	}
	if !health() {
		t.Fatal("/healthz does not say ready after the jobs")
	}
	if len(order) != 1 {
		t.Fatalf("jobs run: %v", order)
	}
	// Shutdown begins: /readyz turns 503 for good, saying why, while
	// /healthz (liveness) stays 200 and says draining.
	rd.Drain()
	if w := get("/readyz"); w.Code != 503 || !strings.Contains(w.Body.String(), `"draining":true`) || !strings.Contains(w.Body.String(), "shutting down") {
		t.Fatalf("/readyz after Drain: %d %s", w.Code, w.Body)
	}
	if w := get("/healthz"); w.Code != 200 || !strings.Contains(w.Body.String(), `"draining":true`) || !strings.Contains(w.Body.String(), `"ready":false`) {
		t.Fatalf("/healthz after Drain: %d %s", w.Code, w.Body)
	}
	rd.Drain() // twice is the same
	if rd.Ready() || !rd.Draining() {
		t.Fatal("Drain did not stick")
	}
	// A handler without a Readiness is ready.
	plain := httpapi.Auth(e.svc, httpapi.New(e.svc, httpapi.Options{}))
	w := httptest.NewRecorder()
	plain.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	if w.Code != 200 {
		t.Fatalf("/readyz without a Readiness: %d", w.Code)
	}
	// A Run whose context ends first never says ready.
	rd2 := httpapi.NewReadiness()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rd2.Run(ctx, nil, httpapi.WarmJob{Name: "x", Run: func(context.Context) {}})
	if rd2.Ready() {
		t.Fatal("a cancelled Run is ready")
	}
}

// The search route's limit: 1,000 hits at most; 1,000 is answered, 1,001
// is 400 naming limit and its bound.
func TestSearchLimitBound(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "GET", "/v1/agents/coder/search?q=does&limit=1000", e.coder, nil), 200)
	r := e.do(t, "GET", "/v1/agents/coder/search?q=does&limit=1001", e.coder, nil)
	wantErr(t, r, 400, "bad_request")
	if !strings.Contains(string(r.body), "limit") || !strings.Contains(string(r.body), "1000") {
		t.Errorf("limit=1001: %s", r.body)
	}
}

// TestReadyzNotLoggedAsError: a probe's 503 while serve starts is logged
// at debug level, not as a server error; any other 503 still is one.
func TestReadyzNotLoggedAsError(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := httpapi.Log(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/readyz", nil))
	if buf.Len() != 0 {
		t.Errorf("/readyz 503 logged at info or above: %s", buf.String())
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/skills", nil))
	if !strings.Contains(buf.String(), "level=ERROR") {
		t.Errorf("another 503 not logged as an error: %q", buf.String())
	}
}
