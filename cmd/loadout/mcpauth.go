package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/service"
)

// resourceServerOf builds the OAuth resource server of cfg's mcpAuth
// section, or nil without one.
func resourceServerOf(cfg *config.File) (*identity.ResourceServer, error) {
	if cfg == nil || cfg.MCPAuth == nil {
		return nil, nil
	}
	m := cfg.MCPAuth
	opt := identity.ResourceOptions{
		AccessOptions: identity.AccessOptions{
			Algorithms: m.Algorithms, Leeway: time.Duration(m.Leeway), MaxTokenBytes: m.MaxTokenBytes,
			CacheSize: m.CacheSize, CacheTTL: time.Duration(m.CacheTTL), JWKSRefresh: time.Duration(m.JWKSRefresh),
			Timeout: time.Duration(m.Timeout), GroupsClaim: m.GroupsClaim,
		},
		PublicURL: m.PublicURL, Audiences: m.Audiences, Scopes: m.Scopes,
	}
	for _, is := range m.Issuers {
		opt.Issuers = append(opt.Issuers, identity.AccessIssuer{Issuer: is.Issuer, JWKSURI: is.JWKSURI, Name: is.Name})
	}
	for _, g := range m.Grants {
		opt.Grants = append(opt.Grants, identity.Grant{Scope: g.Scope, Group: g.Group, Grant: g.Grant})
	}
	return identity.NewResourceServer(opt)
}

// mcpAuth puts the OAuth resource server in front of the MCP endpoints
// (/mcp and /agents/{id}/mcp) and serves their protected resource
// metadata (docs/mcp-auth.md):
//
//   - a request without a bearer is answered 401 with the challenge
//     naming the endpoint's metadata and the scope to ask for, even on an
//     open loopback server and with the UI's session cookie: configuring an
//     authorization server means MCP needs authorization;
//   - a bearer that is a JWT of a configured issuer is validated for the
//     endpoint (its audience must be the endpoint's resource URI) and
//     mapped to loadout scopes: invalid, 401 invalid_token; valid but not
//     granted the endpoint's agent, 403 insufficient_scope; else the
//     request acts for NAME:SUB with the granted scopes;
//   - any other bearer goes to loadout's own token check (api) as before,
//     its 401 carrying the OAuth challenge too.
type mcpAuth struct {
	svc    *service.Service
	rs     *identity.ResourceServer
	api    http.Handler // loadout's bearer check, then the routes
	mux    http.Handler // the routes, for requests authorized here
	logger *slog.Logger

	mu       sync.Mutex
	lastFull time.Time // when the token cache's eviction was last logged
}

// endpoint returns the MCP endpoint path of r and the loadout scopes that
// may call it, or ok false when r's path is not an MCP endpoint's.
func endpointOf(path string) (agent string, ok bool) {
	if path == "/mcp" {
		return catalog.GlobalID, true
	}
	rest, ok := strings.CutPrefix(path, "/agents/")
	if !ok {
		return "", false
	}
	id, tail, ok := strings.Cut(rest, "/")
	if !ok || tail != "mcp" || id == "" {
		return "", false
	}
	return id, true
}

// grantsFor are the loadout scopes that may call the endpoint of agent.
func grantsFor(agent string) []string {
	if agent == catalog.GlobalID {
		return []string{"admin"}
	}
	return []string{"agent:" + agent, "admin"}
}

func (m *mcpAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	agent, ok := endpointOf(path)
	if !ok {
		m.api.ServeHTTP(w, r)
		return
	}
	grants := grantsFor(agent)
	h := r.Header.Get("Authorization")
	if h == "" {
		// Not even the web UI's session cookie: MCP hosts send bearers,
		// and no page of the UI calls MCP.
		m.unauthorized(w, r, path, "", "this MCP endpoint needs authorization: get an access token from the authorization server named in its protected resource metadata ("+m.rs.MetadataURL(r, path)+"), for resource "+m.rs.Resource(r, path)+", or send a loadout bearer token", grants)
		return
	}
	scheme, raw, _ := strings.Cut(h, " ")
	raw = strings.TrimSpace(raw)
	if !strings.EqualFold(scheme, "Bearer") || raw == "" {
		m.unauthorized(w, r, path, "invalid_request", `the Authorization header must be "Bearer TOKEN"`, grants)
		return
	}
	a, err := m.rs.Authorize(r.Context(), r, raw, path)
	if errors.Is(err, identity.ErrNotAccessToken) {
		// Not one of the issuers' JWTs: a loadout token, checked as ever.
		m.api.ServeHTTP(&challengeWriter{ResponseWriter: w, m: m, r: r, path: path, grants: grants}, r)
		return
	}
	m.noteCache()
	if err != nil {
		reason, _ := identity.IsAccessError(err)
		m.log(r).Debug("access token refused", "path", path, "reason", reason, "err", err.Error())
		m.unauthorized(w, r, path, "invalid_token", err.Error(), grants, reason)
		return
	}
	p := service.Principal{TokenID: a.ID(), Name: a.ID(), Scopes: a.Grants}
	if _, err := m.svc.Loadout(p, agent); err != nil {
		if e := service.AsError(err); e.Code == service.CodeForbidden {
			msg := "the access token of " + a.ID() + " grants no access to this endpoint: it needs one of the scopes " + strings.Join(m.rs.Scopes(grants...), " ") + " or a group the server maps to " + strings.Join(grants, " or ")
			w.Header().Set("WWW-Authenticate", m.rs.Challenge(r, path, "insufficient_scope", msg, grants...))
			writeAuthError(w, http.StatusForbidden, &service.Error{Code: service.CodeForbidden, Message: msg}, "insufficient_scope")
			return
		}
	}
	ctx := service.WithPrincipal(r.Context(), p)
	if r.Method == http.MethodGet {
		// A stream ends when its token expires; other requests are
		// answered at once.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, a.Token.Expiry)
		defer cancel()
	}
	m.mux.ServeHTTP(w, r.WithContext(ctx))
}

