// Package metrics is loadout's Prometheus metrics: the one package that
// imports the Prometheus client. It keeps its own registry (never the
// global one), so what GET /metrics exposes is exactly what this package
// registers, and two servers in one process (tests) do not share series.
//
// It learns what happens in three ways, none of which costs the hot path
// a label hash once a series exists:
//
//   - HTTP requests, from httpapi.Measure (ObserveRequest): the matched
//     route pattern, never the raw path;
//   - operations with a duration (store queries, refreshes, syncs, safety
//     scans, MCP calls), from the marks of internal/obs (Observer);
//   - loads and file reads, from service.OnActivation (Activation);
//
// and reads the service's state (catalog size and generation, the
// receipt backlog and write errors, sessions, remote sources' pins) only
// when scraped (WatchService, GaugeFunc).
//
// Every label's values are bounded: route patterns, kinds, operation
// names, MCP methods and tool names are the code's own (anything else is
// counted under Other), agents are the configured ones (at most
// MaxAgentValues), and skill names appear only when Options.SkillLabels
// is set, at most Options.MaxSkillSeries of them (the rest under Other).
// docs/metrics.md lists every family.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/service"
)

// Other is the label value of everything past a bound: an unknown HTTP
// method or MCP method, a tool not among the server's, an agent past
// MaxAgentValues, a skill past Options.MaxSkillSeries.
const Other = "_other"

// Unrouted is the route label of a request answered before any route
// matched it: refused by authentication or the Host and origin guard, or
// a path of no route's (the API's catch-all answers those as "/").
const Unrouted = "_unrouted"

// Bounds.
const (
	// DefaultMaxSkillSeries is Options.MaxSkillSeries when zero.
	DefaultMaxSkillSeries = 500
	// MaxMaxSkillSeries is the largest Options.MaxSkillSeries accepted.
	MaxMaxSkillSeries = 10_000
	// MaxAgentValues is the most agent label values: agents are
	// configured, so this is a guard, not a limit anyone meets.
	MaxAgentValues = 1000
	// MaxNamesPerKind is the most operation names of one kind: names are
	// code constants, so this too is a guard.
	MaxNamesPerKind = 256
	// MaxRouteValues is the most route label values (patterns are the
	// code's; a guard).
	MaxRouteValues = 512
)

// Options configure the metrics.
type Options struct {
	// SkillLabels adds loadout_skill_uses_total{skill,action}: loads and
	// reads by skill name. Off by default: at thousands of skills it is
	// thousands of series.
	SkillLabels bool
	// MaxSkillSeries caps the skill names that get their own label value
	// (default DefaultMaxSkillSeries, at most MaxMaxSkillSeries): the
	// first ones used keep theirs, later ones count under Other. Each
	// name has at most two series (load and read).
	MaxSkillSeries int
}

// Check says what is wrong with o, naming the config field.
func (o Options) Check() error {
	if o.MaxSkillSeries < 0 || o.MaxSkillSeries > MaxMaxSkillSeries {
		return fmt.Errorf("metrics.maxSkillSeries %d: give 1 to %d (or leave it out for %d)", o.MaxSkillSeries, MaxMaxSkillSeries, DefaultMaxSkillSeries)
	}
	return nil
}

// Metrics holds the registry and the families.
type Metrics struct {
	reg *prometheus.Registry
	opt Options

	httpReqs *prometheus.CounterVec   // route, method, status
	httpDur  *prometheus.HistogramVec // route, method
	httpSer  cowMap[*routeSeries]     // by route
	routes   capSet

	ops   *prometheus.CounterVec   // kind, name, outcome
	opDur *prometheus.HistogramVec // kind, name
	opSer sync.Map                 // opKey -> *opSeries
	names [8]capSet                // per kind

	mcpCalls *prometheus.CounterVec   // method, tool, outcome
	mcpDur   *prometheus.HistogramVec // method, tool
	mcpSer   sync.Map                 // string (the mark's name) -> *opSeries

	loads, reads *prometheus.CounterVec // agent, outcome
	actSer       cowMap[*agentSeries]   // by agent
	agents       capSet

	skillUses *prometheus.CounterVec // skill, action (SkillLabels only)
	skillSer  sync.Map               // skillKey -> prometheus.Counter
	skills    capSet
}

