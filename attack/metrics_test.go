package attack

// Attacks of helper "metrics" (Prometheus metrics): label cardinality
// through request paths, methods and skill names; GET /metrics with the
// wrong tokens; the metrics token elsewhere; the tokenless metrics
// listener's bounds.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// series counts the sample lines of an exposition and returns them by
// name and labels.
func series(t testing.TB, body string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("not an exposition line: %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// scrapeWith GETs /metrics with tok and returns its series.
func scrapeWith(t testing.TB, s *Server, tok string) map[string]float64 {
	t.Helper()
	code, _, body := s.Do(t, "GET", "/metrics", tok, "")
	if code != 200 {
		t.Fatalf("GET /metrics with the metrics token: %d %s", code, body)
	}
	return series(t, body)
}

// loadoutSeries keeps loadout's own families (the Go runtime's and the
// process's have a fixed set of series).
//
// The operation families (loadout_operations_total and
// loadout_operation_duration_seconds, labelled by kind and name) are left
// out: their series appear as the server first runs each of its own
// operations, some on timers (a usage recount, a listing refresh), whatever
// the requests are; their names are constants of the code, which
// operationSeriesBounded checks instead.
func loadoutSeries(s map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if strings.HasPrefix(k, "loadout_") && !strings.HasPrefix(k, "loadout_operation") {
			out[k] = v
		}
	}
	return out
}

// operationSeriesBounded checks the operation families of a scrape: every
// series names a kind and a name of the code's (a word with no digits, the
// store's method names and the fixed kinds), never a request's text, and
// there are at most maxOperationNames of them.
func operationSeriesBounded(t *testing.T, s map[string]float64) {
	t.Helper()
	const maxOperationNames = 200
	label := regexp.MustCompile(`^loadout_operations_total\{kind="([a-z_]+)",name="([A-Za-z_/ .-]*)",outcome="(ok|error)"\}$`)
	names := map[string]bool{}
	for k := range s {
		if !strings.HasPrefix(k, "loadout_operations_total{") {
			continue
		}
		m := label.FindStringSubmatch(k)
		if m == nil || regexp.MustCompile(`\d`).MatchString(m[2]) {
			t.Errorf("an operation series that is not a kind and a name of the code: %s", k)
			continue
		}
		names[m[1]+" "+m[2]] = true
	}
	if len(names) == 0 {
		t.Error("no operation series at all: the store's and the catalog's marks do not reach the metrics")
	}
	if len(names) > maxOperationNames {
		t.Errorf("%d operation names, more than the code has (%d at most)", len(names), maxOperationNames)
	}
}

// hammer sends n requests (method and path from req(i)) over kept-alive
// connections from workers goroutines, and returns how many were answered.
func hammer(t *testing.T, base, tok string, n, workers int, req func(i int) (string, string)) int64 {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next, answered atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				m, p := req(i)
				r, err := http.NewRequest(m, base+p, nil)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if tok != "" {
					r.Header.Set("Authorization", "Bearer "+tok)
				}
				resp, err := c.Do(r)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Logf("first request error: %v", err)
	}
	return answered.Load()
}

// attackPaths is how many distinct paths the cardinality attack sends:
// LOADOUT_ATTACK_METRICS_PATHS (1000000 for a million), else
// 30,000, which takes a few seconds: the bound checked does not depend on
// the number.
func attackPaths(t *testing.T) int {
	if v := os.Getenv("LOADOUT_ATTACK_METRICS_PATHS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("LOADOUT_ATTACK_METRICS_PATHS=%q: give a positive number", v)
		}
		return n
	}
	return 30_000
}

// pathShapes are paths that reach each kind of handler, each with a part
// the attacker makes distinct: API routes with parameters, the API's
// catch-all, MCP and well-known mounts of agents that do not exist, the
// UI, link URLs, and paths a mux would clean.
var pathShapes = []string{
	"/v1/skills/x%d",
	"/v1/agents/coder/skills/x%d",
	"/v1/agents/coder/skills/deploy/files/x%d.md",
	"/v1/no-such-route-%d",
	"/x%d",
	"/agents/a%d/mcp",
	"/agents/coder/.well-known/x%d",
	"/ui/x%d",
	"/i/x%d/.well-known/agent-skills/index.json",
	"/v1//skills/x%d",
}

