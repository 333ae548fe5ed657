package attack

import (
	"net/http"
	"strings"
	"testing"
)

// TestAttackAPIFastRoute: a plain /v1/ path skips serve's two outer muxes
// on its way to the API (cmd/loadout apiRoute). Nothing around the API may
// be skipped with it: the Host guard, the bearer check and the agent's
// scope still hold on that route, and a path a mux would clean (a double
// slash, dot segments, an escaped slash) still gets the mux's redirect or
// refusal, never the skill's bytes.
func TestAttackAPIFastRoute(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	coder := s.Token(t, "agent:coder")
	ops := s.Token(t, "agent:ops")
	const load = "/v1/agents/coder/skills/deploy"
	code, _, skillBody := s.Do(t, "GET", load, coder, "")
	if code != http.StatusOK || !strings.Contains(skillBody, "deploy") {
		t.Fatalf("the control: coder's own load answered %d %.300s, want 200 and the skill", code, skillBody)
	}
	leaks := func(body string) bool { return strings.Contains(body, skillBody) }
	for _, c := range []struct {
		what, path, token string
		hdr               []string
	}{
		{"no token", load, "", nil},
		{"a token of another agent", load, ops, nil},
		{"a foreign Host", load, coder, []string{"Host", "attacker.example:80"}},
		{"a forged bearer", load, "lo_" + strings.Repeat("x", 40), nil},
	} {
		code, _, body := s.Do(t, "GET", c.path, c.token, "", c.hdr...)
		if code == http.StatusOK || leaks(body) {
			t.Errorf("%s: %d %.300s, want a refusal", c.what, code, body)
		}
	}
	// Paths a ServeMux cleans: still redirected to their clean form, as
	// before the fast route, with no skill in the answer.
	for p, clean := range map[string]string{
		"/v1//agents/coder/skills/deploy":       load,
		"/v1/agents/coder/./skills/deploy":      load,
		"/v1/agents/ops/../coder/skills/deploy": load,
		"/v1/agents/coder/skills/deploy/..":     "/v1/agents/coder/skills",
	} {
		code, hdr, body := s.Do(t, "GET", p, coder, "")
		if code != http.StatusTemporaryRedirect && code != http.StatusMovedPermanently || hdr.Get("Location") != clean || leaks(body) {
			t.Errorf("GET %s: %d (Location %q) %.200s, want the mux's redirect to %s", p, code, hdr.Get("Location"), body, clean)
		}
	}
	// An escaped slash keeps its escape (RawPath): it goes through the
	// muxes and names no skill.
	if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/de%2Fploy", coder, ""); code == http.StatusOK || leaks(body) {
		t.Errorf("an escaped slash in the skill's name: %d %.300s, want a refusal", code, body)
	}
	// The fast route changes nothing for what is not under /v1/.
	if code, _, _ := s.Do(t, "GET", "/healthz", "", ""); code != http.StatusOK {
		t.Errorf("GET /healthz: %d, want 200", code)
	}
}
