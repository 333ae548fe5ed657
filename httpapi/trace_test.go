package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/obs"
)

// marks records the operations started and how they ended.
type marks struct {
	mu  sync.Mutex
	got []mark
}

type mark struct {
	kind   obs.Kind
	name   string
	attrs  []obs.Attr
	remote obs.Remote
	err    error
}

func (m *marks) Start(ctx context.Context, kind obs.Kind, name string, attrs []obs.Attr) (context.Context, func(error)) {
	r, _ := obs.RemoteFrom(ctx)
	m.mu.Lock()
	i := len(m.got)
	m.got = append(m.got, mark{kind: kind, name: name, attrs: attrs, remote: r})
	m.mu.Unlock()
	return ctx, func(err error) {
		m.mu.Lock()
		m.got[i].err = err
		m.mu.Unlock()
	}
}

func (m *marks) http() []mark {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []mark
	for _, x := range m.got {
		if x.kind == obs.KindHTTP {
			out = append(out, x)
		}
	}
	return out
}

func TestTraceMarksEachRequest(t *testing.T) {
	e := newEnvServe(t, benchFiles(), false, true)
	h := chain(t, e.svc)
	m := &marks{}
	obs.Set(m)
	defer obs.Set(nil)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	do := func(method, path string, hdr ...string) int {
		req := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.coder)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Add(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	cases := []struct {
		method, path string
		hdr          []string
		name         string
		remote       obs.Remote
		status       int
	}{
		{"GET", "/v1/agents/coder/skills/skill-042", []string{"traceparent", tp, "tracestate", "a=b"}, "GET /v1/agents/{id}/skills/{name}", obs.Remote{TraceParent: tp, TraceState: "a=b"}, 200},
		{"GET", "/v1/agents/coder/skills/no-such-skill-77", nil, "GET /v1/agents/{id}/skills/{name}", obs.Remote{}, 404},
		{"HEAD", "/v1/agents/coder/skills/skill-001", nil, "HEAD /v1/agents/{id}/skills/{name}", obs.Remote{}, 200},
		// A path no route has: the catch-all, never the path.
		{"GET", "/v1/zzz-unrouted-91", nil, "GET /", obs.Remote{}, 404},
		// A method no one knows: _OTHER.
		{"BREW", "/v1/agents/coder/skills/skill-001", nil, "_OTHER /", obs.Remote{}, 405},
		// A traceparent past the bound, or twice: none.
		{"GET", "/v1/agents/coder/skills/skill-001", []string{"traceparent", strings.Repeat("a", 1<<20)}, "GET /v1/agents/{id}/skills/{name}", obs.Remote{}, 200},
		{"GET", "/v1/agents/coder/skills/skill-001", []string{"traceparent", tp, "traceparent", tp}, "GET /v1/agents/{id}/skills/{name}", obs.Remote{}, 200},
		// A tracestate past the bound is dropped, the traceparent kept.
		{"GET", "/v1/agents/coder/skills/skill-001", []string{"traceparent", tp, "tracestate", strings.Repeat("s", 1<<20)}, "GET /v1/agents/{id}/skills/{name}", obs.Remote{TraceParent: tp}, 200},
	}
	for i, c := range cases {
		if code := do(c.method, c.path, c.hdr...); code != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, code, c.status)
		}
		got := m.http()
		if len(got) != i+1 {
			t.Fatalf("%s %s: %d HTTP marks in all, want %d", c.method, c.path, len(got), i+1)
		}
		x := got[i]
		if x.name != c.name || x.remote != c.remote {
			t.Errorf("%s %s: mark %q remote %+v; want %q %+v", c.method, c.path, x.name, x.remote, c.name, c.remote)
		}
		var st obs.StatusError
		switch {
		case c.status < 400 && x.err != nil:
			t.Errorf("%s %s: ended with %v, want nil", c.method, c.path, x.err)
		case c.status >= 400 && (!errors.As(x.err, &st) || int(st) != c.status):
			t.Errorf("%s %s: ended with %v, want StatusError(%d)", c.method, c.path, x.err, c.status)
		}
		if len(x.attrs) != 2 || x.attrs[1].Key != "http.route" || !strings.HasSuffix(x.name, " "+x.attrs[1].Value) {
			t.Errorf("%s %s: attributes %v", c.method, c.path, x.attrs)
		}
	}
}

// TestTraceOffPassesThrough: with no observer the request reaches the
// handler as it came, and nothing is marked.
func TestTraceOffPassesThrough(t *testing.T) {
	obs.Set(nil)
	var seen *http.Request
	h := httpapi.Trace(func(*http.Request) string { t.Fatal("the route was looked up with tracing off"); return "" },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r }))
	req := httptest.NewRequest("GET", "/x", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen != req {
		t.Fatal("the request was copied with tracing off")
	}
}