// TestMetricsPathCardinality: distinct request paths (30,000 by default,
// a million with LOADOUT_ATTACK_METRICS_PATHS=1000000), over every kind of
// handler, authenticated and not, add no series to /metrics: routes are
// labelled by pattern, never by path. Each shape is sent once first, so
// the series it makes (its pattern and status) exist before; then the
// count of loadout's series must not move at all.
func TestMetricsPathCardinality(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	tok := s.Token(t, "metrics")
	warm := func(i int) (string, string) {
		p := fmt.Sprintf(pathShapes[i%len(pathShapes)], i/len(pathShapes))
		return "GET", p
	}
	// Unauthenticated and authenticated (an admin token) warm-ups: a 401
	// and the routed answer of each shape.
	hammer(t, s.Base, "", 4*len(pathShapes), 4, warm)
	hammer(t, s.Base, s.Admin, 4*len(pathShapes), 4, warm)
	scrapeWith(t, s, tok) // a scrape counts itself after answering: its series are in the next one
	before := loadoutSeries(scrapeWith(t, s, tok))
	n := attackPaths(t)
	start := time.Now()
	got := hammer(t, s.Base, "", n/2, 8, func(i int) (string, string) { return warm(i + 1000) })
	got += hammer(t, s.Base, s.Admin, n-n/2, 8, func(i int) (string, string) { return warm(i + 1000 + n) })
	took := time.Since(start)
	after := loadoutSeries(scrapeWith(t, s, tok))
	if got < int64(n)*99/100 {
		t.Fatalf("only %d of %d requests were answered\n%s", got, n, tail(s.Log(), 2000))
	}
	var added []string
	for k := range after {
		if _, ok := before[k]; !ok {
			added = append(added, k)
		}
	}
	if len(after) != len(before) || len(added) > 0 {
		t.Errorf("%d distinct paths: loadout's series went from %d to %d; new: %v", n, len(before), len(after), added[:min(len(added), 20)])
	}
	operationSeriesBounded(t, scrapeWith(t, s, tok))
	// The requests were counted, under their patterns.
	var counted float64
	for k, v := range after {
		if strings.HasPrefix(k, "loadout_http_requests_total{") {
			counted += v
		}
	}
	if counted < float64(n) {
		t.Errorf("loadout_http_requests_total sums to %v after %d requests", counted, n)
	}
	for k := range after {
		if regexp.MustCompile(`x\d+|a\d+`).MatchString(k) {
			t.Errorf("a path's own text is in a series: %s", k)
		}
	}
	t.Logf("%d distinct paths in %s: loadout's series %d before, %d after", n, took.Round(time.Millisecond), len(before), len(after))
}

// TestMetricsUnknownMethods: 500 distinct made-up methods count under one
// method label value, "_other".
func TestMetricsUnknownMethods(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	tok := s.Token(t, "metrics")
	s.Do(t, "BREW", "/v1/skills", s.Admin, "")
	scrapeWith(t, s, tok)
	before := loadoutSeries(scrapeWith(t, s, tok))
	const n = 500
	for i := range n {
		s.Do(t, fmt.Sprintf("M%dX", i), "/v1/skills", s.Admin, "")
	}
	all := scrapeWith(t, s, tok)
	after := loadoutSeries(all)
	if len(after) != len(before) {
		t.Errorf("%d made-up methods: series %d -> %d", n, len(before), len(after))
	}
	operationSeriesBounded(t, all)
	var other float64
	for k, v := range after {
		if strings.HasPrefix(k, "loadout_http_requests_total{") && strings.Contains(k, `method="_other"`) {
			other += v
		}
		if strings.Contains(k, "M1X") || strings.Contains(k, "BREW") {
			t.Errorf("a made-up method is a label value: %s", k)
		}
	}
	if other != n+1 {
		t.Errorf("method _other counts %v, want %d", other, n+1)
	}
}

