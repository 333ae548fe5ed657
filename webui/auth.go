package webui

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// How the UI authenticates:
//
//   - Signing in (POST /ui/login) takes a bearer token's secret once and
//     starts a service session (service.StartSession). The cookie
//     loadout_session holds the session id only: HttpOnly, SameSite=Strict,
//     Path=/, Secure when the request came over TLS (or a proxy says
//     X-Forwarded-Proto: https). The token itself is kept nowhere.
//   - Without a session, the open loopback mode (no tokens exist, and the
//     server listens on loopback) is open, as the API is; otherwise a page
//     sends the browser to /ui/login?next=PATH, and next is followed only
//     when it is a path of the UI (no open redirect).
//   - Every request that changes something (not GET, HEAD or OPTIONS)
//     carries a CSRF token: the session's, or, in the open mode and on the
//     login form, a random token made when the process starts. Forms send
//     it as the field "csrf", scripts (window.loadout.api) as the header
//     X-CSRF-Token; authed checks it before any handler runs, on top of the
//     Origin check httpapi.Guard makes of every request. The pages' calls
//     to the JSON API go through httpapi.Auth, which decides a session
//     cookie by the same service.SessionRequest.
//   - POST /ui/logout ends the session and clears the cookie.

// The CSRF token of the open mode and the login form is the UI's own
// (ui.openCSRF): made at New, sent in the page, and never valid on another
// server, nor on another UI of the same process.
func (u *ui) openToken() string {
	u.openCSRFOnce.Do(func() { u.openCSRF = newToken() })
	return u.openCSRF
}

func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webui: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// maxFormBytes bounds the body a form post may have when its CSRF token
// is read from the form itself (a multipart form: urlencoded ones are
// bounded by net/http at 10 MB). Scripts send the header instead, and
// their bodies are left to the handler.
const maxFormBytes = 64 << 20

type authKey struct{}

// authInfo is what authed learned of a request.
type authInfo struct {
	csrf    string
	session bool
}

func withAuth(r *http.Request, p service.Principal, a authInfo) *http.Request {
	ctx := service.WithPrincipal(r.Context(), p)
	return r.WithContext(context.WithValue(ctx, authKey{}, a))
}

// principal is the caller of a UI request.
func principal(r *http.Request) service.Principal {
	return service.PrincipalFrom(r.Context())
}

// csrfToken is the token the page's forms and scripts send back: the
// session's, or the process's in the open mode and on the login page.
func csrfToken(r *http.Request) string {
	a, _ := r.Context().Value(authKey{}).(authInfo)
	return a.csrf
}

// authed wraps a page handler: it resolves the caller (the session
// cookie, else the open loopback mode), sends anyone else to the login
// page, and refuses a state-changing request without the CSRF token.
func (u *ui) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, a, ok := u.caller(r)
		if !ok {
			if r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
				u.bounce(w, r)
				return
			}
			if service.SafeMethod(r.Method) && !wantsJSON(r) {
				next := r.URL.RequestURI()
				http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(next), http.StatusSeeOther)
				return
			}
			u.refuse(w, r, http.StatusUnauthorized, service.CodeUnauthorized, "Sign in again",
				"You are not signed in, or your session ended (signed out, expired, or its token was revoked): sign in again at /ui/login, then repeat what you were doing.")
			return
		}
		r = withAuth(r, p, a)
		if !service.SafeMethod(r.Method) {
			if err := u.checkCSRF(r); err != nil {
				u.refuse(w, r, http.StatusForbidden, service.CodeCSRF, "This request was refused", service.AsError(err).Message)
				return
			}
		}
		h(w, r)
	}
}

// bounce answers a link followed from another site: the SameSite=Strict
// cookie is not sent with such a navigation, so a signed-in browser would
// be asked to sign in again. The page reloads the same URL from this
// origin (a meta refresh, allowed by the CSP), which sends the cookie;
// without a session that request goes to the login page as usual.
func (u *ui) bounce(w http.ResponseWriter, r *http.Request) {
	continueTo(w, r.URL.RequestURI())
}

