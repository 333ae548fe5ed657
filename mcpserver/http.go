package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/service"
)

// bridgeToken is what HTTPHandler puts in the Authorization header of the
// request it hands to the SDK. It is not a secret: the SDK's bearer
// middleware needs a token to call the verifier, and the verifier ignores
// it and reads the principal the caller's auth middleware put in the
// request context. The caller's real bearer never reaches the SDK.
const bridgeToken = "Bearer loadout-principal"

// HTTPHandler serves one agent view over MCP streamable HTTP (mounted at
// /mcp for the global catalog and /agents/{id}/mcp for an agent).
//
// The principal comes from the request context (service.PrincipalFrom),
// set by an auth middleware the caller wraps around this handler. A
// principal that may not read the agent gets 403 (401 for an unknown
// token, 404 for an unknown agent) before the SDK sees the request. For
// requests that pass, the principal travels with each message through the
// SDK's per-request token info, so every tool call, read and receipt is the
// caller's, even on a session another request opened. The token id is the
// session's user id, so a session opened with one token cannot be used
// with another.
//
// Sessions (unless Stateless) are bounded by opt.Sessions: a count and an
// idle timeout, shared by the handlers given the same Sessions.
//
// Responses to POSTs are single JSON bodies (the SDK's JSONResponse
// option), not SSE streams, which gave more tool calls per second in
// BenchmarkReadSkillFileHTTP (about 4,300-5,200 against 1,800-3,600 on a
// shared 2-core machine). Notifications still flow on the GET stream
// (and on subscriptions/listen, which the SDK always streams).
func HTTPHandler(svc *service.Service, opt Options) http.Handler {
	_, h := newHTTPHandler(svc, opt)
	return h
}

func newHTTPHandler(svc *service.Service, opt Options) (*server, http.Handler) {
	if !opt.Stateless && opt.Sessions == nil {
		opt.Sessions = NewSessions(0, 0, opt.Logger)
	}
	s := newServer(context.Background(), svc, opt)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: opt.Stateless, Logger: opt.Logger, JSONResponse: true, DisableLocalhostProtection: opt.HostChecked})
	bridged := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := service.PrincipalFrom(r.Context())
		return &auth.TokenInfo{Scopes: p.Scopes, UserID: p.TokenID, Extra: map[string]any{principalExtraKey: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	pool := opt.Sessions
	return s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := svc.Loadout(service.PrincipalFrom(r.Context()), s.agent); err != nil {
			writeError(w, err)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		r2.Header = r.Header.Clone()
		r2.Header.Set("Authorization", bridgeToken)
		switch sid := r.Header.Get(sessionHeader); {
		case opt.Stateless:
			bridged.ServeHTTP(w, r2)
		case sid != "":
			defer pool.begin(sid)()
			if r.Method != http.MethodDelete {
				bridged.ServeHTTP(w, r2)
				return
			}
			sw := &statusWriter{ResponseWriter: w}
			bridged.ServeHTTP(sw, r2)
			if sw.status == http.StatusNoContent {
				pool.remove(sid)
			}
		case r.Method == http.MethodPost:
			// No session id: this request opens a session.
			if !pool.reserve() {
				w.Header().Set("Retry-After", "10")
				writeErrorStatus(w, http.StatusServiceUnavailable, &service.Error{Code: CodeTooManySessions,
					Message: fmt.Sprintf("the server holds its most MCP sessions (%d), all of them busy: retry later, close sessions you no longer use (DELETE with Mcp-Session-Id), or ask the operator to raise --mcp-sessions", pool.max)})
				return
			}
			defer pool.unreserve()
			bridged.ServeHTTP(w, r2)
			if id := w.Header().Get(sessionHeader); id != "" {
				pool.doneNew(id)
			}
		default:
			bridged.ServeHTTP(w, r2)
		}
	})
}

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func writeError(w http.ResponseWriter, err error) {
	e := service.AsError(err)
	status := errstatus.Of(e.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeErrorStatus(w, status, e)
}

// writeErrorStatus writes the error envelope the HTTP API uses.
func writeErrorStatus(w http.ResponseWriter, status int, e *service.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// ServeStdio serves one agent view over stdin and stdout until ctx ends or
// the client disconnects (`loadout mcp --agent ID`). The caller is the
// local user: the principal is open.
func ServeStdio(ctx context.Context, svc *service.Service, opt Options) error {
	return serveTransport(ctx, svc, opt, &mcp.StdioTransport{})
}

func serveTransport(ctx context.Context, svc *service.Service, opt Options, t mcp.Transport) error {
	p := service.Principal{Open: true}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := newServer(ctx, svc, opt)
	if _, err := svc.Loadout(p, s.agent); err != nil {
		return err
	}
	return s.mcp.Run(service.WithPrincipal(ctx, p), t)
}