// TestMetricsSkillLabelCap: with metrics.skillLabels and maxSkillSeries 3,
// three skills loaded get their own label (at the limit), the fourth
// counts under _other (one past it), and a thousand names that are no
// skill count under _unknown.
func TestMetricsSkillLabelCap(t *testing.T) {
	skills := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("s%d", i)
		skills[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Use when " + name + ".\n---\nBody.\n"
	}
	s := Start(t, Options{Tokens: true, Skills: skills,
		Config: `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}], "metrics": {"skillLabels": true, "maxSkillSeries": 3}}`})
	tok := s.Token(t, "metrics")
	load := func(name string) int {
		code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/"+name, s.Admin, "")
		return code
	}
	count := func(m map[string]float64) (n int) {
		for k := range m {
			if strings.HasPrefix(k, "loadout_skill_uses_total{") {
				n++
			}
		}
		return n
	}
	for i := range 3 {
		if c := load(fmt.Sprintf("s%d", i)); c != 200 {
			t.Fatalf("load s%d: %d", i, c)
		}
	}
	at := scrapeWith(t, s, tok)
	if n := count(at); n != 3 {
		t.Fatalf("at the limit (3 skills): %d skill series, want 3", n)
	}
	load("s3")
	load("s3")
	for i := range 1000 {
		load(fmt.Sprintf("nope-%d", i))
	}
	past := scrapeWith(t, s, tok)
	if n := count(past); n != 5 {
		t.Errorf("one past the limit and 1000 unknown names: %d skill series, want 5 (3 names, _other, _unknown)", n)
	}
	for k, want := range map[string]float64{
		`loadout_skill_uses_total{action="load",skill="s0"}`:       1,
		`loadout_skill_uses_total{action="load",skill="_other"}`:   2,
		`loadout_skill_uses_total{action="load",skill="_unknown"}`: 1000,
	} {
		if past[k] != want {
			t.Errorf("%s = %v, want %v", k, past[k], want)
		}
	}
	for k := range past {
		if strings.Contains(k, `"s3"`) || strings.Contains(k, "nope-") {
			t.Errorf("past the cap, a name is a label: %s", k)
		}
	}
}

// TestMetricsRefusedTokens: GET /metrics is refused to no token (401), a
// wrong one (401), a link token (401), and to agent, viewer, author and
// admin tokens (403, the admin's on purpose); only the metrics token
// reads it. The metrics token is refused everywhere else (401), so the
// token Prometheus holds reads no skill.
func TestMetricsRefusedTokens(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	metricsTok := s.Token(t, "metrics")
	for name, tc := range map[string]struct {
		tok  string
		want int
	}{
		"no token":    {"", 401},
		"wrong token": {"lo_not-a-token", 401},
		"link token":  {linkToken(t, s), 401},
		"agent token": {s.Token(t, "agent:coder"), 403},
		"viewer":      {s.Token(t, "viewer"), 403},
		"author":      {s.Token(t, "author"), 403},
		"admin":       {s.Admin, 403},
	} {
		code, _, body := s.Do(t, "GET", "/metrics", tc.tok, "")
		if code != tc.want {
			t.Errorf("%s: GET /metrics %d, want %d: %s", name, code, tc.want, body)
		}
		if strings.Contains(body, "loadout_") {
			t.Errorf("%s: the refusal carries metrics: %s", name, body)
		}
	}
	if code, _, body := s.Do(t, "GET", "/metrics", metricsTok, ""); code != 200 || !strings.Contains(body, "loadout_http_requests_total") {
		t.Fatalf("metrics token: %d %.200s", code, body)
	}
	for _, p := range []string{"/v1/skills", "/v1/agents", "/v1/openapi.json", "/v1/agents/coder/skills/deploy", "/v1/receipts", "/mcp", "/agents/coder/mcp", "/agents/coder/.well-known/agent-skills/index.json"} {
		code, _, body := s.Do(t, "GET", p, metricsTok, "")
		if code != 401 || strings.Contains(body, "Body of deploy") {
			t.Errorf("metrics token on %s: %d, want 401: %.200s", p, code, body)
		}
	}
	// Nor can it sign in to the UI (with the login form's CSRF token).
	_, _, page := s.Do(t, "GET", "/ui/login", "", "")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token on the login page: %.300s", page)
	}
	form := url.Values{"token": {metricsTok}, "csrf": {csrf[1]}}.Encode()
	code, hdr, body := s.Do(t, "POST", "/ui/login", "", form, "Content-Type", "application/x-www-form-urlencoded", "Origin", s.Base)
	if code != 401 || hdr.Get("Set-Cookie") != "" || !strings.Contains(body, "metrics token") {
		t.Errorf("UI sign-in with the metrics token: %d (cookie %q), want 401 saying it is a metrics token: %.300s", code, hdr.Get("Set-Cookie"), body)
	}
	// A metrics token is its only scope: with admin beside it, refused at creation.
	if _, errOut, c := s.CLI(t, "token", "create", "--db", s.DB, "--scope", "metrics", "--scope", "admin"); c == 0 || !strings.Contains(errOut, "only scope") {
		t.Errorf("metrics + admin token created: exit %d %s", c, errOut)
	}
}

