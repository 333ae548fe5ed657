package attack

import (
	"strings"
	"testing"
)

// TestHarnessTokenMode checks the harness itself on both engines, with the
// first attack any server meets: a request without a token, or with a
// guessed one, once tokens exist. Both are refused, the admin's token works,
// and the server stops within the bound.
func TestHarnessTokenMode(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Tokens: true})
		s.Healthy(t)
		for _, tok := range []string{"", "lo_guessed", s.Admin + "x"} {
			if code, _, body := s.Do(t, "GET", "/v1/skills", tok, ""); code != 401 {
				t.Errorf("GET /v1/skills with token %q: %d, want 401\n%s", tok, code, body)
			}
		}
		code, _, body := s.Do(t, "GET", "/v1/skills", s.Admin, "")
		if code != 200 || !strings.Contains(body, "deploy") {
			t.Fatalf("GET /v1/skills as admin: %d\n%s", code, body)
		}
		agent := s.Token(t, "agent:coder")
		if code, _, _ := s.Do(t, "POST", "/v1/skills", agent, `{"content":"---\nname: x\ndescription: y\n---\nz\n"}`); code != 403 {
			t.Errorf("an agent token creating a skill: %d, want 403", code)
		}
		if rss := s.PeakRSSMB(t); rss <= 0 || rss > 200 {
			t.Errorf("peak RSS %.1f MB, want within (0, 200]", rss)
		}
		if cpu := s.CPUSeconds(t); cpu < 0 || cpu > 30 {
			t.Errorf("CPU %.2f s", cpu)
		}
		if d := s.Stop(t); d.Seconds() > 5 {
			t.Errorf("shutdown took %v, want under 5 s", d)
		}
	})
}
