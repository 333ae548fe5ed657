package service

import (
	"context"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/store"
)

// Principal is who is calling.
type Principal struct {
	TokenID string
	Name    string
	Scopes  []string
	// Open is set when no token was needed (a loopback server without
	// RequireTokens and no bearer given): everything is allowed.
	Open bool
}

// ExternalID reports whether a principal's TokenID names an outside
// identity, NAME:SUB (the subject of an OAuth access token, see
// docs/mcp-auth.md), rather than a loadout token (whose ids hold no
// colon). No token in the store backs it: WatchToken never reports it
// revoked, and the access token's own expiry bounds its use.
func ExternalID(id string) bool { return strings.IndexByte(id, ':') >= 0 }

// Admin reports whether the principal may write and read everything.
func (p Principal) Admin() bool {
	if p.Open {
		return true
	}
	for _, s := range p.Scopes {
		if s == "admin" {
			return true
		}
	}
	return false
}

// CanAgent reports whether the principal may read an agent's loadout. A
// link principal (index:ID, see AuthenticateLink) may read its agent's; it
// exists only inside the link handler, which serves nothing but the
// agent's well-known index.
func (p Principal) CanAgent(id string) bool {
	if p.Admin() {
		return true
	}
	for _, s := range p.Scopes {
		// Compared without building "agent:"+id: this runs twice per
		// request, and a concatenation over 32 bytes allocates.
		if a, ok := strings.CutPrefix(s, "agent:"); ok && a == id {
			return true
		}
		if a, ok := strings.CutPrefix(s, ScopeIndexPrefix); ok && a == id {
			return true
		}
	}
	return false
}

// Metrics reports whether the principal is a metrics token's (scope
// "metrics", its only scope): it may read GET /metrics and nothing else.
func (p Principal) Metrics() bool {
	return len(p.Scopes) == 1 && p.Scopes[0] == store.ScopeMetrics
}

// ScopeIndexPrefix starts a link token's scope, "index:AGENT": it reads
// that agent's well-known indexes and files through the URL
// /i/SECRET/.well-known/…, and nothing else. It is a token's only scope.
const ScopeIndexPrefix = "index:"

// LinkAgent returns the agent of a link token's scopes ("index:AGENT" as
// the only scope), or false for any other token.
func LinkAgent(scopes []string) (string, bool) {
	if len(scopes) != 1 {
		return "", false
	}
	id, ok := strings.CutPrefix(scopes[0], ScopeIndexPrefix)
	return id, ok && id != ""
}

// Authenticate resolves a bearer secret ("" for none) to a principal. An
// unknown token is refused even when tokens are optional, so a typo never
// silently runs with full access. Lookups go through a cache (see
// TokenCacheOptions): a token revoked through this service stops working
// before RevokeToken returns, and one revoked elsewhere as soon as the
// store's token feed says so, within the cache's TTL at worst.
func (s *Service) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	return s.authenticate(ctx, bearer, false)
}

// AuthenticateMetrics is Authenticate for GET /metrics: a metrics token
// (scope "metrics") is accepted too, which Authenticate refuses
// everywhere else. Any other valid token resolves to its principal as
// Authenticate's, for the route's own check to refuse it (an admin token
// included: the token a Prometheus server holds must be one that can do
// nothing else).
func (s *Service) AuthenticateMetrics(ctx context.Context, bearer string) (Principal, error) {
	return s.authenticate(ctx, bearer, true)
}

