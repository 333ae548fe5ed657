package wellknown

import "testing"

func TestRedactLinkPath(t *testing.T) {
	for in, want := range map[string]string{
		"/i/lo_secret/.well-known/agent-skills/index.json": "/i/REDACTED/.well-known/agent-skills/index.json",
		"/i/lo_secret": "/i/REDACTED",
		"/i/":          "/i/REDACTED",
		"/v1/skills":   "/v1/skills",
		"/agents/coder/.well-known/skills/index.json": "/agents/coder/.well-known/skills/index.json",
	} {
		if got := RedactLinkPath(in); got != want {
			t.Errorf("RedactLinkPath(%q) = %q, want %q", in, got, want)
		}
	}
}
