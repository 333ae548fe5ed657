package config

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/loadout/loadout/store"
)

// OIDCCallbackPath is the web UI's route the provider sends the browser
// back to: the path of OIDC.RedirectURL.
const OIDCCallbackPath = "/ui/oidc/callback"

// Bounds of the "oidc" section.
const (
	// MaxOIDCMappings bounds the entries of oidc.roles.groups and
	// oidc.roles.emailDomains together.
	MaxOIDCMappings = 1000
	// DefaultOIDCRecheck is how often a signed-in user's claims are
	// fetched again (with the refresh token) when oidc.recheck is absent.
	DefaultOIDCRecheck = 5 * time.Minute
	// MinOIDCRecheck is the shortest oidc.recheck.
	MinOIDCRecheck = 10 * time.Second
)

// OIDC is the "oidc" object: sign-in to the web UI with an OpenID
// Connect provider (docs/sign-in.md).
type OIDC struct {
	// Issuer is the provider's issuer URL, exactly as its discovery
	// document (ISSUER/.well-known/openid-configuration) states it.
	Issuer string `json:"issuer"`
	// Name is the provider's name on the sign-in button ("Sign in with
	// NAME"). Default: the issuer's host.
	Name string `json:"name,omitempty"`
	// ClientID is the client registered at the provider for loadout.
	ClientID string `json:"clientId"`
	// ClientSecret is the client's secret, written in the file; better,
	// ClientSecretEnv names the environment variable holding it. Neither:
	// a public client (PKCE alone).
	ClientSecret    Secret `json:"clientSecret,omitempty"`
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
	// RedirectURL is the absolute URL of loadout's callback, as
	// registered at the provider; its path is OIDCCallbackPath.
	RedirectURL string `json:"redirectURL"`
	// Scopes asked for besides "openid". Default: email, profile and
	// offline_access (the refresh token Recheck uses).
	Scopes []string `json:"scopes,omitempty"`
	// Roles maps the ID token's claims to loadout roles.
	Roles OIDCRoles `json:"roles"`
	// Recheck is how often a session's claims are fetched again with its
	// refresh token; the session ends once they map to no role. Default
	// DefaultOIDCRecheck, at least MinOIDCRecheck.
	Recheck Duration `json:"recheck,omitempty"`
	// EndSession sends the browser on sign-out to the provider's
	// end_session_endpoint, when it has one, to end the provider's
	// session too.
	EndSession bool `json:"endSession,omitempty"`
}

// OIDCRoles maps ID-token claims to scopes (roles as in
// docs/governance-roles.md, or agent:ID). A user holds the scopes of
// every group and of their email's domain; none: refused.
type OIDCRoles struct {
	// GroupsClaim is the claim holding the user's groups (default
	// "groups").
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// Groups: group name -> scopes.
	Groups map[string][]string `json:"groups,omitempty"`
	// EmailDomains: domain ("example.com") -> scopes, applied only when
	// the ID token says email_verified: true.
	EmailDomains map[string][]string `json:"emailDomains,omitempty"`
}

// Secret is a secret read from the config: it prints as REDACTED.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "REDACTED"
}

// MarshalText never writes the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads it.
func (s *Secret) UnmarshalText(b []byte) error { *s = Secret(b); return nil }

// Reveal is the secret itself, for the one request that sends it.
func (s Secret) Reveal() string { return string(s) }