// durationBuckets are the histograms' buckets, in seconds: from half a
// millisecond (a cached load takes microseconds, a store query about a
// millisecond) to a minute (a sync of a large repository).
var durationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// New makes the metrics, with the Go runtime's and the process's
// collectors registered.
func New(opt Options) (*Metrics, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if opt.MaxSkillSeries == 0 {
		opt.MaxSkillSeries = DefaultMaxSkillSeries
	}
	m := &Metrics{reg: prometheus.NewRegistry(), opt: opt}
	m.routes.max = MaxRouteValues
	m.agents.max = MaxAgentValues
	m.skills.max = opt.MaxSkillSeries
	for i := range m.names {
		m.names[i].max = MaxNamesPerKind
	}
	m.httpReqs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_http_requests_total",
		Help: "HTTP requests answered, by route pattern (never the raw path), method and status."}, []string{"route", "method", "status"})
	m.httpDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "loadout_http_request_duration_seconds",
		Help: "Time to answer an HTTP request, by route pattern and method (an event stream's whole life).", Buckets: durationBuckets}, []string{"route", "method"})
	m.ops = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_operations_total",
		Help: "Store queries, catalog refreshes, remote syncs and safety scans ended, by kind, name (a code constant) and outcome (ok or error)."}, []string{"kind", "name", "outcome"})
	m.opDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "loadout_operation_duration_seconds",
		Help: "Duration of store queries, catalog refreshes, remote syncs and safety scans, by kind and name.", Buckets: durationBuckets}, []string{"kind", "name"})
	m.mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_mcp_calls_total",
		Help: "MCP requests handled, by method, tool (tools/call only) and outcome (ok or error)."}, []string{"method", "tool", "outcome"})
	m.mcpDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "loadout_mcp_call_duration_seconds",
		Help: "Time to handle an MCP request, by method and tool.", Buckets: durationBuckets}, []string{"method", "tool"})
	m.loads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_activations_total",
		Help: "Skill loads (load_skill, GET /v1/agents/ID/skills/NAME), by agent and outcome (ok, not_found, refused, blocked, error…)."}, []string{"agent", "outcome"})
	m.reads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_file_reads_total",
		Help: "Skill file reads (read_skill_file), by agent and outcome."}, []string{"agent", "outcome"})
	m.reg.MustRegister(m.httpReqs, m.httpDur, m.ops, m.opDur, m.mcpCalls, m.mcpDur, m.loads, m.reads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opt.SkillLabels {
		m.skillUses = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadout_skill_uses_total",
			Help: fmt.Sprintf("Loads and reads by skill (metrics.skillLabels): at most %d skill names, the rest under %s; names not found under _unknown.", opt.MaxSkillSeries, Other)}, []string{"skill", "action"})
		m.reg.MustRegister(m.skillUses)
	}
	return m, nil
}

// Registry is the registry GET /metrics exposes, for tests and for
// collectors of other packages' state.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the exposition in Prometheus's text format. At most one
// scrape runs at a time; one that waits more than 10 s is answered 503.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 1, Timeout: 10 * time.Second})
}

// GaugeFunc registers a gauge read from f at each scrape (sessions,
// streams: state another package holds).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// capSet admits up to max distinct values; past that, values not
// admitted before are Other.
type capSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

// admit returns v if it has, or can get, a place, else Other.
func (c *capSet) admit(v string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v, true
	}
	if len(c.seen) >= c.max {
		return Other, false
	}
	if c.seen == nil {
		c.seen = map[string]struct{}{}
	}
	c.seen[v] = struct{}{}
	return v, true
}

// methodList are the HTTP methods that get their own label value; any
// other is Other.
var methodList = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"}

// methodIndex is m's place in methodList, or len(methodList) for Other.
func methodIndex(m string) int {
	switch m {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "PATCH":
		return 4
	case "DELETE":
		return 5
	case "OPTIONS":
		return 6
	case "CONNECT":
		return 7
	case "TRACE":
		return 8
	}
	return len(methodList)
}

// routeSeries are one route's series, by method and status, made on
// first use: a request whose series exist finds them with one lookup of
// its route (a string) and two array reads, without hashing labels.
type routeSeries struct {
	label   string // the route's label value (Unrouted, Other past the cap)
	methods [len(methodList) + 1]atomic.Pointer[methodSeries]
}

type methodSeries struct {
	d prometheus.Observer
	// slots hold the counters of the statuses seen, in the order seen
	// (a route answers a handful); past len(slots) statuses, a request
	// finds its counter by its labels.
	slots [12]atomic.Pointer[statusSlot]
}

type statusSlot struct {
	status int
	c      prometheus.Counter
}

