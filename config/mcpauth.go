package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// MCPAuth is the "mcpAuth" object: loadout's MCP endpoints as an OAuth 2.1
// resource server (docs/mcp-auth.md). Access tokens of the issuers are
// accepted on /mcp and /agents/ID/mcp beside loadout's own bearer tokens.
// It is read when serve starts; a change takes effect at restart.
type MCPAuth struct {
	// PublicURL is the server's canonical base URL, as clients reach it
	// ("https://skills.example.com"): each MCP endpoint's resource URI is
	// PublicURL + its path (/mcp, /agents/ID/mcp), the audience its tokens
	// must carry. Empty: the scheme and Host of each request, which is
	// only right without a proxy in front.
	PublicURL string `json:"publicUrl,omitempty"`
	// Issuers are the authorization servers whose access tokens are
	// accepted, listed in each endpoint's protected resource metadata.
	Issuers []MCPAuthIssuer `json:"issuers"`
	// Audiences are further audiences accepted on every endpoint, for an
	// authorization server that cannot put the RFC 8707 resource in the
	// token's aud (a fixed API identifier). Default: none, only each
	// endpoint's own resource URI.
	Audiences []string `json:"audiences,omitempty"`
	// Scopes are scopes every client asks for (scopes_supported, and the
	// scope of each 401's challenge), beside the scopes of the grants of
	// the endpoint it calls.
	Scopes []string `json:"scopes,omitempty"`
	// Grants map a token's scope or group to loadout's "admin" or
	// "agent:ID": each rule gives one of "scope" or "group", and "grant".
	// A token gets every grant whose rule it matches; one matching none is
	// refused with 403 insufficient_scope.
	Grants []MCPAuthGrant `json:"grants"`
	// GroupsClaim is the claim holding the user's groups (default
	// "groups").
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// Algorithms are the accepted signature algorithms (default RS256,
	// RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA);
	// none and the HMAC algorithms are never accepted.
	Algorithms []string `json:"algorithms,omitempty"`
	// Leeway is the clock skew allowed on exp, nbf and iat (default 60s,
	// at most 5m).
	Leeway Duration `json:"leeway,omitempty"`
	// MaxTokenBytes bounds an access token (default 16384, at most 32768,
	// the bound on a request's headers).
	MaxTokenBytes int `json:"maxTokenBytes,omitempty"`
	// CacheSize bounds the validated tokens kept (default 1024); CacheTTL
	// is how long one is kept before its signature is checked again
	// (default 5m, never past its exp).
	CacheSize int      `json:"cacheSize,omitempty"`
	CacheTTL  Duration `json:"cacheTtl,omitempty"`
	// JWKSRefresh is the least time between two fetches of an issuer's
	// keys for a key id it does not list (default 1m, at least 1s).
	JWKSRefresh Duration `json:"jwksRefresh,omitempty"`
	// Timeout bounds one request to an authorization server (discovery,
	// keys; default 5s, at most 1m); its answer is read up to 1 MiB.
	Timeout Duration `json:"timeout,omitempty"`
}

// MCPAuthIssuer is one authorization server.
type MCPAuthIssuer struct {
	// Issuer is its issuer identifier, exactly as in its tokens' iss and
	// its metadata ("https://idp.example.com/realms/main").
	Issuer string `json:"issuer"`
	// JWKSURI is where its signing keys are; default: the jwks_uri of its
	// OpenID Connect discovery document.
	JWKSURI string `json:"jwksUri,omitempty"`
	// Name prefixes its users' subjects in sessions, receipts and the
	// audit trail: NAME:SUB (default "oauth"; required and distinct when
	// there are several issuers).
	Name string `json:"name,omitempty"`
}

// MCPAuthGrant is one rule of MCPAuth.Grants.
type MCPAuthGrant struct {
	Scope string `json:"scope,omitempty"`
	Group string `json:"group,omitempty"`
	// Grant is "admin" (every agent, and /mcp) or "agent:ID".
	Grant string `json:"grant"`
}

// MCPAuth's bounds.
const (
	MaxMCPAuthTokenBytes = 32 << 10
	MaxMCPAuthLeeway     = 5 * time.Minute
	MaxMCPAuthTimeout    = time.Minute
	MinMCPAuthJWKS       = time.Second
)

var mcpAuthAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

