package webui

import (
	"net/http"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
)

// Auth (session login, logout, CSRF) is built in the auth work; until
// then the UI serves only the open loopback mode.

// principal is the caller of a UI request.
func principal(r *http.Request) service.Principal {
	return service.PrincipalFrom(r.Context())
}

// csrfToken is the token the page's forms and scripts send back.
func csrfToken(r *http.Request) string { return "" }

// authed wraps a page handler: it resolves the caller (open mode only for
// now) and sends anyone else to the login page.
func (u *ui) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := u.svc.Authenticate(r.Context(), "")
		if err != nil {
			http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
			return
		}
		h(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
	}
}

func (u *ui) routesAuth(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/login", func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, http.StatusNotImplemented, "Sign in", "Signing in with a token is not built yet: the UI is open on a loopback server without tokens.")
	})
}

// checkCSRF refuses a state-changing form post whose csrf field does not
// match the session's token (nil when it matches).
func (u *ui) checkCSRF(r *http.Request) error { return nil }

// visible is the loadout the caller may see: every skill for an admin (or
// the open mode), else the one agent an agent:ID token names, read-only.
func (u *ui) visible(r *http.Request) (*catalog.Loadout, error) {
	p := principal(r)
	if p.Admin() {
		return u.svc.Loadout(p, catalog.GlobalID)
	}
	for _, s := range p.Scopes {
		if id, ok := strings.CutPrefix(s, "agent:"); ok {
			return u.svc.Loadout(p, id)
		}
	}
	return u.svc.Loadout(p, catalog.GlobalID) // refused by the service with the reason
}