func (s *Service) authenticate(ctx context.Context, bearer string, metrics bool) (Principal, error) {
	if bearer == "" {
		if s.tokensRequired() {
			return Principal{}, errorf(CodeUnauthorized, "a bearer token is required: create one with 'loadout token create --scope admin' (or --scope agent:ID) and send Authorization: Bearer TOKEN")
		}
		return Principal{Open: true}, nil
	}
	if s.opt.Server == nil {
		return Principal{}, errorf(CodeUnauthorized, "this server has no token store, so bearer tokens cannot be checked")
	}
	tok, err := s.auth.lookup(ctx, bearer)
	if err != nil {
		if store.ErrorCode(err) == store.NotFound {
			return Principal{}, errorf(CodeUnauthorized, "unknown or revoked token")
		}
		return Principal{}, AsError(err)
	}
	// The scopes are checked as token creation checks them: a row that
	// does not parse (written by other means, or by a version that read
	// scopes differently) authenticates nobody.
	if err := store.CheckScopes(tok.Scopes); err != nil {
		return Principal{}, errorf(CodeUnauthorized, "this token's scopes are not valid (%s): revoke it and create another", store.ErrorMessage(err))
	}
	if _, ok := LinkAgent(tok.Scopes); ok {
		// A link token is refused as a bearer everywhere, so it can reach
		// no route but the link handler's well-known index.
		return Principal{}, errorf(CodeUnauthorized, "this is a link token (scope %s): it works only in the URL /i/TOKEN/.well-known/…, not as a bearer token", tok.Scopes[0])
	}
	p := Principal{TokenID: tok.ID, Name: tok.Name, Scopes: tok.Scopes}
	if !metrics && p.Metrics() {
		// A metrics token is refused everywhere but GET /metrics, so the
		// token a Prometheus server holds reads no skill.
		return Principal{}, errorf(CodeUnauthorized, "this is a metrics token (scope metrics): it works only on GET /metrics")
	}
	return p, nil
}

// AuthenticateLink resolves the secret of a link URL (/i/SECRET/…) to its
// principal and agent. Only a link token (scope index:AGENT, its only
// scope) is accepted: admin and agent tokens are refused in URLs, where
// proxies, shell history and browser history keep them, because they
// would leak more than one agent's index. Revocation takes effect as for
// Authenticate (the same cache and token feed).
func (s *Service) AuthenticateLink(ctx context.Context, secret string) (Principal, string, error) {
	if s.opt.Server == nil {
		return Principal{}, "", errorf(CodeUnauthorized, "this server has no token store, so link tokens cannot be checked")
	}
	if secret == "" {
		return Principal{}, "", errorf(CodeUnauthorized, "unknown or revoked link")
	}
	tok, err := s.auth.lookup(ctx, secret)
	if err != nil {
		if store.ErrorCode(err) == store.NotFound {
			return Principal{}, "", errorf(CodeUnauthorized, "unknown or revoked link: ask the operator for a new one ('loadout token create --link AGENT')")
		}
		return Principal{}, "", AsError(err)
	}
	agent, ok := LinkAgent(tok.Scopes)
	if !ok {
		return Principal{}, "", errorf(CodeUnauthorized, "only link tokens ('loadout token create --link AGENT') work in /i/TOKEN/ URLs; send other tokens as Authorization: Bearer TOKEN")
	}
	return Principal{TokenID: tok.ID, Name: tok.Name, Scopes: tok.Scopes}, agent, nil
}

// CreateToken makes a bearer token (admin only) and returns its secret,
// shown once.
func (s *Service) CreateToken(ctx context.Context, p Principal, name string, scopes []string) (string, store.Token, error) {
	if err := s.requireAdmin(p); err != nil {
		return "", store.Token{}, err
	}
	if s.opt.Server == nil {
		return "", store.Token{}, errorf(CodeNoStore, "this server has no token store")
	}
	secret, tok, err := s.opt.Server.CreateToken(ctx, name, scopes)
	if err != nil {
		return "", store.Token{}, AsError(err)
	}
	s.auth.invalidate()
	s.audit(ctx, p, store.AuditRecord{Action: "token.create", Target: "token:" + tok.ID, Detail: "name " + tok.Name + ", scopes " + strings.Join(tok.Scopes, " ")})
	return secret, tok, nil
}