// ObserveRequest counts one answered HTTP request (httpapi.Measure calls
// it). route is the matched pattern ("" when none matched: Unrouted).
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration) {
	var rs *routeSeries
	if v, ok := m.httpSer.load(route); ok {
		rs = v
	} else {
		rs = m.newRoute(route)
	}
	mi := methodIndex(method)
	ms := rs.methods[mi].Load()
	if ms == nil {
		ms = m.newMethod(rs, mi)
	}
	ms.d.Observe(took.Seconds())
	if status < 100 || status > 599 {
		status = 0
	}
	for i := range ms.slots {
		sl := ms.slots[i].Load()
		if sl == nil {
			sl = m.newStatus(rs, mi, ms, i, status)
		}
		if sl.status == status {
			sl.c.Inc()
			return
		}
	}
	m.httpReqs.WithLabelValues(rs.label, methodLabel(mi), strconv.Itoa(status)).Inc()
}

func methodLabel(mi int) string {
	if mi < len(methodList) {
		return methodList[mi]
	}
	return Other
}

// newRoute finds or makes the series of route. Routes past
// MaxRouteValues share Other's, kept under Other so that the map holds
// at most MaxRouteValues+1 routes whatever the callers send.
func (m *Metrics) newRoute(route string) *routeSeries {
	label := route
	if label == "" {
		label = Unrouted
	}
	key := route
	if v, ok := m.routes.admit(label); !ok {
		label, key = v, "\x00"+Other
	}
	return m.httpSer.loadOrStore(key, &routeSeries{label: label})
}

func (m *Metrics) newMethod(rs *routeSeries, mi int) *methodSeries {
	ms := &methodSeries{d: m.httpDur.WithLabelValues(rs.label, methodLabel(mi))}
	if !rs.methods[mi].CompareAndSwap(nil, ms) {
		return rs.methods[mi].Load()
	}
	return ms
}

// newStatus fills the empty slot i with status's counter, or returns
// what another request put there first.
func (m *Metrics) newStatus(rs *routeSeries, mi int, ms *methodSeries, i, status int) *statusSlot {
	sl := &statusSlot{status: status, c: m.httpReqs.WithLabelValues(rs.label, methodLabel(mi), strconv.Itoa(status))}
	if !ms.slots[i].CompareAndSwap(nil, sl) {
		return ms.slots[i].Load()
	}
	return sl
}

// Activation counts one load or read (service.OnActivation calls it).
func (m *Metrics) Activation(a service.Activation) {
	var as *agentSeries
	if v, ok := m.actSer.load(a.Agent); ok {
		as = v
	} else {
		as = m.newAgent(a.Agent)
	}
	ai := 0
	if a.Action == "read" {
		ai = 1
	}
	oi := outcomeIndex(a.Outcome)
	c := as.c[ai][oi].Load()
	if c == nil {
		c = m.newOutcome(as, ai, oi)
	}
	(*c).Inc()
	if m.skillUses != nil {
		m.skillUse(a)
	}
}

// outcomeList are the activation outcomes that get their own label value
// (catalog's Status codes); any other is Other.
var outcomeList = [...]string{"ok", "not_found", "refused", "too_large", "changed", "error", "blocked"}

func outcomeIndex(o string) int {
	for i, x := range outcomeList {
		if x == o {
			return i
		}
	}
	return len(outcomeList)
}

// agentSeries are one agent's load and read counters by outcome.
type agentSeries struct {
	label string
	c     [2][len(outcomeList) + 1]atomic.Pointer[prometheus.Counter]
}

// newAgent finds or makes agent's series; agents past MaxAgentValues
// share Other's.
func (m *Metrics) newAgent(agent string) *agentSeries {
	label, key := agent, agent
	if v, ok := m.agents.admit(agent); !ok {
		label, key = v, "\x00"+Other
	}
	return m.actSer.loadOrStore(key, &agentSeries{label: label})
}

func (m *Metrics) newOutcome(as *agentSeries, ai, oi int) *prometheus.Counter {
	outcome := Other
	if oi < len(outcomeList) {
		outcome = outcomeList[oi]
	}
	vec := m.loads
	if ai == 1 {
		vec = m.reads
	}
	c := prometheus.Counter(vec.WithLabelValues(as.label, outcome))
	if !as.c[ai][oi].CompareAndSwap(nil, &c) {
		return as.c[ai][oi].Load()
	}
	return &c
}

type skillKey struct{ skill, action string }

// Unknown is the skill label of loads and reads of names that are no
// skill of the agent's (the caller's own text, never a label).
const Unknown = "_unknown"

