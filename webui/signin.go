package webui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/service"
)

// Sign-in with the company's identity provider (OpenID Connect), beside
// the token form (docs/sign-in.md):
//
//   - GET /ui/oidc/start?next=PATH, on the redirect URL's host (a start on
//     another host is sent there first, so that the state cookie comes
//     back with the provider's redirect), starts a sign-in (identity.SignIn.Start:
//     state, nonce and PKCE verifier kept server-side, bounded), sets the
//     cookie loadout_oidc (the state; HttpOnly, SameSite=Lax so that it
//     comes back with the provider's redirect, Path=/ui/oidc/, as long as
//     a pending sign-in lives) and sends the browser to the provider. A
//     link, not a form: the CSP's form-action 'self' would stop a form's
//     redirect to the provider.
//   - GET /ui/oidc/callback (the configured redirect URL) finishes it
//     (identity.SignIn.Finish: the state must equal the cookie's and be
//     pending, once; the code is exchanged with the verifier; the ID token
//     is verified with the nonce; the claims are mapped to roles), and
//     starts a service session exactly like a token's
//     (service.StartExternalSession): the same cookie, CSRF token, idle
//     and lifetime limits, per-person cap and sign-out. Its principal is
//     "oidc:SUBJECT", named by the email, with the mapped scopes.
//   - With a refresh token, the session asks the provider again every
//     SignInOptions.Recheck; it ends once the claims map to no role (a
//     person removed from the mapped group). Without one, the roles hold
//     until the session ends (idle or lifetime) and change at the next
//     sign-in.

// SignInOptions turn on sign-in with an OpenID provider.
type SignInOptions struct {
	Provider *identity.SignIn
	// Name is the provider's name on the button ("Sign in with NAME").
	Name string
	// Recheck is how often a session's claims are fetched again with its
	// refresh token (default 5 minutes).
	Recheck time.Duration
	// EndSession sends the browser to the provider's end_session_endpoint
	// after signing out, when it has one.
	EndSession bool
}

// StateCookie holds a pending sign-in's state.
const StateCookie = "loadout_oidc"

const oidcPrefix = "/ui/oidc/"

// maxShownGroups bounds the groups a refusal page lists.
const maxShownGroups = 50

func (u *ui) stateCookie(r *http.Request, state string, maxAge int) *http.Cookie {
	c := sessionCookie(r, state, maxAge)
	c.Name, c.Path, c.SameSite = StateCookie, oidcPrefix, http.SameSiteLaxMode
	return c
}

func (u *ui) oidcStart(w http.ResponseWriter, r *http.Request) {
	so := u.opt.SignIn
	if so == nil {
		http.NotFound(w, r)
		return
	}
	// The state cookie must be set on the host the provider sends the
	// browser back to: a start on another name of this server (localhost
	// for 127.0.0.1, an internal name) goes there first, once (moved=1:
	// behind a proxy that rewrites the Host header the names never agree,
	// and the start goes on rather than loop).
	if ru, err := url.Parse(so.Provider.RedirectURL()); err == nil && !strings.EqualFold(ru.Host, r.Host) && !r.URL.Query().Has("moved") {
		http.Redirect(w, r, ru.Scheme+"://"+ru.Host+oidcPrefix+"start?moved=1&next="+url.QueryEscape(safeNext(r.URL.Query().Get("next"))), http.StatusSeeOther)
		return
	}
	next := safeNext(r.URL.Query().Get("next"))
	if len(next) > identity.MaxNext {
		next = Prefix // a pending sign-in keeps a short path only
	}
	authURL, state, err := so.Provider.Start(r.Context(), next)
	if err != nil {
		u.log.Error("ui: a sign-in with the identity provider could not start", "err", err)
		u.signInFailed(w, r, http.StatusBadGateway, next, "Signing in with "+so.Name+" is not possible right now: "+identityMessage(err)+". Try again in a moment, or sign in with a token; the server log says more.")
		return
	}
	http.SetCookie(w, u.stateCookie(r, state, int(identity.DefaultPendingTTL/time.Second)))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, authURL, http.StatusSeeOther)
}

func identityMessage(err error) string {
	var e *identity.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "the identity provider did not answer"
}

// uiAllowed reports whether scopes let a person into the UI: an
// unlimited role, or an agent's read-only view (the token form's rule).
func uiAllowed(scopes []string) bool {
	p := service.Principal{Scopes: scopes}
	return canRead(p) || slices.ContainsFunc(scopes, func(s string) bool { return strings.HasPrefix(s, "agent:") })
}

