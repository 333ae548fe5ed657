package attack

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/bench/gen"
)

// genSkills are n skills of bench/gen (SKILL.md, a guide, a script and a
// data file each; only SKILL.md when files is false) as Options.Skills.
func genSkills(t testing.TB, n int, files bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := gen.Skills(n, 1, func(_ int, s gen.Skill) error {
		for _, f := range s.Files {
			if !files && f.Path != "SKILL.md" {
				continue
			}
			m[s.Folder+"/"+f.Path] = string(f.Data)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m
}

var warmedLine = regexp.MustCompile(`well-known indexes built`)

// waitWarm waits until the server logs that its agents' install indexes
// are built (wellknown.Warm), so that what follows measures requests
// only; it gives up after limit and lets the caller measure anyway.
func waitWarm(s *Server, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if warmedLine.MatchString(s.Log()) {
			return true
		}
	}
	return false
}

// mcpCall initializes an MCP session on path and calls one tool; it
// returns the tools/call response body.
func mcpCall(t *testing.T, s *Server, path, tool string, args string) string {
	t.Helper()
	hdr := []string{"Accept", "application/json, text/event-stream"}
	code, h, body := s.Do(t, "POST", path, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`, hdr...)
	if code != 200 {
		t.Fatalf("initialize: %d %s", code, body)
	}
	sid := h.Get("Mcp-Session-Id")
	hdr = append(hdr, "Mcp-Session-Id", sid)
	s.Do(t, "POST", path, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	code, _, body = s.Do(t, "POST", path, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`, hdr...)
	if code != 200 {
		t.Fatalf("tools/call %s: %d %s", tool, code, body)
	}
	return body
}

// TestSearchAmplification: at 20,000 skills a query of one
// common word repeated to a megabyte cost 39 CPU-seconds through MCP's
// search_skills, and the REST route 1.1 s per call within its URL cap. Now
// a query is read to 1024 bytes and 32 distinct words: past either it is
// refused (400, a tool error) naming the cap, and 50 of the dearest
// queries the caps allow cost the server a few CPU-seconds at most.
func TestSearchAmplification(t *testing.T) {
	skills := genSkills(t, 20000, false) // search reads names and descriptions
	Engines(t, func(t *testing.T, engine string) {
		start := time.Now()
		s := Start(t, Options{Engine: engine, Skills: skills})
		started := time.Since(start)
		warmed := waitWarm(s, 120*time.Second)
		t.Logf("%s: started in %s, indexes built %v after %s, server CPU %.1f s", engine, started.Round(time.Millisecond), warmed, time.Since(start).Round(time.Millisecond), s.CPUSeconds(t))
		// The dearest query within the caps: 32 distinct common words,
		// each also a prefix of others, padded with repeats to 1024 bytes.
		words := strings.Fields("use when working with data files review build check generate report deploy test release docs form pdf chart table sync plan scan draft merge split format convert extract inspect publish validate summarize schema")
		q := strings.Join(words[:32], " ")
		for len(q)+len(" use") <= 1024 {
			q += " use"
		}
		restQ := "/v1/agents/coder/search?q=" + url.QueryEscape(q)
		if code, _, body := s.Do(t, "GET", restQ, "", ""); code != 200 || !strings.Contains(body, `"skills":[{`) {
			t.Fatalf("a query at the caps: %d %.300s", code, body)
		}
		before := s.CPUSeconds(t)
		for range 25 {
			if code, _, body := s.Do(t, "GET", restQ, "", ""); code != 200 {
				t.Fatalf("search: %d %.300s", code, body)
			}
		}
		rest := s.CPUSeconds(t) - before

		// Past the caps: refused, naming them.
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/search?q=x"+url.QueryEscape(q), "", ""); code != 400 || !strings.Contains(body, "1024 bytes") {
			t.Errorf("a query of 1025 bytes: %d %.300s", code, body)
		}
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/search?q="+url.QueryEscape(strings.Join(words[:33], " ")), "", ""); code != 400 || !strings.Contains(body, "32 distinct words") {
			t.Errorf("a query of 33 words: %d %.300s", code, body)
		}

		// MCP: half a megabyte of one word (a megabyte is over the MCP
		// body limit) is a tool error; the dearest query allowed is
		// answered.
		before = s.CPUSeconds(t)
		mb := strings.Repeat("use ", 1<<17)
		for range 5 {
			if body := mcpCall(t, s, "/agents/coder/mcp", "search_skills", fmt.Sprintf("{%q:%q}", "query", mb)); !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "1024 bytes") {
				t.Fatalf("a half-megabyte query: %.300s", body)
			}
		}
		for range 20 {
			if body := mcpCall(t, s, "/agents/coder/mcp", "search_skills", fmt.Sprintf("{%q:%q}", "query", q)); strings.Contains(body, `"isError":true`) {
				t.Fatalf("a query at the caps: %.300s", body)
			}
		}
		mcp := s.CPUSeconds(t) - before
		t.Logf("%s: 25 REST searches at the caps cost the server %.2f CPU-s; 5 half-megabyte and 20 capped MCP searches %.2f CPU-s", engine, rest, mcp)
		// Generous: the search itself is about 2 ms at 20,000 skills
		// (BenchmarkSearchWorst20k); the rest is HTTP, MCP sessions and
		// JSON. Before the caps one REST call cost 1.1 s, one MCP call 39 s.
		if rest > 2.5 || mcp > 5 {
			t.Errorf("%s: searches cost %.2f CPU-s (REST, 25 calls) and %.2f (MCP, 25 calls)", engine, rest, mcp)
		}
		s.Healthy(t)
	})
}

// TestIndexBuiltBeforeClients: a fresh server built an agent's
// install index on the first request (1.5 CPU-seconds at 400 skills), and
// under load `npx skills add` gave up after 10 s. Now the index is built
// as the server starts: once it says so, a request for it costs little,
// and concurrent first requests all succeed well within 10 s.
func TestIndexBuiltBeforeClients(t *testing.T) {
	skills := genSkills(t, 400, true)
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Skills: skills})
		// Concurrent clients at once, as installers under load: each must
		// be answered within 10 s (npx skills add's limit).
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
				resp, err := c.Get(s.Base + "/agents/coder/.well-known/agent-skills/index.json")
				if err != nil {
					errs <- err.Error()
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- resp.Status
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("%s: an index request: %s", engine, e)
		}
		if !waitWarm(s, 60*time.Second) {
			t.Errorf("%s: the server never said its install indexes were built:\n%s", engine, tail(s.Log(), 2000))
		}
		s2 := Start(t, Options{Engine: engine, Skills: skills})
		waitWarm(s2, 60*time.Second)
		before := s2.CPUSeconds(t)
		if code, _, body := s2.Do(t, "GET", "/agents/coder/.well-known/agent-skills/index.json", "", ""); code != 200 || !strings.Contains(body, `"skills"`) {
			t.Fatalf("%s: index: %d %.300s", engine, code, body)
		}
		cost := s2.CPUSeconds(t) - before
		t.Logf("%s: the first index request after start cost %.2f CPU-s (400 skills)", engine, cost)
		// Measured: 0.01 CPU-s built in advance, 0.40 built on the request.
		if cost > 0.1 {
			t.Errorf("%s: the first index request cost %.2f CPU-s: the index was built on the request", engine, cost)
		}
	})
}
