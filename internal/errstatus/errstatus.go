// Package errstatus maps loadout's stable error codes (service.Error
// codes, and the HTTP layer's own) to HTTP statuses, in one place for
// every transport that answers over HTTP: the API, MCP over HTTP and the
// well-known routes.
package errstatus

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/loadout/loadout/service"
)

// Of maps an error code to its HTTP status:
//
//	unauthorized 401, forbidden 403, read_only 403, not_found 404,
//	conflict 409 (a stale If-Match, or the name exists), invalid 422,
//	refused 400 (a path refused by skill.CleanPath, in the URL or a body),
//	bad_request 400, too_large 413, precondition_required 428,
//	method_not_allowed 405 (no route for this method; Allow lists those),
//	unsupported_media_type 415, request_timeout 408,
//	host_not_allowed 403, cross_origin 403, blocked 403 (the kill switch),
//	no_store 409 (the server has no store: a state of the server that
//	retrying will not change, so not 503), not_configured 409 (no registry
//	to push to), upstream 502 (the registry refused a push), internal 500.
func Of(code string) int {
	switch code {
	case service.CodeUnauthorized:
		return http.StatusUnauthorized
	case service.CodeForbidden, service.CodeReadOnly, service.CodeCSRF, service.CodeBlocked, "host_not_allowed", "cross_origin":
		return http.StatusForbidden
	case service.CodeNotFound:
		return http.StatusNotFound
	case service.CodeConflict, service.CodeNoStore, service.CodeNotConfigured:
		return http.StatusConflict
	case service.CodeInvalid:
		return http.StatusUnprocessableEntity
	case service.CodeRefused, "bad_request":
		return http.StatusBadRequest
	case service.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case service.CodeUpstream:
		return http.StatusBadGateway
	case "precondition_required":
		return http.StatusPreconditionRequired
	case "unsupported_media_type":
		return http.StatusUnsupportedMediaType
	case "request_timeout":
		return http.StatusRequestTimeout
	case "method_not_allowed":
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// Realm is the realm of the bearer challenge of every 401 loadout sends.
const Realm = "loadout"

// TokenHelp says how to get and send a token: the error_description of
// every 401, and the message of the OAuth discovery 404s (NoOAuth). It
// holds no double quote or backslash, so it fits a quoted
// WWW-Authenticate parameter (RFC 6750 §3).
const TokenHelp = "this server takes a static bearer token, not OAuth: create one with 'loadout token create --scope admin' (or --scope agent:ID) and send the header 'Authorization: Bearer TOKEN' (MCP Inspector: --header 'Authorization: Bearer TOKEN'; mcp-remote: --header 'Authorization:Bearer TOKEN')"

// Challenge is the WWW-Authenticate value of a 401 (RFC 6750 §3): the
// realm; error="invalid_token" when the request sent credentials (none
// for a request without any, as the RFC has it); and an
// error_description saying how to get and send a token, so a client that
// would start OAuth discovery can tell its user what to do instead.
func Challenge(sentCredentials bool) string {
	v := `Bearer realm="` + Realm + `"`
	if sentCredentials {
		v += `, error="invalid_token"`
	}
	return v + `, error_description="` + TokenHelp + `"`
}

// WriteUnauthorized writes a 401 for e (code unauthorized): the challenge
// (Challenge; credentials were sent when r, which may be nil, has an
// Authorization header) and e in the JSON error envelope every HTTP
// transport of loadout uses, {"error": {"code", "message", ...}}. The
// API, MCP over HTTP and the well-known routes all answer a 401 with it.
func WriteUnauthorized(w http.ResponseWriter, r *http.Request, e *service.Error) {
	h := w.Header()
	h.Set("WWW-Authenticate", Challenge(r != nil && r.Header.Get("Authorization") != ""))
	writeJSON(w, http.StatusUnauthorized, e)
}

// OAuth discovery: the paths an OAuth-aware MCP client (the TypeScript
// SDK's, in the Inspector and mcp-remote) asks after a 401 (RFC 9728
// protected resource metadata, RFC 8414 and OpenID Connect authorization
// server metadata, each with the resource's path after it or before it),
// and the endpoints it falls back to when none answers.
var oauthWellKnown = []string{"oauth-protected-resource", "oauth-authorization-server", "openid-configuration"}

// IsOAuthDiscovery reports whether path is one an OAuth client asks while
// looking for an authorization server (see NoOAuth).
func IsOAuthDiscovery(path string) bool {
	switch path {
	case "/register", "/authorize", "/token":
		return true
	}
	if !strings.Contains(path, "/.well-known/") {
		return false // every request passes here: no allocation
	}
	for _, wk := range oauthWellKnownPaths {
		if path == wk || strings.HasPrefix(path, wk) && path[len(wk)] == '/' || strings.HasSuffix(path, wk) {
			return true
		}
	}
	return false
}

// oauthWellKnownPaths are oauthWellKnown's paths, /.well-known/NAME.
var oauthWellKnownPaths = func() []string {
	out := make([]string, len(oauthWellKnown))
	for i, name := range oauthWellKnown {
		out[i] = "/.well-known/" + name
	}
	return out
}()

// NoOAuth answers an OAuth discovery request (IsOAuthDiscovery) with a
// JSON 404 saying this server uses static bearer tokens, so the client's
// error shows the way to a token rather than a failed OAuth flow. It
// needs no token: it tells nothing about the server.
func NoOAuth(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusNotFound, &service.Error{Code: service.CodeNotFound, Message: "no OAuth metadata, client registration or authorization endpoint here: " + TokenHelp})
}

func writeJSON(w http.ResponseWriter, status int, e *service.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": e})
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}