func (u *ui) oidcCallback(w http.ResponseWriter, r *http.Request) {
	so := u.opt.SignIn
	if so == nil {
		http.NotFound(w, r)
		return
	}
	var cookieState string
	if c, err := r.Cookie(StateCookie); err == nil {
		cookieState = c.Value
	}
	// The state cookie is spent whatever happens.
	http.SetCookie(w, u.stateCookie(r, "", -1))
	user, err := so.Provider.Finish(r.Context(), r.URL.Query(), cookieState)
	if err != nil {
		u.oidcRefused(w, r, err)
		return
	}
	p := service.Principal{TokenID: "oidc:" + user.Subject, Name: cmp.Or(user.Email, user.Subject), Scopes: user.Scopes}
	if !uiAllowed(user.Scopes) {
		msg := "Your sign-in with " + so.Name + " maps to a role limited to some skills (" + p.Limits() + "), and the UI's lists show every skill, so the UI needs an unlimited role (viewer, author, reviewer or admin) or an agent:ID. Ask the operator to map one of your groups to such a role in oidc.roles."
		u.svc.RecordSignInRefused(r.Context(), p.TokenID, p.Name, "oidc: limited role: "+strings.Join(user.Scopes, " "))
		u.signInFailed(w, r, http.StatusForbidden, user.Next, msg)
		return
	}
	es := service.ExternalSession{Principal: p, Every: so.Recheck, Method: "oidc"}
	if es.Every <= 0 {
		es.Every = 5 * time.Minute
	}
	if user.RefreshToken != "" {
		es.Check = u.recheck(so.Provider, user.Subject, user.RefreshToken)
	} else {
		u.log.Warn("ui: the identity provider gave no refresh token (ask for the offline_access scope): this session's roles are not re-checked; a group change applies at the next sign-in", "user", p.Name)
	}
	id, _, err := u.svc.StartExternalSession(r.Context(), es)
	if err != nil {
		e := service.AsError(err)
		u.log.Warn("ui: a sign-in with the identity provider was refused", "user", p.Name, "err", e.Error())
		u.signInFailed(w, r, http.StatusServiceUnavailable, user.Next, "Signing in was refused: "+e.Message+".")
		return
	}
	http.SetCookie(w, sessionCookie(r, id, 0))
	// The provider's redirect made this a cross-site navigation: the
	// SameSite=Strict session cookie is sent only from a page of this
	// origin, so the browser goes on from one (as bounce does).
	continueTo(w, user.Next)
}

// recheck is the session's re-check: the refresh token, kept here in the
// server's memory only, gets a fresh ID token whose claims are mapped
// again. The service runs one check of a session at a time.
func (u *ui) recheck(p *identity.SignIn, subject, refresh string) func(context.Context) ([]string, bool, error) {
	return func(ctx context.Context) ([]string, bool, error) {
		user, err := p.Refresh(ctx, refresh, subject)
		switch identity.CodeOf(err) {
		case "":
			refresh = user.RefreshToken
			return user.Scopes, uiAllowed(user.Scopes), nil
		case identity.CodeNoRole, identity.CodeExchange, identity.CodeIDToken, identity.CodeClaims:
			u.log.Info("ui: a signed-in user lost their role at the identity provider", "subject", subject, "why", err.Error())
			return nil, false, nil
		}
		return nil, false, err
	}
}

// oidcRefused answers a failed callback: a page that says what happened
// (for no_role, the claims seen), the audit record when the provider
// vouched for a person, and a log line.
func (u *ui) oidcRefused(w http.ResponseWriter, r *http.Request, err error) {
	var e *identity.Error
	if !errors.As(err, &e) {
		e = &identity.Error{Code: "error", Message: "the sign-in failed", Err: err}
	}
	u.log.Warn("ui: a sign-in with the identity provider was refused", "code", e.Code, "err", err.Error())
	msg := "Signing in with " + u.opt.SignIn.Name + " failed (" + e.Code + "): " + e.Message + "."
	status := http.StatusUnauthorized
	switch e.Code {
	case identity.CodeUnreachable:
		status = http.StatusBadGateway
	case identity.CodeNoRole, identity.CodeClaims:
		status = http.StatusForbidden
	}
	if c := e.Claims; c != nil {
		groups := c.Groups
		more := ""
		if len(groups) > maxShownGroups {
			more = fmt.Sprintf(" and %d more", len(groups)-maxShownGroups)
			groups = groups[:maxShownGroups]
		}
		verified := "not verified"
		if c.EmailVerified {
			verified = "verified"
		}
		g := "none"
		if len(groups) > 0 {
			g = strings.Join(groups, ", ") + more
		}
		msg += fmt.Sprintf(" Claims seen: subject %q, email %q (%s), groups: %s. No mapping in oidc.roles (groups, or emailDomains for a verified email) matched them: ask the operator to map one of your groups or your email's domain to a role.", c.Subject, c.Email, verified, g)
		u.svc.RecordSignInRefused(r.Context(), "oidc:"+c.Subject, cmp.Or(c.Email, c.Subject), "oidc: "+e.Code+"; groups: "+g)
	} else if e.Code == identity.CodeIDToken {
		u.svc.RecordSignInRefused(r.Context(), "", "", "oidc: "+e.Code+": "+err.Error())
	}
	u.signInFailed(w, r, status, Prefix, msg)
}

func (u *ui) signInFailed(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	_, err := u.svc.Authenticate(r.Context(), "")
	u.renderLogin(w, r, status, loginData{Next: next, Error: msg, Open: err == nil, Provider: u.providerName(), StartURL: u.startURL(next)})
}

func (u *ui) providerName() string {
	if u.opt.SignIn == nil {
		return ""
	}
	return u.opt.SignIn.Name
}

func (u *ui) startURL(next string) string {
	if u.opt.SignIn == nil {
		return ""
	}
	return oidcPrefix + "start?next=" + url.QueryEscape(next)
}
