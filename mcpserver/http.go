package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// Responses to POSTs are single JSON bodies (the SDK's JSONResponse
// option), not SSE streams, which gave more tool calls per second in
// BenchmarkReadSkillFileHTTP (about 4,300-5,200 against 1,800-3,600 on a
// shared 2-core machine). Notifications still flow on the GET stream
// (and on subscriptions/listen, which the SDK always streams).
func HTTPHandler(svc *service.Service, opt Options) http.Handler {
	s := newServer(context.Background(), svc, opt)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: opt.Stateless, Logger: opt.Logger, JSONResponse: true})
	bridged := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := service.PrincipalFrom(r.Context())
		return &auth.TokenInfo{Scopes: p.Scopes, UserID: p.TokenID, Extra: map[string]any{principalExtraKey: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := svc.Loadout(service.PrincipalFrom(r.Context()), s.agent); err != nil {
			writeError(w, err)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		r2.Header = r.Header.Clone()
		r2.Header.Set("Authorization", bridgeToken)
		bridged.ServeHTTP(w, r2)
	})
}

func writeError(w http.ResponseWriter, err error) {
	e := service.AsError(err)
	status := http.StatusInternalServerError
	switch e.Code {
	case service.CodeUnauthorized:
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", "Bearer")
	case service.CodeForbidden:
		status = http.StatusForbidden
	case service.CodeNotFound:
		status = http.StatusNotFound
	}
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
