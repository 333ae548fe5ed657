package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/metrics"
	"github.com/loadout/loadout/service"
)

// scrape reads m's exposition through its handler, as Prometheus does,
// and returns each sample by its line's name and labels.
func scrape(t testing.TB, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("scrape: Content-Type %q, want the text format", ct)
	}
	body, _ := io.ReadAll(rec.Body)
	return metrics.ParseSamples(t, string(body))
}

func newMetrics(t testing.TB, o metrics.Options) *metrics.Metrics {
	t.Helper()
	m, err := metrics.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRequestsByRouteMethodStatus(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	for range 3 {
		m.ObserveRequest("/v1/skills/{name}", "GET", 200, time.Millisecond)
	}
	m.ObserveRequest("/v1/skills/{name}", "GET", 404, time.Millisecond)
	m.ObserveRequest("", "GET", 401, time.Millisecond)
	m.ObserveRequest("/v1/skills/{name}", "BREW", 405, time.Millisecond)
	m.ObserveRequest("/v1/skills/{name}", "brew", 405, time.Millisecond)
	m.ObserveRequest("/v1/skills/{name}", "GET", 1000, time.Millisecond)
	s := scrape(t, m)
	for k, want := range map[string]float64{
		`loadout_http_requests_total{method="GET",route="/v1/skills/{name}",status="200"}`:                 3,
		`loadout_http_requests_total{method="GET",route="/v1/skills/{name}",status="404"}`:                 1,
		`loadout_http_requests_total{method="GET",route="_unrouted",status="401"}`:                         1,
		`loadout_http_requests_total{method="_other",route="/v1/skills/{name}",status="405"}`:              2,
		`loadout_http_requests_total{method="GET",route="/v1/skills/{name}",status="0"}`:                   1,
		`loadout_http_request_duration_seconds_count{method="GET",route="/v1/skills/{name}"}`:              5,
		`loadout_http_request_duration_seconds_bucket{method="GET",route="/v1/skills/{name}",le="0.001"}`:  5,
		`loadout_http_request_duration_seconds_bucket{method="GET",route="/v1/skills/{name}",le="0.0005"}`: 0,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
}

// TestManyStatuses: a route answering more statuses than it keeps slots
// for counts each under its own status all the same.
func TestManyStatuses(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	for st := 200; st < 230; st++ {
		for range 2 {
			m.ObserveRequest("/r", "GET", st, 0)
		}
	}
	s := scrape(t, m)
	if n := metrics.CountFamily(s, "loadout_http_requests_total"); n != 30 {
		t.Errorf("%d series, want 30", n)
	}
	for st := 200; st < 230; st++ {
		if k := fmt.Sprintf(`loadout_http_requests_total{method="GET",route="/r",status="%d"}`, st); s[k] != 2 {
			t.Errorf("%s = %v, want 2", k, s[k])
		}
	}
}

// TestRouteValuesBounded: past MaxRouteValues route values (patterns are
// the code's, so this is a guard), further routes count under Other.
func TestRouteValuesBounded(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	for i := range metrics.MaxRouteValues + 10 {
		m.ObserveRequest(fmt.Sprintf("/r%d", i), "GET", 200, 0)
	}
	s := scrape(t, m)
	if n := metrics.CountFamily(s, "loadout_http_requests_total"); n != metrics.MaxRouteValues+1 {
		t.Errorf("%d request series, want %d (the cap and Other)", n, metrics.MaxRouteValues+1)
	}
	if got := s[`loadout_http_requests_total{method="GET",route="_other",status="200"}`]; got != 10 {
		t.Errorf("Other counted %v, want 10", got)
	}
}

func TestActivationsByAgentAndOutcome(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	m.Activation(service.Activation{Agent: "coder", Skill: "deploy", Action: "load", Outcome: "ok", Found: true})
	m.Activation(service.Activation{Agent: "coder", Skill: "deploy", Action: "load", Outcome: "ok", Found: true})
	m.Activation(service.Activation{Agent: "coder", Skill: "nope", Action: "load", Outcome: "not_found"})
	m.Activation(service.Activation{Agent: "coder", Skill: "deploy", Action: "read", Outcome: "refused", Found: true})
	m.Activation(service.Activation{Agent: "writer", Skill: "deploy", Action: "read", Outcome: "weird"})
	s := scrape(t, m)
	for k, want := range map[string]float64{
		`loadout_activations_total{agent="coder",outcome="ok"}`:        2,
		`loadout_activations_total{agent="coder",outcome="not_found"}`: 1,
		`loadout_file_reads_total{agent="coder",outcome="refused"}`:    1,
		`loadout_file_reads_total{agent="writer",outcome="_other"}`:    1,
	} {
		if got := s[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	// No skill names without skillLabels.
	for k := range s {
		if strings.Contains(k, "deploy") || strings.HasPrefix(k, "loadout_skill_uses_total") {
			t.Errorf("a skill name is a label without skillLabels: %s", k)
		}
	}
}

// TestAgentValuesBounded: agents are configured, but past MaxAgentValues
// (a guard) further agents count under Other.
func TestAgentValuesBounded(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	for i := range metrics.MaxAgentValues + 5 {
		m.Activation(service.Activation{Agent: "a" + strconv.Itoa(i), Action: "load", Outcome: "ok"})
	}
	s := scrape(t, m)
	if n := metrics.CountFamily(s, "loadout_activations_total"); n != metrics.MaxAgentValues+1 {
		t.Errorf("%d series, want %d", n, metrics.MaxAgentValues+1)
	}
	if got := s[`loadout_activations_total{agent="_other",outcome="ok"}`]; got != 5 {
		t.Errorf("Other = %v, want 5", got)
	}
}

// TestSkillLabelCap: with skillLabels, MaxSkillSeries names get their own
// value (at the cap: all of them), one past it counts under Other, and a
// name that is no skill (the caller's text) under _unknown.
func TestSkillLabelCap(t *testing.T) {
	const capN = 3
	m := newMetrics(t, metrics.Options{SkillLabels: true, MaxSkillSeries: capN})
	load := func(name string, found bool) {
		m.Activation(service.Activation{Agent: "coder", Skill: name, Action: "load", Outcome: "ok", Found: found})
	}
	for i := range capN {
		load(fmt.Sprintf("s%d", i), true)
	}
	s := scrape(t, m)
	if n := metrics.CountFamily(s, "loadout_skill_uses_total"); n != capN {
		t.Fatalf("at the cap: %d skill series, want %d", n, capN)
	}
	load("s-past", true)
	load("s-past", true)
	load("s0", true) // admitted before: keeps its own value
	load("no-such-skill-"+strings.Repeat("x", 100), false)
	m.Activation(service.Activation{Agent: "coder", Skill: "s1", Action: "read", Outcome: "ok", Found: true})
	s = scrape(t, m)
	for k, want := range map[string]float64{
		`loadout_skill_uses_total{action="load",skill="s0"}`:       2,
		`loadout_skill_uses_total{action="load",skill="_other"}`:   2,
		`loadout_skill_uses_total{action="load",skill="_unknown"}`: 1,
		`loadout_skill_uses_total{action="read",skill="s1"}`:       1,
	} {
		if got := s[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	for k := range s {
		if strings.Contains(k, "s-past") || strings.Contains(k, "no-such-skill") {
			t.Errorf("past the cap, a name is a label: %s", k)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	for _, bad := range []int{-1, metrics.MaxMaxSkillSeries + 1} {
		if _, err := metrics.New(metrics.Options{SkillLabels: true, MaxSkillSeries: bad}); err == nil || !strings.Contains(err.Error(), "metrics.maxSkillSeries") {
			t.Errorf("MaxSkillSeries %d: %v", bad, err)
		}
	}
	if _, err := metrics.New(metrics.Options{SkillLabels: true, MaxSkillSeries: metrics.MaxMaxSkillSeries}); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	// The config's bounds are these.
	if config.MaxMetricsSkillSeries != metrics.MaxMaxSkillSeries || config.DefaultMetricsSkillSeries != metrics.DefaultMaxSkillSeries {
		t.Errorf("config's bounds %d/%d differ from the metrics package's %d/%d", config.MaxMetricsSkillSeries, config.DefaultMetricsSkillSeries, metrics.MaxMaxSkillSeries, metrics.DefaultMaxSkillSeries)
	}
}

// TestObserverMarks: obs marks become the operation and MCP families;
// HTTP marks are left to ObserveRequest (which knows the status).
func TestObserverMarks(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	obs.Set(m.Observer())
	defer obs.Set(nil)
	ctx := context.Background()
	mark := func(k obs.Kind, name string, err error) {
		_, end := obs.Start(ctx, k, name)
		end(err)
	}
	mark(obs.KindStore, "GetSkill", nil)
	mark(obs.KindStore, "GetSkill", errors.New("boom"))
	mark(obs.KindRefresh, "folder", nil)
	mark(obs.KindSync, "git", errors.New("unreachable"))
	mark(obs.KindSafetyScan, "skill", nil)
	mark(obs.KindHTTP, "/v1/skills", nil)
	mark(obs.KindMCP, "tools/call load_skill", nil)
	mark(obs.KindMCP, "tools/call rm_rf", nil)
	mark(obs.KindMCP, "tools/list", errors.New("x"))
	mark(obs.KindMCP, "evil/method", nil)
	mark(obs.KindMCP, "tools/list extra", nil)
	s := scrape(t, m)
	for k, want := range map[string]float64{
		`loadout_operations_total{kind="store",name="GetSkill",outcome="ok"}`:            1,
		`loadout_operations_total{kind="store",name="GetSkill",outcome="error"}`:         1,
		`loadout_operation_duration_seconds_count{kind="store",name="GetSkill"}`:         2,
		`loadout_operations_total{kind="refresh",name="folder",outcome="ok"}`:            1,
		`loadout_operations_total{kind="sync",name="git",outcome="error"}`:               1,
		`loadout_operations_total{kind="safety_scan",name="skill",outcome="ok"}`:         1,
		`loadout_mcp_calls_total{method="tools/call",outcome="ok",tool="load_skill"}`:    1,
		`loadout_mcp_calls_total{method="tools/call",outcome="ok",tool="_other"}`:        1,
		`loadout_mcp_calls_total{method="tools/list",outcome="error",tool=""}`:           1,
		`loadout_mcp_calls_total{method="tools/list",outcome="ok",tool=""}`:              1,
		`loadout_mcp_calls_total{method="_other",outcome="ok",tool=""}`:                  1,
		`loadout_mcp_call_duration_seconds_count{method="tools/call",tool="load_skill"}`: 1,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	for k := range s {
		if strings.Contains(k, `kind="http"`) || strings.Contains(k, "rm_rf") || strings.Contains(k, "evil") {
			t.Errorf("unexpected series %s", k)
		}
	}
}

// TestHotPathAllocs: once a series exists, counting a request or a load
// allocates nothing.
func TestHotPathAllocs(t *testing.T) {
	m := newMetrics(t, metrics.Options{SkillLabels: true})
	a := service.Activation{Agent: "coder", Skill: "deploy", Action: "load", Outcome: "ok", Found: true}
	m.ObserveRequest("/v1/agents/{id}/skills/{name}", "GET", 200, time.Millisecond)
	m.Activation(a)
	if n := testing.AllocsPerRun(200, func() {
		m.ObserveRequest("/v1/agents/{id}/skills/{name}", "GET", 200, time.Millisecond)
		m.Activation(a)
	}); n != 0 {
		t.Errorf("%v allocations per request and load, want 0", n)
	}
}

// BenchmarkHotPath is what the metrics add to one cached load: its
// request counted (ObserveRequest, with the one clock read Measure makes:
// it takes Log's start) and its activation counted.
func BenchmarkHotPath(b *testing.B) {
	m := newMetrics(b, metrics.Options{})
	a := service.Activation{Agent: "coder", Skill: "deploy", Action: "load", Outcome: "ok", Found: true}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		start := time.Now()
		for pb.Next() {
			m.Activation(a)
			m.ObserveRequest("/v1/agents/{id}/skills/{name}", "GET", 200, time.Since(start))
		}
	})
}
