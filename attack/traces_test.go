package attack

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// The traces of a served request, and attacks through trace context: the
// server exports to a real Jaeger (traces_jaeger_test.go) and the tests
// read the spans back from Jaeger's query API.

const (
	tpParentSpan = "00f067aa0ba902b7"
	tracedConfig = `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}]}],
  "tracing": {"endpoint": %q, "serviceName": "loadout-attack", "timeout": %q}}`
)

// traceID is a distinct valid trace id for n.
func traceID(n int) string { return fmt.Sprintf("4bf92f3577b34da6a3ce%012x", n) }

func traceparent(id string) string { return "00-" + id + "-" + tpParentSpan + "-01" }

// byID indexes spans by span id.
func byID(spans []jaegerSpan) map[string]jaegerSpan {
	m := map[string]jaegerSpan{}
	for _, s := range spans {
		m[s.SpanID] = s
	}
	return m
}

func named(t *testing.T, spans []jaegerSpan, name string) jaegerSpan {
	t.Helper()
	for _, s := range spans {
		if s.OperationName == name {
			return s
		}
	}
	t.Fatalf("no span %q", name)
	return jaegerSpan{}
}

// under reports whether s descends from the span with id root.
func under(all map[string]jaegerSpan, s jaegerSpan, root string) bool {
	for range len(all) {
		p := s.parent()
		if p == root {
			return true
		}
		var ok bool
		if s, ok = all[p]; !ok {
			return false
		}
	}
	return false
}

// TestTracesReachJaeger: loadout serve exports to a real Jaeger; an HTTP
// request carrying a traceparent gives a server span with that trace id
// and that parent, and child spans for the catalog's refresh, the source
// reads and the store's queries; an MCP call over HTTP gives its span
// under its request's, on the fast path and the SDK's path.
func TestTracesReachJaeger(t *testing.T) {
	j := startJaeger(t)
	s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, j.OTLP, "5s")})

	id := traceID(1)
	if code, _, body := s.Do(t, "POST", "/v1/reload", "", "", "traceparent", traceparent(id), "tracestate", "vendor=abc"); code != 200 {
		t.Fatalf("POST /v1/reload: %d %s", code, body)
	}
	spans, services := j.waitTrace(t, id, "POST /v1/reload", "catalog", "store", "folder")
	all := byID(spans)
	srv := named(t, spans, "POST /v1/reload")
	if srv.parent() != tpParentSpan || srv.TraceID != id || srv.tag("span.kind") != "server" || srv.tag("http.route") != "/v1/reload" || services[srv.ProcessID] != "loadout-attack" {
		t.Fatalf("server span: parent %q trace %q kind %q route %q service %q", srv.parent(), srv.TraceID, srv.tag("span.kind"), srv.tag("http.route"), services[srv.ProcessID])
	}
	cat := named(t, spans, "catalog")
	if cat.parent() != srv.SpanID || cat.tag("loadout.op") != "refresh" {
		t.Errorf("catalog refresh span: parent %q (want the server span %q), op %q", cat.parent(), srv.SpanID, cat.tag("loadout.op"))
	}
	if st := named(t, spans, "store"); st.parent() != cat.SpanID {
		t.Errorf("the store source's read: parent %q, want the refresh %q", st.parent(), cat.SpanID)
	}
	queries := 0
	for _, sp := range spans {
		if sp.tag("loadout.op") == "store" {
			queries++
			if !under(all, sp, srv.SpanID) || sp.tag("span.kind") != "client" {
				t.Errorf("store query %q is not under the server span (parent %q) or not a client span (%q)", sp.OperationName, sp.parent(), sp.tag("span.kind"))
			}
			if strings.ContainsAny(sp.OperationName, " ()'") {
				t.Errorf("store span named %q: want the store method, never SQL", sp.OperationName)
			}
		}
	}
	if queries == 0 {
		t.Errorf("no store query spans in %d spans", len(spans))
	}

	// The cached load: named by its route pattern, never the path.
	id = traceID(2)
	if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", traceparent(id)); code != 200 {
		t.Fatalf("GET skill: %d", code)
	}
	spans, _ = j.waitTrace(t, id, "GET /v1/agents/{id}/skills/{name}")
	if sp := named(t, spans, "GET /v1/agents/{id}/skills/{name}"); sp.parent() != tpParentSpan || sp.tag("http.route") != "/v1/agents/{id}/skills/{name}" {
		t.Errorf("load span: parent %q route %q", sp.parent(), sp.tag("http.route"))
	}

	// MCP over HTTP: initialize opens a session in the context of its
	// request; later calls are traced under their own requests.
	sid := tracedMCPInit(t, s, traceparent(traceID(3)))
	id = traceID(4)
	tracedMCPPost(t, s, sid, traceparent(id), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"deploy"}}}`)
	spans, _ = j.waitTrace(t, id, "POST /mcp", "tools/call load_skill")
	if h, c := named(t, spans, "POST /mcp"), named(t, spans, "tools/call load_skill"); h.parent() != tpParentSpan || c.parent() != h.SpanID || h.tag("http.route") != "/mcp" {
		t.Errorf("fast-path tool call: HTTP span parent %q route %q; call span parent %q (want %q)", h.parent(), h.tag("http.route"), c.parent(), h.SpanID)
	}
	id = traceID(5)
	tracedMCPPost(t, s, sid, traceparent(id), `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	spans, _ = j.waitTrace(t, id, "POST /mcp", "tools/list")
	if h, c := named(t, spans, "POST /mcp"), named(t, spans, "tools/list"); c.parent() != h.SpanID || c.tag("rpc.method") != "tools/list" {
		t.Errorf("SDK-path call: span parent %q, want its own request's %q (not the initialize request's)", c.parent(), h.SpanID)
	}
	// An unknown tool is named as one, not by what the client sent.
	id = traceID(6)
	tracedMCPPost(t, s, sid, traceparent(id), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no-such-tool-8c1f","arguments":{}}}`)
	spans, _ = j.waitTrace(t, id, "POST /mcp", "tools/call _other")
	for _, sp := range spans {
		if strings.Contains(sp.OperationName, "8c1f") || strings.Contains(sp.tag("gen_ai.tool.name"), "8c1f") {
			t.Errorf("span %q carries the client's tool name", sp.OperationName)
		}
	}
	s.Healthy(t)
}