var metricsListenLine = regexp.MustCompile(`msg="metrics listener" addr=(127\.0\.0\.1:\d+)`)

// TestMetricsListenerBounds: metrics.addr serves GET /metrics without a
// token, and nothing else: other paths 404, other methods 405, a Host
// that is not a loopback name 403 (DNS rebinding), headers past 8 KiB
// refused; idle connections past its 16 cannot lock a scraper out. A
// non-loopback metrics.addr is refused unless allowNonLoopback.
func TestMetricsListenerBounds(t *testing.T) {
	s := Start(t, Options{Tokens: true,
		Config: `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}], "metrics": {"addr": "127.0.0.1:0"}}`})
	var addr string
	for deadline := time.Now().Add(5 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := metricsListenLine.FindStringSubmatch(s.Log()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("no metrics listener in the log:\n%s", tail(s.Log(), 2000))
	}
	m := &Server{Base: "http://" + addr}
	if code, _, body := m.Do(t, "GET", "/metrics", "", ""); code != 200 || !strings.Contains(body, "loadout_catalog_skills 2") {
		t.Fatalf("GET /metrics without a token: %d %.200s", code, body)
	}
	for _, c := range []struct {
		method, path string
		hdr          []string
		want         int
	}{
		{"GET", "/v1/skills", nil, 404},
		{"GET", "/v1/agents/coder/skills/deploy", nil, 404},
		{"GET", "/metrics/../v1/skills", nil, 404},
		{"POST", "/metrics", nil, 405},
		{"DELETE", "/metrics", nil, 405},
		{"GET", "/metrics", []string{"Host", "rebound.example.com"}, 403},
		{"GET", "/metrics", []string{"Host", "rebound.example.com:" + strings.Split(addr, ":")[1]}, 403},
	} {
		code, _, body := m.Do(t, c.method, c.path, "", "", c.hdr...)
		if code != c.want {
			t.Errorf("%s %s %v: %d, want %d: %.200s", c.method, c.path, c.hdr, code, c.want, body)
		}
		if strings.Contains(body, "Body of deploy") {
			t.Errorf("%s %s: a skill's body", c.method, c.path)
		}
	}
	// Headers past 8 KiB: 431, never read whole.
	if status := rawStatus(t, addr, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("a", 16<<10)+"\r\n\r\n"); status != "431" {
		t.Errorf("16 KiB of headers: status %q, want 431", status)
	}
	// 40 idle connections (past the listener's 16): a scrape still gets in.
	var idle []net.Conn
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	if code, _, _ := m.Do(t, "GET", "/metrics", "", ""); code != 200 {
		t.Errorf("with %d idle connections open, a scrape got %d", len(idle), code)
	}

	// Not on loopback: refused at start unless allowed.
	dir := t.TempDir()
	WriteFiles(t, dir, map[string]string{"loadout.json": `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}], "metrics": {"addr": "0.0.0.0:0"}}`, "skills/.keep": ""})
	_, errOut, code := CLI(t, dir, nil, "serve", "--addr", "127.0.0.1:0", "--config", dir+"/loadout.json", "--db", dir+"/x.db")
	if code == 0 || !strings.Contains(errOut, "metrics.addr") || !strings.Contains(errOut, "allowNonLoopback") {
		t.Errorf("serve with metrics.addr 0.0.0.0:0: exit %d, want a refusal naming metrics.addr and allowNonLoopback:\n%s", code, errOut)
	}
}

// linkToken creates a link token (index:coder) and returns its secret,
// which token create prints inside the link.
func linkToken(t *testing.T, s *Server) string {
	t.Helper()
	out, errOut, code := s.CLI(t, "token", "create", "--db", s.DB, "--link", "coder")
	m := regexp.MustCompile(`/i/(lo_[A-Za-z0-9_-]+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("token create --link: exit %d\n%s%s", code, out, errOut)
	}
	return m[1]
}

// rawStatus writes req on a new connection to addr and returns the
// status code of the answer ("" when the server closed without one).
func rawStatus(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte(req))
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(c, buf, 12)
	if f := strings.Fields(string(buf[:n])); len(f) >= 2 {
		return f[1]
	}
	return ""
}
