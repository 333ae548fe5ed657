package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/service"
)

// reqState is what the middlewares keep for one request: the request id
// (RequestID), the logger and the status writer (Log), the deadline
// writer (Timeouts) and the principal (Auth). It is the request's context
// itself, so the whole chain costs one allocation and one copy of the
// request, however many of the middlewares run: the first one to run
// makes it (stateOf) and the others fill it in. Before, each middleware
// copied the request (WithContext) and allocated its own wrapper and
// context value, about a third of the bytes a cached load allocated.
//
// A reqState is made per request and never reused, so a context that a
// handler keeps past its request (an MCP session's) sees only what its own
// request set.
type reqState struct {
	context.Context // the request's context when the state was made

	id    string
	idHdr [1]string // the X-Request-Id header's value, without an allocation

	// base is Log's logger; logger is base with the request id, made on
	// first use (most requests never log, and With allocates).
	base    *slog.Logger
	logOnce sync.Once
	logger  *slog.Logger

	sw, dw    bool // whether status and deadline below are in use
	status    statusWriter
	deadline  deadlineWriter
	principal service.Principal
	authed    bool // principal was set (Auth)

	// remote and path are the request's, for the audit trail's Caller
	// (callerOf), read only by writes.
	remote, path string
	// start is when Log began the request (zero without Log), for
	// Measure; took is how long it took, as Measure saw it, for Log.
	start time.Time
	took  time.Duration
	// route is the API route pattern that served the request (routed),
	// for Measure.
	route string
	// uiSession: the principal came from the UI's session cookie (the
	// UI's editor calls the API): the audit trail's transport is ui.
	uiSession bool
}

type stateKey struct{}

// Value answers the state's own keys and passes the others on.
func (s *reqState) Value(key any) any {
	switch key.(type) {
	case stateKey:
		return s
	case service.PrincipalKey:
		if s.authed {
			return &s.principal
		}
	case service.CallerKey:
		c := callerOf(s.remote, s.path)
		if s.uiSession {
			c.Transport = "ui"
		}
		return c
	}
	return s.Context.Value(key)
}

// stateOf returns the request's state, making it (and the request copy
// that carries it) when no middleware has yet.
func stateOf(r *http.Request) (*reqState, *http.Request) {
	if s, ok := r.Context().Value(stateKey{}).(*reqState); ok {
		return s, r
	}
	s := &reqState{Context: r.Context(), remote: r.RemoteAddr, path: r.URL.Path}
	return s, r.WithContext(s)
}

// callerOf is the audit trail's Caller of a request: the client's address
// as the connection gives it (without its port; a proxy's own headers are
// not trusted) and the transport its path says.
func callerOf(remote, path string) service.Caller {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	t := "http"
	switch {
	case strings.HasPrefix(path, "/ui/") || path == "/ui":
		t = "ui"
	case path == "/mcp" || strings.HasSuffix(path, "/mcp") || strings.Contains(path, "/mcp/"):
		t = "mcp-http"
	}
	return service.Caller{Addr: remote, Transport: t}
}

// log returns the request's logger: Log's, with the request id attached
// when it has one and info is enabled.
func (s *reqState) log() *slog.Logger {
	s.logOnce.Do(func() {
		s.logger = s.base
		if s.id != "" && s.base.Enabled(s, slog.LevelInfo) {
			s.logger = s.base.With("request_id", s.id)
		}
	})
	return s.logger
}

// withPrincipal returns r acting for p: in the request's state when that
// is the request's context (nothing between could shadow it) and no
// principal is set yet, else in a new context value
// (service.WithPrincipal).
func withPrincipal(r *http.Request, p service.Principal) *http.Request {
	if s, ok := r.Context().(*reqState); ok && !s.authed {
		s.principal, s.authed = p, true
		return r
	}
	return r.WithContext(service.WithPrincipal(r.Context(), p))
}