// tracedMCPPost sends one JSON-RPC message to /mcp and returns the answer.
func tracedMCPPost(t *testing.T, s *Server, sid, tp, body string) (http.Header, string) {
	t.Helper()
	hdr := []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18", "traceparent", tp}
	if sid != "" {
		hdr = append(hdr, "Mcp-Session-Id", sid)
	}
	code, h, out := s.Do(t, "POST", "/mcp", "", body, hdr...)
	if code != 200 && code != 202 {
		t.Fatalf("POST /mcp %s: %d %s", body, code, out)
	}
	return h, out
}

func tracedMCPInit(t *testing.T, s *Server, tp string) string {
	t.Helper()
	h, _ := tracedMCPPost(t, s, "", tp, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize gave no session id")
	}
	tracedMCPPost(t, s, sid, tp, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// TestTraceContextOfAMegabyte: a 1 MB traceparent or tracestate is
// refused by the server's header limit (431) before any handler, and the
// server goes on; one just under the limit (30 KB, a "future version"
// that OpenTelemetry's parser would accept) is ignored after a length
// check: the request is answered, and its span starts a trace of its own
// rather than continuing the attacker's.
func TestTraceContextOfAMegabyte(t *testing.T) {
	j := startJaeger(t)
	s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, j.OTLP, "5s")})
	huge := strings.Repeat("a", 1<<20)
	for _, h := range []string{"traceparent", "tracestate"} {
		// The server answers 431 and closes the connection, often while
		// the client is still sending: then the client sees a reset.
		req, _ := http.NewRequest("GET", s.Base+"/v1/agents/coder/skills/deploy", nil)
		req.Header.Set(h, huge)
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		r, err := c.Do(req)
		if err == nil {
			r.Body.Close()
			if r.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("a 1 MB %s: status %d, want 431", h, r.StatusCode)
			}
		} else if !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("a 1 MB %s: %v, want 431 or the connection closed", h, err)
		}
		s.Healthy(t)
	}

	long := traceID(100)
	longTP := "cc-" + long + "-" + tpParentSpan + "-01-" + strings.Repeat("f", 30<<10)
	if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", longTP); code != 200 {
		t.Fatalf("a 30 KB traceparent: status %d, want 200", code)
	}
	// At the bound (128 bytes) the same future version is continued:
	// the bound, not the parser, refused the long one.
	atBound := traceID(101)
	tp := "cc-" + atBound + "-" + tpParentSpan + "-01-"
	tp += strings.Repeat("f", 128-len(tp))
	if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", tp); code != 200 {
		t.Fatalf("a 128-byte traceparent: %d", code)
	}
	// A valid tracestate of 8 KB (32 members of 250 bytes: what the W3C
	// format allows, and OpenTelemetry's parser keeps) beside a good
	// traceparent: the parent is kept, the state dropped (over 512
	// bytes); one of 510 bytes is kept.
	var members []string
	for i := range 32 {
		members = append(members, fmt.Sprintf("k%02d=%s", i, strings.Repeat("x", 250)))
	}
	big, small := strings.Join(members, ","), members[0]+","+strings.Replace(members[1], "x", "y", -1)
	withState, keptState := traceID(102), traceID(103)
	for id, st := range map[string]string{withState: big, keptState: small} {
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", traceparent(id), "tracestate", st); code != 200 {
			t.Fatalf("a tracestate of %d bytes: %d", len(st), code)
		}
	}
	j.waitTrace(t, atBound, "GET /v1/agents/{id}/skills/{name}")
	spans, _ := j.waitTrace(t, withState, "GET /v1/agents/{id}/skills/{name}")
	if sp := spans[0]; sp.parent() != tpParentSpan || sp.tag("w3c.tracestate") != "" {
		t.Errorf("with an 8 KB tracestate: parent %q, tracestate kept (%d bytes)", sp.parent(), len(sp.tag("w3c.tracestate")))
	}
	spans, _ = j.waitTrace(t, keptState, "GET /v1/agents/{id}/skills/{name}")
	if sp := spans[0]; sp.tag("w3c.tracestate") != small {
		t.Errorf("a tracestate of %d bytes (under the bound) was not kept: %q", len(small), sp.tag("w3c.tracestate"))
	}
	// Both were exported after the long one: had it been continued, its
	// trace would be there too.
	if spans, _ := j.trace(t, long); len(spans) != 0 {
		t.Errorf("the 30 KB traceparent was continued: %d spans in its trace", len(spans))
	}
}

