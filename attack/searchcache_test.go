package attack

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAttackSearchCacheKeepsAgentsApart: GET /v1/agents/{id}/search keeps
// encoded answers. An answer cached for coder's loadout is never another
// agent's: agent:ops asking the same query of coder's route is refused
// (403) even when the answer is cached, and its own route's answer holds
// none of coder's skills. A flood of 3,000 distinct queries (past the
// cache's 1,024 answers) leaves the server's peak RSS under 100 MB, and
// the cached query is still answered right after it.
func TestAttackSearchCacheKeepsAgentsApart(t *testing.T) {
	s := Start(t, Options{Tokens: true, Config: splitAgents, Skills: splitSkills()})
	coder, ops := s.Token(t, "agent:coder"), s.Token(t, "agent:ops")
	q := "/search?q=" + url.QueryEscape("plan the launch")
	for i := range 2 { // the second answer is the cached one
		code, hdr, body := s.Do(t, "GET", "/v1/agents/coder"+q, coder, "")
		if code != http.StatusOK || !strings.Contains(body, "secret-plan") {
			t.Fatalf("control: coder's search %d: %d %.300s", i, code, body)
		}
		if i == 1 && hdr.Get("ETag") == "" {
			t.Errorf("the repeated search has no ETag: is it cached?")
		}
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder"+q, ops, ""); code != http.StatusForbidden || strings.Contains(body, "secret") {
			t.Errorf("agent:ops on coder's search route (answer cached: %v): %d %.300s, want 403", i == 1, code, body)
		}
		if code, _, body := s.Do(t, "GET", "/v1/agents/ops"+q, ops, ""); code != http.StatusOK || strings.Contains(body, "secret") {
			t.Errorf("agent:ops's own search for coder's words: %d %.300s, want 200 without coder's skill", code, body)
		}
	}
	for i := range 3000 {
		if code, _, body := s.Do(t, "GET", fmt.Sprintf("/v1/agents/ops/search?q=flood+%d+%s", i, strings.Repeat("x", 200)), ops, ""); code != http.StatusOK {
			t.Fatalf("flood query %d: %d %.200s", i, code, body)
		}
	}
	if rss := s.PeakRSSMB(t); rss > 100 {
		t.Errorf("peak RSS %.0f MB after 3,000 distinct searches, want under 100", rss)
	}
	if code, _, body := s.Do(t, "GET", "/v1/agents/coder"+q, coder, ""); code != http.StatusOK || !strings.Contains(body, "secret-plan") {
		t.Errorf("coder's search after the flood: %d %.300s", code, body)
	}
	s.Healthy(t)
}