// continueTo answers a page that sends the browser on to target (a URL
// the server chose, never one from the request).
func continueTo(w http.ResponseWriter, target string) {
	target = template.HTMLEscapeString(target)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>Opening · loadout</title></head><body><main><p><a href="%s">Continue to loadout</a></p></main></body></html>`, target, target)
}

// caller resolves a request's principal: its session, else the open
// mode.
func (u *ui) caller(r *http.Request) (service.Principal, authInfo, bool) {
	if c, err := r.Cookie(service.SessionCookie); err == nil && c.Value != "" {
		if p, csrf, ok := u.svc.Session(r.Context(), c.Value); ok {
			return p, authInfo{csrf: csrf, session: true}, true
		}
		// An ended session's cookie is left alone: should the store
		// have failed to say which tokens are live, it works again once
		// it answers; signing in or out replaces it.
	}
	if p, err := u.svc.Authenticate(r.Context(), ""); err == nil {
		return p, authInfo{csrf: u.openToken()}, true
	}
	return service.Principal{}, authInfo{}, false
}

// sentCSRF is the CSRF token a request carries: the X-CSRF-Token header,
// else a form's csrf field.
func sentCSRF(r *http.Request) string {
	if v := r.Header.Get(service.CSRFHeader); v != "" {
		return v
	}
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		return r.PostFormValue(service.CSRFField)
	case strings.HasPrefix(ct, "multipart/form-data"):
		if r.MultipartForm == nil {
			r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
			if err := r.ParseMultipartForm(8 << 20); err != nil {
				return ""
			}
		}
		return r.PostFormValue(service.CSRFField)
	}
	return ""
}

// checkCSRF refuses a state-changing request whose CSRF token (the
// X-CSRF-Token header or the form field csrf) is not the page's: nil when
// it matches. authed calls it before every handler of a method other than
// GET, HEAD and OPTIONS; handlers need not call it again.
func (u *ui) checkCSRF(r *http.Request) error {
	return service.CheckCSRF(csrfToken(r), sentCSRF(r))
}

// wantsJSON reports whether a request is a script's (it asks for JSON or
// sends the CSRF header), so that a refusal is JSON rather than a page.
func wantsJSON(r *http.Request) bool {
	if WantsHTML(r) {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "json") || r.Header.Get(service.CSRFHeader) != ""
}

// refuse writes a refusal as a page, or as the API's JSON error for a
// script's request.
func (u *ui) refuse(w http.ResponseWriter, r *http.Request, status int, code, title, msg string) {
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
		w.Write(b)
		return
	}
	u.fail(w, r, status, title, msg)
}

// sessionCookie is the session cookie holding id; maxAge -1 clears it.
// Without a max age it lasts until the browser closes (the server ends
// it sooner: service.SessionOptions).
func sessionCookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: service.SessionCookie, Value: id, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	}
}

// safeNext returns next when it is a path of the UI (so that signing in
// never sends the browser to another site), else the UI's home.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, Prefix) || strings.ContainsAny(next, "\\\r\n\t") {
		return Prefix
	}
	pu, err := url.Parse(next)
	if err != nil || pu.Scheme != "" || pu.Host != "" || pu.Opaque != "" || pu.User != nil {
		return Prefix
	}
	clean := path.Clean(pu.Path)
	if !strings.HasPrefix(clean+"/", Prefix) || clean == "/ui/login" || clean == "/ui/logout" {
		return Prefix
	}
	return next
}

type loginData struct {
	Next, Error string
	// Open: the UI is open without signing in (no tokens, loopback).
	Open bool
	// SignedOut: the page follows a sign-out.
	SignedOut bool
	// Provider names the identity provider of the "Sign in with" button,
	// StartURL its link; "" without one.
	Provider, StartURL string
}

func (u *ui) loginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if c, err := r.Cookie(service.SessionCookie); err == nil {
		if _, _, ok := u.svc.Session(r.Context(), c.Value); ok {
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	_, err := u.svc.Authenticate(r.Context(), "")
	d := loginData{Next: next, Open: err == nil, SignedOut: r.URL.Query().Has("signedout"), Provider: u.providerName(), StartURL: u.startURL(next)}
	u.renderLogin(w, r, http.StatusOK, d)
}

func (u *ui) renderLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	if d.Provider == "" && u.opt.SignIn != nil {
		d.Provider, d.StartURL = u.providerName(), u.startURL(d.Next)
	}
	r = withAuth(r, service.Principal{}, authInfo{csrf: u.openToken()})
	if status != http.StatusOK {
		w = &statusWriter{ResponseWriter: w, status: status}
	}
	u.render(w, r, "login.html", page{Title: "Sign in", Data: d})
}

// statusWriter makes render's implicit 200 another status.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.wrote = true
		s.ResponseWriter.WriteHeader(code)
	}
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.WriteHeader(s.status)
	return s.ResponseWriter.Write(b)
}

func (u *ui) login(w http.ResponseWriter, r *http.Request) {
	r = withAuth(r, service.Principal{}, authInfo{csrf: u.openToken()})
	next := safeNext(r.PostFormValue("next"))
	if err := u.checkCSRF(r); err != nil {
		u.renderLogin(w, r, http.StatusForbidden, loginData{Next: next, Error: "This sign-in form has expired (the server restarted, or the page came from elsewhere): sign in again on this page."})
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	// A role limited to some skills does not sign in: the UI's lists
	// (skills, agents, diagnostics, receipts) show every skill. Other
	// failures are StartSession's to report.
	if p, err := u.svc.Authenticate(r.Context(), token); err == nil && p.Role() != "" && !canRead(p) && !slices.ContainsFunc(p.Scopes, func(s string) bool { return strings.HasPrefix(s, "agent:") }) {
		u.renderLogin(w, r, http.StatusForbidden, loginData{Next: next, Error: "This token's role is limited to some skills (" + p.Limits() + "), and the UI's lists show every skill, so signing in needs an unlimited role: viewer, author, reviewer or admin. Use this token with the API's per-skill routes or the CLI, or sign in with another."})
		return
	}
	id, _, err := u.svc.StartSession(r.Context(), token)
	if err != nil {
		e := service.AsError(err)
		msg := "That token was not accepted: " + e.Message + ". Check that you pasted the whole token (it starts with lo_), or create a new one with 'loadout token create --scope admin'."
		status := http.StatusUnauthorized
		switch {
		case e.Code == service.CodeTooManySessions:
			u.log.Warn("ui: a sign-in was refused: the server holds its most UI sessions (see server.uiSessions)", "err", e.Error())
			msg, status = "Signing in was refused: "+e.Message+".", http.StatusServiceUnavailable
		case e.Code != service.CodeUnauthorized:
			u.log.Error("ui: signing in failed", "err", e.Error())
			msg, status = "The token could not be checked (the token store did not answer): try again; the server log says why.", http.StatusServiceUnavailable
		}
		if token == "" {
			msg = "Paste a token in the Token field: create one with 'loadout token create --scope admin' (or --scope agent:ID)."
		}
		u.renderLogin(w, r, status, loginData{Next: next, Error: msg})
		return
	}
	http.SetCookie(w, sessionCookie(r, id, 0))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *ui) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(service.SessionCookie); err == nil && c.Value != "" {
		if p, csrf, ok := u.svc.Session(r.Context(), c.Value); ok {
			r = withAuth(r, p, authInfo{csrf: csrf, session: true})
			if err := u.checkCSRF(r); err != nil {
				u.refuse(w, r, http.StatusForbidden, service.CodeCSRF, "Not signed out", service.AsError(err).Message)
				return
			}
			u.svc.SignOut(r.Context(), p, c.Value)
			http.SetCookie(w, sessionCookie(r, "", -1))
			if so := u.opt.SignIn; so != nil && so.EndSession && strings.HasPrefix(p.TokenID, "oidc:") {
				if end := so.Provider.EndSessionURL("", origin(r)+Prefix+"login?signedout=1"); end != "" {
					// A page, not a redirect: the CSP's form-action 'self'
					// stops a form's redirect to another origin.
					continueTo(w, end)
					return
				}
			}
		}
	}
	http.SetCookie(w, sessionCookie(r, "", -1))
	http.Redirect(w, r, Prefix+"login?signedout=1", http.StatusSeeOther)
}

// origin is the scheme and host the request came to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// visible is the loadout the caller may see: every skill for a viewer or
// higher (or the open mode), else the one agent an agent:ID token names,
// read-only.
func (u *ui) visible(r *http.Request) (*catalog.Loadout, error) {
	p := principal(r)
	if canRead(p) {
		// A viewer reads every skill in the UI, as through the API; the
		// service's Loadout is an agent's view, which needs agent rights.
		return u.svc.Catalog().Global(), nil
	}
	for _, s := range p.Scopes {
		if id, ok := strings.CutPrefix(s, "agent:"); ok {
			return u.svc.Loadout(p, id)
		}
	}
	return u.svc.Loadout(p, catalog.GlobalID) // refused by the service with the reason
}
