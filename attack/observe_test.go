package attack

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestMetricsAndTracesSeeTheSameMarks: with tracing on, serve registers
// both observers of the library's marks (internal/obs): the tracer and the
// metrics. One MCP tool call and one load reach the OTLP receiver as spans
// and /metrics as counts, the store's queries included; neither observer
// hides the other (obs.Set by the second would).
func TestMetricsAndTracesSeeTheSameMarks(t *testing.T) {
	j := startJaeger(t)
	s := Start(t, Options{Config: fmt.Sprintf(tracedConfig, j.OTLP, "5s")})

	sid := tracedMCPInit(t, s, traceparent(traceID(70)))
	id := traceID(71)
	tracedMCPPost(t, s, sid, traceparent(id), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"deploy"}}}`)
	j.waitTrace(t, id, "POST /mcp", "tools/call load_skill")
	id = traceID(72)
	if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "traceparent", traceparent(id)); code != 200 {
		t.Fatalf("GET skill: %d", code)
	}
	j.waitTrace(t, id, "GET /v1/agents/{id}/skills/{name}")

	code, _, body := s.Do(t, "GET", "/metrics", "", "")
	if code != 200 {
		t.Fatalf("GET /metrics on the open loopback server: %d %s", code, body)
	}
	sum := func(re string) float64 {
		var n float64
		for _, m := range regexp.MustCompile(`(?m)^`+re+` (\S+)$`).FindAllStringSubmatch(body, -1) {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatalf("%q: %v", m[0], err)
			}
			n += v
		}
		return n
	}
	if n := sum(`loadout_mcp_calls_total\{[^}]*tool="load_skill"[^}]*\}`); n != 1 {
		t.Errorf("loadout_mcp_calls_total for load_skill = %v, want 1 (the tracer took the marks alone?)", n)
	}
	if n := sum(`loadout_operations_total\{kind="store"[^}]*\}`); n < 1 {
		t.Errorf("loadout_operations_total of the store = %v, want the store's queries counted", n)
	}
	if n := sum(`loadout_operation_duration_seconds_count\{kind="refresh"[^}]*\}`); n < 1 {
		t.Errorf("refresh durations observed = %v, want the start-up refresh", n)
	}
	if n := sum(`loadout_http_requests_total\{method="GET",route="/v1/agents/\{id\}/skills/\{name\}",status="200"\}`); n != 1 {
		t.Errorf("loads counted by route = %v, want 1", n)
	}
}
