package errstatus

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
)

func TestOf(t *testing.T) {
	for code, want := range map[string]int{
		service.CodeUnauthorized: 401, service.CodeForbidden: 403, service.CodeReadOnly: 403,
		service.CodeNotFound: 404, service.CodeConflict: 409, service.CodeNoStore: 409,
		service.CodeInvalid: 422, service.CodeRefused: 400, service.CodeTooLarge: 413,
		"host_not_allowed": 403, "cross_origin": 403, "unsupported_media_type": 415,
		"request_timeout": 408, "method_not_allowed": 405, "precondition_required": 428,
		service.CodeInternal: 500, "something new": 500,
	} {
		if got := Of(code); got != want {
			t.Errorf("Of(%q) = %d, want %d", code, got, want)
		}
	}
}

func TestWriteUnauthorized(t *testing.T) {
	for _, sent := range []bool{false, true} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/v1/skills", nil)
		if sent {
			r.Header.Set("Authorization", "Bearer nope")
		}
		WriteUnauthorized(w, r, &service.Error{Code: service.CodeUnauthorized, Message: "unknown or revoked token"})
		ch := w.Header().Get("WWW-Authenticate")
		if w.Code != 401 || strings.Contains(ch, "invalid_token") != sent || !strings.Contains(ch, `error_description="`+TokenHelp+`"`) || !strings.HasPrefix(ch, `Bearer realm="loadout"`) {
			t.Errorf("sent=%v: %d %q", sent, w.Code, ch)
		}
		if got := w.Body.String(); got != `{"error":{"code":"unauthorized","message":"unknown or revoked token"}}`+"\n" || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("body %q (%s)", got, w.Header().Get("Content-Type"))
		}
	}
	if ch := Challenge(false); strings.Contains(ch, "error=") {
		t.Errorf("a request without credentials gets no error code (RFC 6750 §3.1): %s", ch)
	}
}

func TestOAuthDiscovery(t *testing.T) {
	for p, want := range map[string]bool{
		"/.well-known/oauth-protected-resource": true, "/.well-known/oauth-protected-resource/agents/a/mcp": true,
		"/.well-known/oauth-authorization-server": true, "/.well-known/openid-configuration/mcp": true,
		"/mcp/.well-known/openid-configuration": true, "/register": true, "/token": true, "/authorize": true,
		"/.well-known/skills/index.json": false, "/v1/skills": false, "/mcp": false, "/.well-known/oauth": false,
	} {
		if IsOAuthDiscovery(p) != want {
			t.Errorf("IsOAuthDiscovery(%q) = %v", p, !want)
		}
	}
	w := httptest.NewRecorder()
	NoOAuth(w)
	if w.Code != 404 || !strings.Contains(w.Body.String(), `"code":"not_found"`) || !strings.Contains(w.Body.String(), "loadout token create") {
		t.Errorf("NoOAuth: %d %s", w.Code, w.Body.String())
	}
}