// RevokeToken revokes a token (admin only). Its secret stops
// authenticating on this instance before RevokeToken returns.
func (s *Service) RevokeToken(ctx context.Context, p Principal, id string) error {
	if err := s.requireAdmin(p); err != nil {
		return err
	}
	if s.opt.Server == nil {
		return errorf(CodeNoStore, "this server has no token store")
	}
	err := s.opt.Server.RevokeToken(ctx, id)
	// Even a failed revocation may have committed.
	s.auth.invalidate()
	if err == nil {
		s.audit(ctx, p, store.AuditRecord{Action: "token.revoke", Target: "token:" + id})
	}
	return AsErrorOrNil(err)
}

// Tokens lists the live tokens (admin only), without secrets.
func (s *Service) Tokens(ctx context.Context, p Principal) ([]store.Token, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	if s.opt.Server == nil {
		return []store.Token{}, nil
	}
	toks, err := s.opt.Server.Tokens(ctx)
	return toks, AsErrorOrNil(err)
}

// Loadout returns the loadout a principal may read as an agent: an
// agent's (agent:ID or admin), or the global catalog for "" or "*" (admin
// only). Roles below admin read skills through their own checks
// (RequireRole), not through an agent's loadout. A refusal
// reveals nothing about whether the agent exists.
func (s *Service) Loadout(p Principal, agentID string) (*catalog.Loadout, error) {
	if agentID == "" {
		agentID = catalog.GlobalID
	}
	if agentID == catalog.GlobalID {
		// An agent's rights over the global catalog (MCP at /mcp, the
		// well-known index, load receipts as "*") are an admin's, as
		// before roles: a viewer reads skills through the API's routes,
		// and has no agent rights without agent:ID.
		if !p.Admin() {
			return nil, errorf(CodeForbidden, "the global catalog needs an admin token; agent tokens use /agents/ID/…")
		}
		return s.cat.Global(), nil
	}
	if !p.CanAgent(agentID) {
		return nil, errorf(CodeForbidden, "this token may not read that agent")
	}
	l, ok := s.cat.Agent(agentID)
	if !ok {
		return nil, errorf(CodeNotFound, "no agent %q: agents are %s", agentID, strings.Join(s.cat.AgentIDs(), ", "))
	}
	return l, nil
}

func (s *Service) requireAdmin(p Principal) error {
	if !p.Admin() {
		return errorf(CodeForbidden, "this needs an admin token")
	}
	return nil
}

// PrincipalKey is the context key of the request's principal. Its value
// is a Principal (WithPrincipal) or a *Principal: a transport that keeps
// its per-request state in a context of its own may answer
// Value(PrincipalKey{}) with a pointer into that state once it has
// authenticated the request, which spares the request a copy and a
// context value (httpapi does). PrincipalFrom reads either.
type PrincipalKey struct{}

// WithPrincipal returns ctx carrying p; transports set it once per request
// (the HTTP auth middleware, the stdio MCP server) and handlers read it.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, PrincipalKey{}, p)
}

// PrincipalFrom returns the principal in ctx; without one it is the zero
// Principal, which may do nothing.
func PrincipalFrom(ctx context.Context) Principal {
	switch p := ctx.Value(PrincipalKey{}).(type) {
	case Principal:
		return p
	case *Principal:
		if p != nil {
			return *p
		}
	}
	return Principal{}
}

// LinkPrefix starts a link URL: /i/SECRET/.well-known/agent-skills/… (and
// the legacy /i/SECRET/.well-known/skills/…) serve the well-known index of
// the agent the link token names, to clients that cannot send an
// Authorization header (npx skills add URL).
const LinkPrefix = "/i/"

// RedactLinkPath replaces the secret of a link URL's path with
// "REDACTED", for logs; other paths are returned as they are.
func RedactLinkPath(p string) string {
	rest, ok := strings.CutPrefix(p, LinkPrefix)
	if !ok {
		return p
	}
	if _, after, ok := strings.Cut(rest, "/"); ok {
		return LinkPrefix + "REDACTED/" + after
	}
	return LinkPrefix + "REDACTED"
}

// Roles, from least to most. Each holds the ones before it.
const (
	RoleViewer   = "viewer"
	RoleAuthor   = "author"
	RoleReviewer = "reviewer"
	RoleAdmin    = "admin"
)
