package main

import (
	"fmt"
	"net/url"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/webui"
)

// defaultOIDCScopes are asked for when oidc.scopes is absent: the email
// (for the header and emailDomains), the profile, and offline_access for
// the refresh token the session's re-check uses.
var defaultOIDCScopes = []string{"email", "profile", "offline_access"}

// signInOptions turns the config's "oidc" section into the UI's sign-in
// with the identity provider; nil without one. The provider is not
// contacted here (the first sign-in reads its discovery document), so a
// provider that is down does not keep the server from starting.
func signInOptions(cfg *config.File, getenv func(string) string) (*webui.SignInOptions, error) {
	if cfg == nil || cfg.OIDC == nil {
		return nil, nil
	}
	o := cfg.OIDC
	secret := o.ClientSecret.Reveal()
	if o.ClientSecretEnv != "" {
		secret = getenv(o.ClientSecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("%s: oidc.clientSecretEnv: the environment variable %s is not set (or empty): set it to the client secret the provider gave, or remove clientSecretEnv for a public client", cfg.Path, o.ClientSecretEnv)
		}
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = defaultOIDCScopes
	}
	p, err := identity.NewSignIn(identity.SignInConfig{
		Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: secret, RedirectURL: o.RedirectURL, Scopes: scopes,
		Roles: identity.RoleMap{GroupsClaim: o.Roles.GroupsClaim, Groups: o.Roles.Groups, EmailDomains: o.Roles.EmailDomains},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: oidc: %w", cfg.Path, err)
	}
	name := o.Name
	if name == "" {
		if u, err := url.Parse(o.Issuer); err == nil {
			name = u.Host
		}
	}
	return &webui.SignInOptions{Provider: p, Name: name, Recheck: o.RecheckEvery(), EndSession: o.EndSession}, nil
}