// TestMalformedTraceparent: each malformed traceparent is answered as if
// absent: the request is served and no span joins the named trace.
func TestMalformedTraceparent(t *testing.T) {
	j := startJaeger(t)
	s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, j.OTLP, "5s")})
	id := traceID(200)
	bad := []string{
		"00-" + id + "-" + tpParentSpan,                          // no flags
		"00-" + id + "-" + tpParentSpan + "-01-extra",            // version 00 takes no more fields
		"00-" + strings.ToUpper(id) + "-" + tpParentSpan + "-01", // upper case
		"00-" + id + "-0000000000000000-01",                      // zero parent
		"ff-" + id + "-" + tpParentSpan + "-01",                  // version ff is invalid
		"00_" + id + "_" + tpParentSpan + "_01",
		"00-" + id + "-" + tpParentSpan + "-0g", // flags not hex
	}
	for i, tp := range bad {
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", tp); code != 200 {
			t.Errorf("malformed traceparent %d (%q): status %d, want 200", i, tp, code)
		}
	}
	// Twice the same header: ambiguous, ignored.
	req, _ := http.NewRequest("GET", s.Base+"/v1/agents/coder/skills/deploy", nil)
	req.Header["Traceparent"] = []string{traceparent(id), traceparent(id)}
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("two traceparent headers: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	control := traceID(201)
	s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", traceparent(control))
	j.waitTrace(t, control, "GET /v1/agents/{id}/skills/{name}")
	if spans, _ := j.trace(t, id); len(spans) != 0 {
		t.Errorf("a malformed or doubled traceparent was continued: %d spans in trace %s", len(spans), id)
	}
}