func (m *MCPAuth) validate(file string, agents map[string]int) error {
	bad := func(field, format string, args ...any) error {
		return &Error{File: file, Field: "mcpAuth." + field, Msg: fmt.Sprintf(format, args...)}
	}
	if m.PublicURL != "" {
		u, err := url.Parse(m.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return bad("publicUrl", "%q: give the URL clients reach this server at, scheme and host (and a path prefix if a proxy adds one), like \"https://skills.example.com\"", m.PublicURL)
		}
		if u.Scheme == "http" && !oauthLoopback(u.Hostname()) {
			return bad("publicUrl", "%q: OAuth needs https off loopback (the MCP authorization specification requires it): give the https URL your proxy serves", m.PublicURL)
		}
	}
	if len(m.Issuers) == 0 {
		return bad("issuers", "is empty: name at least one authorization server, like [{\"issuer\": \"https://idp.example.com/\"}]")
	}
	names := map[string]int{}
	issuers := map[string]int{}
	for i, is := range m.Issuers {
		f := fmt.Sprintf("issuers[%d]", i)
		if err := checkOAuthURL(is.Issuer); err != nil {
			return bad(f+".issuer", "%q: %v", is.Issuer, err)
		}
		if j, dup := issuers[is.Issuer]; dup {
			return bad(f+".issuer", "%q is already issuers[%d]", is.Issuer, j)
		}
		issuers[is.Issuer] = i
		if is.JWKSURI != "" {
			if err := checkOAuthURL(is.JWKSURI); err != nil {
				return bad(f+".jwksUri", "%q: %v", is.JWKSURI, err)
			}
		}
		name := is.Name
		if name == "" {
			if len(m.Issuers) > 1 {
				return bad(f+".name", "is empty: with several issuers each needs a distinct name (it prefixes its subjects, NAME:SUB)")
			}
			name = "oauth"
		}
		if !validName(name) {
			return bad(f+".name", "%q: use 1 to 32 lowercase letters, digits and dashes", name)
		}
		if j, dup := names[name]; dup {
			return bad(f+".name", "%q is already the name of issuers[%d]", name, j)
		}
		names[name] = i
	}
	for i, a := range m.Audiences {
		if strings.TrimSpace(a) == "" {
			return bad(fmt.Sprintf("audiences[%d]", i), "is empty: give an audience value the authorization server puts in aud, or leave the list out")
		}
	}
	for i, s := range m.Scopes {
		if !validScopeToken(s) {
			return bad(fmt.Sprintf("scopes[%d]", i), "%q is not a scope: printable ASCII without spaces, quotes or backslashes", s)
		}
	}
	if len(m.Grants) == 0 {
		return bad("grants", "is empty: map at least one scope or group to \"admin\" or \"agent:ID\", like [{\"group\": \"developers\", \"grant\": \"agent:coder\"}]")
	}
	for i, g := range m.Grants {
		f := fmt.Sprintf("grants[%d]", i)
		switch {
		case g.Scope == "" && g.Group == "":
			return bad(f, "gives neither scope nor group: give one, the token's scope or group that earns the grant")
		case g.Scope != "" && g.Group != "":
			return bad(f, "gives both scope and group: give one per rule (write two rules for both)")
		case g.Scope != "" && !validScopeToken(g.Scope):
			return bad(f+".scope", "%q is not a scope: printable ASCII without spaces, quotes or backslashes", g.Scope)
		}
		switch id, isAgent := strings.CutPrefix(g.Grant, "agent:"); {
		case g.Grant == "admin":
		case isAgent && id != "":
			if _, ok := agents[id]; !ok && len(agents) > 0 {
				return bad(f+".grant", "%q: no agent %q in this config", g.Grant, id)
			}
		default:
			return bad(f+".grant", "%q: give \"admin\" or \"agent:ID\"", g.Grant)
		}
	}
	for _, a := range m.Algorithms {
		if !slices.Contains(mcpAuthAlgorithms, a) {
			return bad("algorithms", "%q: accepted are %s (never none or HMAC: a resource server shares no secret with the provider)", a, strings.Join(mcpAuthAlgorithms, ", "))
		}
	}
	switch {
	case m.Leeway < 0 || time.Duration(m.Leeway) > MaxMCPAuthLeeway:
		return bad("leeway", "%s: give at most %s (0 or absent for 60s)", time.Duration(m.Leeway), MaxMCPAuthLeeway)
	case m.MaxTokenBytes < 0 || m.MaxTokenBytes > MaxMCPAuthTokenBytes:
		return bad("maxTokenBytes", "%d: give at most %d, the bound on a request's headers (0 or absent for 16384)", m.MaxTokenBytes, MaxMCPAuthTokenBytes)
	case m.CacheSize < 0:
		return bad("cacheSize", "%d is negative (0 or absent for 1024)", m.CacheSize)
	case m.CacheTTL < 0:
		return bad("cacheTtl", "is negative (0 or absent for 5m)")
	case m.JWKSRefresh < 0 || m.JWKSRefresh > 0 && time.Duration(m.JWKSRefresh) < MinMCPAuthJWKS:
		return bad("jwksRefresh", "%s: give at least %s (0 or absent for 1m)", time.Duration(m.JWKSRefresh), MinMCPAuthJWKS)
	case m.Timeout < 0 || time.Duration(m.Timeout) > MaxMCPAuthTimeout:
		return bad("timeout", "%s: give at most %s (0 or absent for 5s)", time.Duration(m.Timeout), MaxMCPAuthTimeout)
	}
	return nil
}

// checkOAuthURL checks an authorization server's URL: absolute, https
// (http on loopback only, for tests and local providers).
func checkOAuthURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("give an absolute https URL, like \"https://idp.example.com/\"")
	}
	if u.Scheme == "http" && !oauthLoopback(u.Hostname()) {
		return fmt.Errorf("must be https (http only on loopback)")
	}
	return nil
}

func oauthLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func validName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// validScopeToken is RFC 6749 §3.3's scope-token: %x21 / %x23-5B / %x5D-7E.
func validScopeToken(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
