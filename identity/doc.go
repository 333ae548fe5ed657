// Package identity is loadout's link to a company's identity provider:
// OpenID Connect sign-in for the web UI and the validation of OAuth 2.1
// access tokens for the MCP endpoints (loadout as a resource server). It
// is the only package that imports github.com/coreos/go-oidc and
// golang.org/x/oauth2; every request it makes to the provider goes
// through one bounded HTTP client (Client).
package identity
