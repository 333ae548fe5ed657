package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// PRMPrefix is the well-known path of OAuth 2.0 protected resource
// metadata (RFC 9728 §3): a resource at https://host/PATH has its metadata
// at https://host/.well-known/oauth-protected-resource/PATH.
const PRMPrefix = "/.well-known/oauth-protected-resource"

// Grant maps a token's scope or group to a loadout scope ("admin" or
// "agent:ID"): a token holding Scope (in its scope claim) or Group (in
// its groups claim) is granted Grant. One of Scope and Group is set.
type Grant struct {
	Scope string
	Group string
	Grant string
}

// ResourceOptions configure a ResourceServer.
type ResourceOptions struct {
	AccessOptions
	// PublicURL is the server's canonical base URL
	// ("https://skills.example.com", or with a path prefix a proxy
	// adds): an endpoint's resource URI is PublicURL + its path. Empty:
	// the scheme and Host of each request (set it behind a proxy).
	PublicURL string
	// Audiences are audiences accepted beside each endpoint's resource
	// URI, for authorization servers that cannot put the RFC 8707
	// resource in the audience.
	Audiences []string
	// Scopes are the scopes every client asks for (beside the scopes of
	// the grants of the endpoint it calls).
	Scopes []string
	// Grants map scopes and groups to loadout scopes, in order.
	Grants []Grant
	// Documentation is a URL of human-readable documentation, given as
	// resource_documentation (optional).
	Documentation string
}

// ResourceServer is loadout as an OAuth 2.1 resource server for its MCP
// endpoints, as the MCP specification's authorization section has it:
// protected resource metadata per endpoint (RFC 9728), the bearer
// challenges of 401 and 403, and access tokens bound to the endpoint
// (RFC 8707), mapped to loadout scopes.
type ResourceServer struct {
	opt ResourceOptions
	v   *AccessVerifier
}

// NewResourceServer checks opt and returns the resource server.
func NewResourceServer(opt ResourceOptions) (*ResourceServer, error) {
	opt.PublicURL = strings.TrimSuffix(opt.PublicURL, "/")
	for i, g := range opt.Grants {
		if (g.Scope == "") == (g.Group == "") {
			return nil, fmt.Errorf("grants[%d]: give a scope or a group, not both", i)
		}
		if g.Grant == "" {
			return nil, fmt.Errorf("grants[%d]: no grant", i)
		}
	}
	v, err := NewAccessVerifier(opt.AccessOptions)
	if err != nil {
		return nil, err
	}
	return &ResourceServer{opt: opt, v: v}, nil
}

// Issuers are the configured issuers, in order.
func (rs *ResourceServer) Issuers() []string {
	out := make([]string, len(rs.opt.Issuers))
	for i, is := range rs.opt.Issuers {
		out[i] = is.Issuer
	}
	return out
}

// Verifier is the access token verifier.
func (rs *ResourceServer) Verifier() *AccessVerifier { return rs.v }