func (m *Metrics) skillUse(a service.Activation) {
	name := Unknown
	if a.Found {
		name = a.Skill
	}
	action := a.Action
	if action != "load" && action != "read" {
		action = Other
	}
	k := skillKey{name, action}
	if c, ok := m.skillSer.Load(k); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	keep := true
	if name != Unknown {
		if v, ok := m.skills.admit(name); !ok {
			name, keep = v, false
		}
	}
	c := m.skillUses.WithLabelValues(name, action)
	if keep {
		if got, loaded := m.skillSer.LoadOrStore(k, c); loaded {
			c = got.(prometheus.Counter)
		}
	}
	c.Inc()
}

// Observer is the internal/obs observer that turns marks into the
// operation and MCP families. HTTP marks are left to ObserveRequest,
// which knows the status.
func (m *Metrics) Observer() obs.Observer { return observer{m} }

type observer struct{ m *Metrics }

func nop(error) {}

type opKey struct {
	kind obs.Kind
	name string
}

type opSeries struct {
	ok, failed prometheus.Counter
	d          prometheus.Observer
}

func (s *opSeries) end(start time.Time, err error) {
	s.d.Observe(time.Since(start).Seconds())
	if err != nil {
		s.failed.Inc()
	} else {
		s.ok.Inc()
	}
}

func (o observer) Start(ctx context.Context, kind obs.Kind, name string, _ []obs.Attr) (context.Context, func(error)) {
	var s *opSeries
	switch kind {
	case obs.KindHTTP:
		return ctx, nop
	case obs.KindMCP:
		s = o.m.mcpSeries(name)
	default:
		s = o.m.opSeries(kind, name)
	}
	start := time.Now()
	return ctx, func(err error) { s.end(start, err) }
}

func (m *Metrics) opSeries(kind obs.Kind, name string) *opSeries {
	k := opKey{kind, name}
	if s, ok := m.opSer.Load(k); ok {
		return s.(*opSeries)
	}
	kn := kind.String()
	keep := true
	if int(kind) >= len(m.names) || kn == "unknown" {
		kn, keep = Other, false
	}
	if keep {
		if v, ok := m.names[kind].admit(name); !ok {
			name, keep = v, false
		}
	} else {
		name = Other
	}
	s := &opSeries{ok: m.ops.WithLabelValues(kn, name, "ok"), failed: m.ops.WithLabelValues(kn, name, "error"), d: m.opDur.WithLabelValues(kn, name)}
	if keep {
		if got, loaded := m.opSer.LoadOrStore(k, s); loaded {
			return got.(*opSeries)
		}
	}
	return s
}

// mcpMethods are the MCP methods that get their own label value (the
// specification's); a client may send any text as a method.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/roots/list_changed": true,
}

// mcpTools are the server's own tools (mcpserver/tools.go).
var mcpTools = map[string]bool{"load_skill": true, "use_skill": true, "read_skill_file": true, "search_skills": true}

// mcpSeries reads a mark's name: "METHOD", or "tools/call TOOL".
func (m *Metrics) mcpSeries(name string) *opSeries {
	if s, ok := m.mcpSer.Load(name); ok {
		return s.(*opSeries)
	}
	method, tool, keep := name, "", true
	if i := indexByte(name, ' '); i >= 0 {
		method, tool = name[:i], name[i+1:]
	}
	if !mcpMethods[method] {
		method, tool, keep = Other, "", false
	}
	if method != "tools/call" {
		if tool != "" {
			keep = false
		}
		tool = ""
	} else if !mcpTools[tool] {
		tool, keep = Other, false
	}
	s := &opSeries{ok: m.mcpCalls.WithLabelValues(method, tool, "ok"), failed: m.mcpCalls.WithLabelValues(method, tool, "error"), d: m.mcpDur.WithLabelValues(method, tool)}
	if keep {
		if got, loaded := m.mcpSer.LoadOrStore(name, s); loaded {
			return got.(*opSeries)
		}
	}
	return s
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// cowMap is a map read without a lock (an atomic pointer to a map never
// changed once published) and copied on each insert: the keys are routes
// and agents, a few hundred at most, inserted once each, and a plain
// map's string lookup is about half the cost of sync.Map's.
type cowMap[V any] struct {
	p  atomic.Pointer[map[string]V]
	mu sync.Mutex
}

func (c *cowMap[V]) load(k string) (V, bool) {
	if m := c.p.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (c *cowMap[V]) loadOrStore(k string, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.p.Load()
	if old != nil {
		if got, ok := (*old)[k]; ok {
			return got
		}
	}
	next := make(map[string]V, 1+len(derefOr(old)))
	for key, val := range derefOr(old) {
		next[key] = val
	}
	next[k] = v
	c.p.Store(&next)
	return v
}

func derefOr[V any](m *map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	return *m
}