func (m *mcpAuth) log(r *http.Request) *slog.Logger {
	if m.logger != nil {
		return m.logger
	}
	return slog.Default()
}

// noteCache logs, at most once a minute, that the cache of validated
// tokens is full and evicting: a sign that it is smaller than the tokens
// in use, or of a flood of distinct tokens.
func (m *mcpAuth) noteCache() {
	v := m.rs.Verifier()
	if v.CacheEvictions() == 0 {
		return
	}
	m.mu.Lock()
	if time.Since(m.lastFull) < time.Minute {
		m.mu.Unlock()
		return
	}
	m.lastFull = time.Now()
	m.mu.Unlock()
	m.log(nil).Warn("the cache of validated access tokens is full: the oldest are evicted and checked again when they come back (raise mcpAuth.cacheSize if this repeats without an attack)",
		"cache_size", v.CacheSize(), "cached", v.CacheLen(), "evicted", v.CacheEvictions())
}

func (m *mcpAuth) unauthorized(w http.ResponseWriter, r *http.Request, path, code, msg string, grants []string, reason ...string) {
	w.Header().Set("WWW-Authenticate", m.rs.Challenge(r, path, code, msg, grants...))
	writeAuthError(w, http.StatusUnauthorized, &service.Error{Code: service.CodeUnauthorized, Message: msg}, reason...)
}

// writeAuthError writes e in the error envelope every HTTP transport of
// loadout uses; reason, when given, is the access token's refusal as a
// stable word (identity.AccessError's Reason: audience, expired, …), for
// programs, beside the message for people.
func writeAuthError(w http.ResponseWriter, status int, e *service.Error, reason ...string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	body := map[string]any{"code": e.Code, "message": e.Message}
	if len(reason) > 0 && reason[0] != "" {
		body["reason"] = reason[0]
	}
	json.NewEncoder(w).Encode(map[string]any{"error": body})
}

// challengeWriter gives a 401 of loadout's own token check the OAuth
// challenge of the endpoint (error invalid_token), so an OAuth client
// that sent a token loadout does not know finds the way to a new one.
type challengeWriter struct {
	http.ResponseWriter
	m      *mcpAuth
	r      *http.Request
	path   string
	grants []string
	wrote  bool
}

func (c *challengeWriter) WriteHeader(code int) {
	if !c.wrote && code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", c.m.rs.Challenge(c.r, c.path, "invalid_token", "unknown or revoked token: not a loadout token, nor an access token of this server's authorization servers", c.grants...))
	}
	c.wrote = true
	c.ResponseWriter.WriteHeader(code)
}

func (c *challengeWriter) Write(p []byte) (int, error) {
	c.wrote = true
	return c.ResponseWriter.Write(p)
}

func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// servePRM serves the protected resource metadata (RFC 9728) of each MCP
// endpoint at /.well-known/oauth-protected-resource + its path, without
// a token: it holds what a client needs before it has one. An agent that
// does not exist, and any other path, is a JSON 404; so is the root form
// (/.well-known/oauth-protected-resource alone), since each endpoint is a
// resource of its own with its own audience (the 401's resource_metadata
// names the right one).
func (m *mcpAuth) servePRM(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, identity.PRMPrefix)
	agent, ok := endpointOf(path)
	if ok && agent != catalog.GlobalID {
		_, ok = m.svc.Catalog().Agent(agent)
	}
	if !ok {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		writeAuthError(w, http.StatusNotFound, &service.Error{Code: service.CodeNotFound, Message: "no protected resource here: each MCP endpoint has its metadata at " + identity.PRMPrefix + " followed by its path (" + identity.PRMPrefix + "/mcp, " + identity.PRMPrefix + "/agents/ID/mcp), named by its 401's resource_metadata"})
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeAuthError(w, http.StatusMethodNotAllowed, &service.Error{Code: "method_not_allowed", Message: "protected resource metadata is read with GET"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Access-Control-Allow-Origin", "*") // public metadata, read by browser-based clients too
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(m.rs.Metadata(r, path, grantsFor(agent)...))
}

// discoveryOr answers the OAuth discovery paths (errstatus.IsOAuthDiscovery)
// with notAS, and passes every other request to next.
func (m *mcpAuth) discoveryOr(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if errstatus.IsOAuthDiscovery(r.URL.Path) {
			m.notAS(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// notAS answers the authorization server's paths (RFC 8414 and OpenID
// discovery, registration, authorization, token) that a client asks this
// server by mistake: loadout is a resource server, and names its
// authorization servers in each endpoint's protected resource metadata.
func (m *mcpAuth) notAS(w http.ResponseWriter, r *http.Request) {
	writeAuthError(w, http.StatusNotFound, &service.Error{Code: service.CodeNotFound, Message: "this server is an OAuth resource server, not an authorization server: its MCP endpoints take access tokens of " + strings.Join(m.rs.Issuers(), ", ") + ", as each endpoint's protected resource metadata (" + identity.PRMPrefix + "/PATH) says"})
}