// Base is the canonical base URL for r: PublicURL, else r's scheme and
// Host (the Host the server's guard allowed).
func (rs *ResourceServer) Base(r *http.Request) string {
	if rs.opt.PublicURL != "" {
		return rs.opt.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Resource is the canonical URI of the endpoint at path (RFC 8707 §2).
func (rs *ResourceServer) Resource(r *http.Request, path string) string {
	return rs.Base(r) + path
}

// MetadataURL is where the endpoint at path has its protected resource
// metadata.
func (rs *ResourceServer) MetadataURL(r *http.Request, path string) string {
	return rs.Base(r) + PRMPrefix + path
}

// Scopes are the scopes a client asks for to call an endpoint that
// needs one of grants: the configured scopes, then the scopes of the
// scope rules granting one of them.
func (rs *ResourceServer) Scopes(grants ...string) []string {
	out := slices.Clone(rs.opt.Scopes)
	for _, g := range rs.opt.Grants {
		if g.Scope != "" && slices.Contains(grants, g.Grant) && !slices.Contains(out, g.Scope) {
			out = append(out, g.Scope)
		}
	}
	return out
}

// AllScopes are every scope the server knows: scopes_supported.
func (rs *ResourceServer) AllScopes() []string {
	out := slices.Clone(rs.opt.Scopes)
	for _, g := range rs.opt.Grants {
		if g.Scope != "" && !slices.Contains(out, g.Scope) {
			out = append(out, g.Scope)
		}
	}
	return out
}

// Metadata is the protected resource metadata (RFC 9728 §2) of the
// endpoint at path, whose callers need one of grants.
func (rs *ResourceServer) Metadata(r *http.Request, path string, grants ...string) []byte {
	servers := make([]string, len(rs.opt.Issuers))
	for i, is := range rs.opt.Issuers {
		servers[i] = is.Issuer
	}
	m := map[string]any{
		"resource":                 rs.Resource(r, path),
		"authorization_servers":    servers,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "loadout skills (" + path + ")",
	}
	if sc := rs.Scopes(grants...); len(sc) > 0 {
		m["scopes_supported"] = sc
	}
	algs := rs.v.opt.Algorithms
	m["resource_signing_alg_values_supported"] = algs
	if rs.opt.Documentation != "" {
		m["resource_documentation"] = rs.opt.Documentation
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}

// Challenge is the WWW-Authenticate value for the endpoint at path
// (RFC 6750 §3, RFC 9728 §5.1): resource_metadata, the scope to ask for,
// and error (invalid_token, insufficient_scope) with its description
// when there is one. desc must hold no double quote or backslash; they
// are replaced.
func (rs *ResourceServer) Challenge(r *http.Request, path, errCode, desc string, grants ...string) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="`)
	b.WriteString(rs.MetadataURL(r, path))
	b.WriteByte('"')
	if sc := rs.Scopes(grants...); len(sc) > 0 {
		b.WriteString(`, scope="`)
		b.WriteString(strings.Join(sc, " "))
		b.WriteByte('"')
	}
	if errCode != "" {
		b.WriteString(`, error="`)
		b.WriteString(errCode)
		b.WriteByte('"')
	}
	if desc != "" {
		b.WriteString(`, error_description="`)
		b.WriteString(quotable(desc))
		b.WriteByte('"')
	}
	return b.String()
}

// quotable makes s fit a quoted-string of a challenge: printable ASCII
// without a double quote or backslash, at most 300 bytes.
func quotable(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(b) < 300; i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\'')
		case c < ' ' || c > '~':
			b = append(b, '?')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// Access is a validated access token and what it grants.
type Access struct {
	Token *AccessToken
	// Grants are the loadout scopes its scopes and groups map to, in the
	// order of the grant rules, each once; none when nothing matched.
	Grants []string
}

// ID is the token's subject as loadout names it: NAME:SUB, NAME the
// issuer's name (default "oauth"). Sessions, receipts and the audit
// trail carry it.
func (a *Access) ID() string { return a.Token.IssuerName + ":" + a.Token.Subject }

// Authorize validates raw for the endpoint at path: its audience must be
// the endpoint's resource URI (or an extra configured audience). It
// returns ErrNotAccessToken for a bearer that is not a JWT of a configured
// issuer (the caller checks it as one of its own tokens) and an
// *AccessError for one that is but is not valid.
func (rs *ResourceServer) Authorize(ctx context.Context, r *http.Request, raw, path string) (*Access, error) {
	auds := append([]string{rs.Resource(r, path)}, rs.opt.Audiences...)
	tok, err := rs.v.Verify(ctx, raw, auds)
	if err != nil {
		return nil, err
	}
	a := &Access{Token: tok}
	for _, g := range rs.opt.Grants {
		if g.Scope != "" && slices.Contains(tok.Scopes, g.Scope) || g.Group != "" && slices.Contains(tok.Groups, g.Group) {
			if !slices.Contains(a.Grants, g.Grant) {
				a.Grants = append(a.Grants, g.Grant)
			}
		}
	}
	return a, nil
}

// IsAccessError reports whether err is a token's refusal (an
// *AccessError), and its reason.
func IsAccessError(err error) (string, bool) {
	var ae *AccessError
	if errors.As(err, &ae) {
		return ae.Reason, true
	}
	return "", false
}
