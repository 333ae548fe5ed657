package webui

import (
	"fmt"
	"io/fs"
	"net/http"

	"github.com/loadout/loadout/service"
)

// Routes are closed by default: every route of the UI is a row of the
// table below with the scope it declares, New registers the table and
// nothing else (TestRoutesOnlyFromTable fails a handler registered anywhere else),
// and a row without a scope panics at New. As httpapi's route table, the
// scope is enforced by the registration, not by each handler.

// scope is who may reach a route.
type scope string

const (
	// scopePublic: anyone, signed in or not (the sign-in form, the static
	// assets). Each public route must say why in its row's comment.
	scopePublic scope = "public"
	// scopeSession: a signed-in session of any token (admin or an
	// agent's), or the open loopback mode; authed sends anyone else to
	// the login page and checks the CSRF token of every write.
	scopeSession scope = "session"
	// scopeViewer: scopeSession, and the principal reads every skill (a
	// viewer or higher role).
	scopeViewer scope = "viewer"
	// scopeAuthor: scopeSession, and the principal writes skills (an
	// author or higher role).
	scopeAuthor scope = "author"
	// scopeReviewer: scopeSession, and the principal approves drafts and
	// moves pins (a reviewer or admin).
	scopeReviewer scope = "reviewer"
	// scopeAdmin: scopeSession, and the principal is an admin.
	scopeAdmin scope = "admin"
)

// route is one row of the UI.
type route struct {
	Pattern string // method and path, as http.ServeMux reads them
	Scope   scope
	// handler makes the route's handler, once per UI (at New).
	handler func(*ui) http.Handler
}

// handle adapts a page method ((*ui).agentsPage) to a route's handler.
func handle(f func(*ui, http.ResponseWriter, *http.Request)) func(*ui) http.Handler {
	return func(u *ui) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f(u, w, r) })
	}
}

// routes is every route of the UI.
var routes = []route{
	// Public: the sign-in form and its posts must be reachable without a
	// session (the posts carry the process's CSRF token), and so must the
	// assets the login page loads. Signing out without a session only
	// clears a cookie.
	{"GET /ui/login", scopePublic, handle((*ui).loginPage)},
	{"POST /ui/login", scopePublic, handle((*ui).login)},
	{"POST /ui/logout", scopePublic, handle((*ui).logout)},
	// Sign-in with the identity provider (signin.go): reached before any
	// session exists; the callback is bound to the browser that started
	// the sign-in by its state cookie. 404 when no provider is configured.
	{"GET /ui/oidc/start", scopePublic, handle((*ui).oidcStart)},
	{"GET /ui/oidc/callback", scopePublic, handle((*ui).oidcCallback)},
	{"GET /ui/static/", scopePublic, (*ui).staticFiles},

	{"GET /ui/{$}", scopeSession, handle((*ui).skillsPage)},
	{"GET /ui/skills/{name}", scopeSession, handle((*ui).skillPageHandler)},
	{"GET /ui/skills/{name}/files/{path...}", scopeSession, handle((*ui).skillFile)},
	{"GET /ui/skills/{name}/view/{path...}", scopeSession, handle((*ui).skillFileView)},
	{"GET /ui/agents", scopeSession, handle((*ui).agentsPage)},
	{"GET /ui/agents/{id}", scopeSession, handle((*ui).agentPage)},
	{"GET /ui/diagnostics", scopeSession, handle((*ui).diagnosticsPage)},
	{"GET /ui/events", scopeSession, (*ui).eventsHandler},

	// Writes to the store are an author's (the service checks again; the
	// editor saves through the API, whose routes declare their roles).
	{"POST /ui/skills/{name}/restore", scopeAuthor, handle((*ui).restoreVersion)},
	// Push a stored version to the configured OCI registry (the service
	// checks the author role for the skill, and audits the push).
	{"POST /ui/skills/{name}/push", scopeAuthor, handle((*ui).pushVersion)},
	{"GET /ui/new", scopeAuthor, handle((*ui).newSkillPage)},
	{"GET /ui/import", scopeAuthor, handle((*ui).importPage)},
	{"POST /ui/import", scopeAuthor, handle((*ui).importPost)},
	// Tokens are an admin's; receipts a viewer's, as GET /v1/receipts.
	{"GET /ui/tokens", scopeAdmin, handle((*ui).tokensPage)},
	{"POST /ui/tokens", scopeAdmin, handle((*ui).createToken)},
	{"GET /ui/tokens/{id}/revoke", scopeAdmin, handle((*ui).confirmRevoke)},
	{"POST /ui/tokens/{id}/revoke", scopeAdmin, handle((*ui).revokeToken)},
	{"GET /ui/receipts", scopeViewer, handle((*ui).receiptsPage)},
	{"GET /ui/audit", scopeAdmin, handle((*ui).auditPage)},
	// The review queue and pins (reviews.go).
	{"GET /ui/reviews", scopeReviewer, handle((*ui).reviewsPage)},
	{"POST /ui/reviews/{id}/{verb}", scopeReviewer, handle((*ui).decideReview)},
	{"POST /ui/sources/{id}/{verb}", scopeReviewer, handle((*ui).decideSource)},
	{"POST /ui/pins/advance", scopeReviewer, handle((*ui).advancePins)},
	{"POST /ui/skills/{name}/pins", scopeReviewer, handle((*ui).setPinForm)},
	{"GET /ui/blocks", scopeAdmin, handle((*ui).blocksPage)},
	{"POST /ui/blocks", scopeAdmin, handle((*ui).addBlock)},
	{"POST /ui/blocks/{id}/remove", scopeAdmin, handle((*ui).removeBlock)},

	// Anything else under /ui/ is "no page here", behind a session too,
	// so that a probe without one learns nothing of which paths exist.
	{"/ui/", scopeSession, handle((*ui).notFound)},
}

