package wellknown

import (
	"log/slog"
	"net/http"
	"path"
	"strings"

	"github.com/loadout/loadout/service"
)

// LinkPrefix starts a link URL (service.LinkPrefix).
const LinkPrefix = service.LinkPrefix

// Link serves link URLs. It authenticates the secret in the path
// (service.AuthenticateLink: only an index:AGENT token is accepted),
// rewrites the request to /agents/AGENT/REST with the link's principal in
// its context, and passes it to agents, which must route that path to the
// agent's well-known handler (and check the principal may read the agent).
// Anything under the prefix but a well-known path is a 404, so a link
// reaches nothing else. Mount it outside the bearer authentication; the
// request log must redact the secret (see RedactLinkPath).
func Link(svc *service.Service, agents http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, LinkPrefix), "/")
		rest = "/" + rest
		if !ok || !strings.HasPrefix(rest, marker) || !clean(rest) {
			writeError(w, http.StatusNotFound, service.CodeNotFound, "not found: a link serves only /i/TOKEN/.well-known/agent-skills/index.json, .well-known/skills/index.json and the files they list")
			return
		}
		p, agent, err := svc.AuthenticateLink(r.Context(), secret)
		if err != nil {
			if e := service.AsError(err); e.Code != service.CodeUnauthorized {
				slog.Default().Error("link authentication failed", "err", e.Error())
				writeError(w, http.StatusInternalServerError, service.CodeInternal, "the link could not be checked")
				return
			}
			writeServiceError(w, err)
			return
		}
		if strings.ContainsAny(agent, "/?#%\\") {
			writeError(w, http.StatusNotFound, service.CodeNotFound, "this link's agent id cannot be served in a URL")
			return
		}
		// The secret stays out of anything downstream: the path, the raw
		// URI and the Referer of whatever a client fetches next.
		r2 := r.WithContext(service.WithPrincipal(r.Context(), p))
		u := *r.URL
		u.Path = "/agents/" + agent + rest
		u.RawPath = ""
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
		w.Header().Set("Referrer-Policy", "no-referrer")
		agents.ServeHTTP(w, r2)
	})
}

// clean reports whether p is already clean (no "..", "." or "//"), so the
// rewritten path cannot leave the agent's well-known mount.
func clean(p string) bool {
	c := path.Clean(p)
	return c == p || c+"/" == p
}

// RedactLinkPath is service.RedactLinkPath.
func RedactLinkPath(p string) string { return service.RedactLinkPath(p) }
