package webui

import (
	"net/http"

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