// RecheckEvery is Recheck with its default.
func (o *OIDC) RecheckEvery() time.Duration {
	if o.Recheck == 0 {
		return DefaultOIDCRecheck
	}
	return time.Duration(o.Recheck)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (o *OIDC) validate(file string, agents map[string]bool) error {
	bad := func(field, msg string, args ...any) error {
		return &Error{File: file, Field: "oidc." + field, Msg: fmt.Sprintf(msg, args...)}
	}
	iu, err := url.Parse(o.Issuer)
	switch {
	case o.Issuer == "":
		return bad("issuer", "is missing: give the provider's issuer URL, like \"https://login.example.com/realms/main\" (its discovery document is at ISSUER/.well-known/openid-configuration)")
	case err != nil || iu.Host == "" || (iu.Scheme != "https" && iu.Scheme != "http") || iu.RawQuery != "" || iu.Fragment != "":
		return bad("issuer", "%q is not an issuer URL: write https://host[/path], without a query or fragment", o.Issuer)
	case iu.Scheme == "http" && !loopbackHost(iu.Hostname()):
		return bad("issuer", "%q: an issuer must use https (plain http is accepted for a loopback provider only, in tests)", o.Issuer)
	}
	if o.ClientID == "" {
		return bad("clientId", "is missing: give the client id registered for loadout at the provider")
	}
	if o.ClientSecret != "" && o.ClientSecretEnv != "" {
		return bad("clientSecret", "give clientSecret or clientSecretEnv, not both (clientSecretEnv, the name of an environment variable, keeps the secret out of the file)")
	}
	if o.ClientSecretEnv != "" && !envName.MatchString(o.ClientSecretEnv) {
		return bad("clientSecretEnv", "%q is not an environment variable name: give the variable's name (like LOADOUT_OIDC_SECRET), not the secret", o.ClientSecretEnv)
	}
	ru, err := url.Parse(o.RedirectURL)
	switch {
	case o.RedirectURL == "":
		return bad("redirectURL", "is missing: give the absolute URL of loadout's callback as registered at the provider, like \"https://skills.example.com%s\"", OIDCCallbackPath)
	case err != nil || !ru.IsAbs() || ru.Host == "" || (ru.Scheme != "https" && ru.Scheme != "http") || ru.RawQuery != "" || ru.Fragment != "" || ru.User != nil:
		return bad("redirectURL", "%q is not an absolute URL: write https://host[:port]%s, without a query or fragment", o.RedirectURL, OIDCCallbackPath)
	case ru.Path != OIDCCallbackPath:
		return bad("redirectURL", "%q: its path must be %s, the UI's callback route (register the same URL at the provider)", o.RedirectURL, OIDCCallbackPath)
	case ru.Scheme == "http" && !loopbackHost(ru.Hostname()):
		return bad("redirectURL", "%q: use https (plain http only for a loopback address): the session cookie travels on it", o.RedirectURL)
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return bad(fmt.Sprintf("scopes[%d]", i), "%q is not a scope: one word, like \"groups\"", s)
		}
	}
	if o.Recheck < 0 || (o.Recheck > 0 && time.Duration(o.Recheck) < MinOIDCRecheck) {
		return bad("recheck", "%s: give a duration of at least %s, like \"5m\", or leave it out for the default, %s", time.Duration(o.Recheck), MinOIDCRecheck, DefaultOIDCRecheck)
	}
	r := &o.Roles
	if r.GroupsClaim != "" && (strings.ContainsAny(r.GroupsClaim, " \t\r\n") || len(r.GroupsClaim) > 128) {
		return bad("roles.groupsClaim", "%q is not a claim name: one word, like \"groups\"", r.GroupsClaim)
	}
	if len(r.Groups)+len(r.EmailDomains) == 0 {
		return bad("roles", "maps no claim to a role, so nobody could sign in: give roles.groups ({\"GROUP\": [\"viewer\"]}) or roles.emailDomains ({\"example.com\": [\"viewer\"]})")
	}
	if n := len(r.Groups) + len(r.EmailDomains); n > MaxOIDCMappings {
		return bad("roles", "has %d entries, over the %d allowed: map groups of groups at the provider instead", n, MaxOIDCMappings)
	}
	check := func(kind string, m map[string][]string) error {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			field := fmt.Sprintf("roles.%s[%q]", kind, k)
			if k == "" {
				return bad(field, "an empty name matches nothing: remove it")
			}
			if kind == "emailDomains" && (strings.ContainsAny(k, "@ /") || k != strings.ToLower(k)) {
				return bad(field, "%q is not a domain: write it lowercase without @, like \"example.com\" (it matches the part of a verified email after @, exactly)", k)
			}
			if err := store.CheckScopes(m[k]); err != nil {
				return bad(field, "%s", strings.TrimPrefix(err.Error(), "scopes: "))
			}
			for _, sc := range m[k] {
				if strings.HasPrefix(sc, "index:") {
					return bad(field, "%q is a link scope: a person signs in with a role (viewer, author, reviewer, admin) or agent:ID", sc)
				}
				if id, ok := strings.CutPrefix(sc, "agent:"); ok && agents != nil && !agents[id] {
					return bad(field, "%q names no agent of this config: give one of the agents' agentId", sc)
				}
			}
		}
		return nil
	}
	if err := check("groups", r.Groups); err != nil {
		return err
	}
	return check("emailDomains", r.EmailDomains)
}

func loopbackHost(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}