// TestManyTraceIDsKeepNoState: 6,000 requests, each with a trace id of its
// own, grow the server's memory no more than 6,000 with one id: the
// server keeps nothing per trace (spans go out through a bounded queue).
func TestManyTraceIDsKeepNoState(t *testing.T) {
	j := startJaeger(t)
	s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, j.OTLP, "5s")})
	run := func(n, from int, distinct bool) {
		tr := &http.Transport{MaxIdleConnsPerHost: 8}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					id := traceID(from)
					if distinct {
						id = traceID(from + i)
					}
					req, _ := http.NewRequest("GET", s.Base+"/v1/agents/coder/skills/deploy", nil)
					req.Header.Set("traceparent", traceparent(id))
					r, err := c.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
			})
		}
		wg.Wait()
	}
	run(6000, 1000, false)
	same := s.PeakRSSMB(t)
	run(6000, 10000, true)
	distinct := s.PeakRSSMB(t)
	t.Logf("peak RSS after 6,000 requests of one trace: %.1f MB; after 6,000 more of 6,000 traces: %.1f MB", same, distinct)
	if distinct > same+8 {
		t.Errorf("6,000 distinct trace ids grew the peak RSS from %.1f to %.1f MB", same, distinct)
	}
	// Every one of them was exported (the queue keeps up with Jaeger).
	j.waitTrace(t, traceID(10000+5999), "GET /v1/agents/{id}/skills/{name}")
}

// TestCollectorThatHangsOrRefuses: with a collector that accepts and never
// answers, or a port that refuses, requests are answered as fast as ever:
// the export runs behind a bounded queue, spans past it are dropped, and
// the failure is logged once (not per span). The exports' timeout is 30 s
// here, so a request that waited on one would take the whole test's time;
// and serve stops within its flush bound (5 s), not the export's.
func TestCollectorThatHangsOrRefuses(t *testing.T) {
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		hang.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	refused := fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))
	for _, c := range []struct{ name, endpoint, timeout string }{
		{"hangs", "http://" + hang.Addr().String(), "30s"},
		// A short timeout, so that the failure is seen within the test.
		{"refuses", refused, "1s"},
	} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, c.endpoint, c.timeout)})
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
			start := time.Now()
			// 3,000 requests: more spans than the queue holds (2,048).
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < 3000; i += 4 {
						req, _ := http.NewRequest("GET", s.Base+"/v1/agents/coder/skills/deploy", nil)
						req.Header.Set("traceparent", traceparent(traceID(300000+i)))
						r, err := c.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						io.Copy(io.Discard, r.Body)
						r.Body.Close()
						if r.StatusCode != 200 {
							t.Errorf("status %d", r.StatusCode)
							return
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			t.Logf("3,000 traced requests with a collector that %s: %s", name, took.Round(time.Millisecond))
			if took > 25*time.Second {
				t.Errorf("3,000 requests took %s: a request waited on the export (timeout 30 s)", took)
			}
			s.Healthy(t)
			if name == "refuses" {
				// The first failed export is logged.
				for deadline := testutil.After(t); !strings.Contains(s.Log(), "traces could not be exported"); {
					select {
					case <-deadline:
						t.Fatalf("no export failure logged:\n%s", tail(s.Log(), 2000))
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
			if d := s.Stop(t); d > 9*time.Second {
				t.Errorf("serve took %s to stop: the flush at shutdown must be bounded (5 s), not wait out the export's", d)
			}
			if name == "refuses" {
				// Every later failure, the flush at shutdown's too, is
				// within the minute: not logged again.
				if n := strings.Count(s.Log(), "traces could not be exported"); n != 1 {
					t.Errorf("the export failure was logged %d times, want once (at most once a minute)\n%s", n, tail(s.Log(), 2000))
				}
			}
		})
	}
}