// register adds the table's routes to mux, each behind its scope. A row
// without a declared scope (or with an unknown one) panics: New never
// serves a route nobody decided who may reach.
func (u *ui) register(mux *http.ServeMux, table []route) {
	for _, rt := range table {
		if rt.handler == nil {
			panic(fmt.Sprintf("webui: route %q has no handler", rt.Pattern))
		}
		var h http.Handler
		switch rt.Scope {
		case scopePublic:
			h = rt.handler(u)
		case scopeSession:
			h = u.authed(rt.handler(u).ServeHTTP)
		case scopeViewer:
			h = u.authed(u.roleOnly(service.RoleViewer, rt.handler(u).ServeHTTP))
		case scopeAuthor:
			h = u.authed(u.roleOnly(service.RoleAuthor, rt.handler(u).ServeHTTP))
		case scopeReviewer:
			h = u.authed(u.roleOnly(service.RoleReviewer, rt.handler(u).ServeHTTP))
		case scopeAdmin:
			h = u.authed(u.adminOnly(rt.handler(u).ServeHTTP))
		default:
			panic(fmt.Sprintf("webui: route %q declares no scope (%q): give it scopePublic, scopeSession, scopeViewer, scopeAuthor, scopeReviewer or scopeAdmin in the route table", rt.Pattern, rt.Scope))
		}
		mux.Handle(rt.Pattern, h)
	}
}

// adminOnly refuses non-admin callers with a page that says why.
func (u *ui) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p := principal(r); !p.Admin() {
			u.refuse(w, r, http.StatusForbidden, service.CodeForbidden, "Admins only",
				"This page needs an admin token: this session's token is "+roleName(p)+". Sign out and sign in with an admin token.")
			return
		}
		h(w, r)
	}
}

// roleOnly refuses callers without role over every skill with a page
// that names the role needed and the caller's.
func (u *ui) roleOnly(role string, h http.HandlerFunc) http.HandlerFunc {
	title := map[string]string{service.RoleViewer: "Viewers only", service.RoleAuthor: "Authors only"}[role]
	return func(w http.ResponseWriter, r *http.Request) {
		if p := principal(r); !p.Allows(role, "", nil) {
			u.refuse(w, r, http.StatusForbidden, service.CodeForbidden, title,
				"This page needs the "+role+" role or a higher one: this session's token is "+roleName(p)+". Sign out and sign in with a token of that role.")
			return
		}
		h(w, r)
	}
}

// staticFiles serves the embedded assets (gzip forms included).
func (u *ui) staticFiles() http.Handler {
	static, _ := fs.Sub(staticFS, "static")
	return http.StripPrefix("/ui/static/", precompressed(static, staticHandler(static)))
}

func (u *ui) notFound(w http.ResponseWriter, r *http.Request) {
	u.fail(w, r, http.StatusNotFound, "No page here", fmt.Sprintf("%s is not a page of the UI: start from the skills list.", r.URL.Path))
}
