package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/service"
)

// Prefix is where the UI is mounted.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the UI.
type Options struct {
	Logger *slog.Logger
	// MaxLiveStreams caps the /ui/events streams open at once (default
	// DefaultMaxLiveStreams); a client over it is answered 503 with
	// Retry-After, and its page falls back to reconnecting later.
	MaxLiveStreams int
	// MaxLiveStreamsPerToken caps one token's streams (default
	// DefaultMaxLiveStreamsPerToken, at most MaxLiveStreams), so that one
	// token's pages cannot take every place; over it that token's new
	// stream gets the same 503. The open mode (no tokens) has only
	// MaxLiveStreams.
	MaxLiveStreamsPerToken int
	// LiveHeartbeat is how often an idle /ui/events stream gets a comment
	// line, so proxies keep it open and a dead client is noticed (default
	// DefaultLiveHeartbeat).
	LiveHeartbeat time.Duration
	// MaxImportBytes caps one POST /ui/import body, every dropped file
	// together (default DefaultMaxImportBytes).
	MaxImportBytes int64
	// SignIn turns on sign-in with an OpenID provider beside the token
	// form (signin.go); nil: tokens only.
	SignIn *SignInOptions
}

// ui holds what the pages share.
type ui struct {
	svc   *service.Service
	opt   Options
	log   *slog.Logger
	pages map[string]*template.Template
	// frags are the templates named frag_*.html: pieces of pages (a tab's
	// body) that fragment renders without the layout.
	frags *template.Template
	// Per-UI state lives here, never in package variables, so that two
	// UIs in one process (tests, or a server mounting two) share nothing.
	// skills is the skills list's rows and usage (skills.go); its zero
	// value is empty.
	skills skillsCache
	// openCSRF is the CSRF token of the open mode and the login form
	// (auth.go), made on first use.
	openCSRF     string
	openCSRFOnce sync.Once
	// diagLinks: the Diagnostics page's lines linked to their skills,
	// for the last report and loadout (diagnostics.go).
	diagLinks atomic.Pointer[diagLinks]
	// live is GET /ui/events's hub, once its handler is made
	// (LiveStreams).
	live atomic.Pointer[liveHub]
}

// LiveStreams is how many /ui/events streams the UI h (New's) holds open,
// for the metrics; 0 for any other handler.
func LiveStreams(h http.Handler) int {
	if uh, ok := h.(handler); ok {
		if hub := uh.u.live.Load(); hub != nil {
			return hub.streams()
		}
	}
	return 0
}

// New returns the UI's handler, to be mounted at Prefix. It authenticates
// requests itself (a session cookie, or the open loopback mode), so it
// goes in front of the API's bearer check, not behind it.
func New(svc *service.Service, opt Options) http.Handler {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.SignIn != nil && opt.SignIn.Name == "" {
		so := *opt.SignIn
		so.Name = "your identity provider"
		if iu, err := url.Parse(so.Provider.Issuer()); err == nil && iu.Host != "" {
			so.Name = iu.Host
		}
		opt.SignIn = &so
	}
	u := &ui{svc: svc, opt: opt, log: opt.Logger, pages: map[string]*template.Template{}}
	u.parse()
	u.parseFragments()
	mux := http.NewServeMux()
	u.register(mux, routes)
	return handler{securityHeaders(compressResponses(mux)), u}
}

// handler is the UI's http.Handler; it keeps its ui so that the package's
// tests can look at one UI's state.
type handler struct {
	http.Handler
	u *ui
}

// WantsHTML reports whether a request is a browser's navigation (its
// Accept header puts text/html before JSON), for GET / to send browsers to
// the UI and API clients to the route index.
func WantsHTML(r *http.Request) bool {
	acc := r.Header.Get("Accept")
	h := strings.Index(acc, "text/html")
	j := strings.Index(acc, "application/json")
	return h >= 0 && (j < 0 || h < j)
}

// funcs are the helpers every template may use.
var funcs = template.FuncMap{
	"bytes": humanBytes,
	"ago":   ago,
	"join":  strings.Join,
	// canRead and canWrite: the principal reads every skill (a viewer or
	// higher), or writes them (an author or higher); pages hide what the
	// server would refuse.
	"canRead":   canRead,
	"canWrite":  canWrite,
	"canReview": canReview,
	// isPerson: the principal signed in with the identity provider (its
	// name and subject are shown in the header).
	"isPerson":      func(p service.Principal) bool { return strings.HasPrefix(p.TokenID, "oidc:") },
	"personSubject": func(p service.Principal) string { return strings.TrimPrefix(p.TokenID, "oidc:") },
	// pathEscape makes a skill name one path segment of a URL: names may
	// hold "/", "?", "#" or spaces (the lenient loader accepts them).
	"pathEscape": url.PathEscape,
	// count is n with its noun, singular for 1: {{count .Errors "error" "errors"}}.
	"count": countOf,
	// pinCell is one row of the Agents tab's pin column (reviews.go).
	"pinCell": func(p *pinsData, row agentMode) pinCellData { return pinCellData{p, row} },
}

// parse reads every page template with the layout, once. Pages and
// fragments both get the parts (part_*.html: templates they share).
func (u *ui) parse() {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" || strings.HasPrefix(base, "frag_") || strings.HasPrefix(base, "part_") {
			continue
		}
		u.pages[base] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/part_*.html", n))
	}
}

func (u *ui) parseFragments() {
	u.frags = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/frag_*.html", "templates/part_*.html"))
}

// fragment renders the fragment template name (a frag_*.html file) alone.
func (u *ui) fragment(name string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := u.frags.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// page is what the layout needs of every page.
type page struct {
	Title  string
	Active string // the nav entry to mark: skills, agents, import, diagnostics, tokens
	P      service.Principal
	CSRF   string
	Data   any
	// Review: the server requires review, so the nav has the review
	// queue (without it the nav is as it always was; /ui/reviews still
	// answers, for pins).
	Review bool
}

// render writes a whole page: the layout around the named template.
// Rendering goes to a buffer first, so a template error is a clean 500
// page rather than half a page.
func (u *ui) render(w http.ResponseWriter, r *http.Request, name string, pg page) {
	t, ok := u.pages[name]
	if !ok {
		panic("webui: no template " + name)
	}
	pg.P = principal(r)
	pg.CSRF = csrfToken(r)
	pg.Review = pg.Review || u.svc.ReviewRequired()
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout.html", pg); err != nil {
		u.log.Error("ui: rendering a page failed", "page", name, "err", err)
		u.fail(w, r, http.StatusInternalServerError, "This page could not be shown", "The server could not render it; the log says why.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// fail writes an error page that says what happened and what to do.
func (u *ui) fail(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	t := u.pages["error.html"]
	var b bytes.Buffer
	err := t.ExecuteTemplate(&b, "layout.html", page{Title: title, P: principal(r), CSRF: csrfToken(r), Data: msg})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err != nil {
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>%s</p>", template.HTMLEscapeString(title), template.HTMLEscapeString(msg))
		return
	}
	w.Write(b.Bytes())
}

// failErr writes the error page for a service refusal, with its status.
func (u *ui) failErr(w http.ResponseWriter, r *http.Request, err error) {
	e := service.AsError(err)
	status := errstatus.Of(e.Code)
	if e.Code == service.CodeInternal {
		u.log.Error("ui request failed", "path", r.URL.Path, "err", e.Error())
	}
	u.fail(w, r, status, http.StatusText(status), e.Message)
}

// csp is the Content-Security-Policy of every UI response: nothing but
// this origin's own scripts, styles and images (data: images for the
// chart and uploads' previews), no inline script, no objects, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// staticHandler serves the embedded assets with a short cache and their
// content types.
func staticHandler(fsys fs.FS) http.Handler {
	fileServer := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		fileServer.ServeHTTP(w, r)
	})
}

func humanBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}

// canRead reports whether p reads every skill: an unlimited viewer or
// higher (an agent token reads only its agent's).
func canRead(p service.Principal) bool { return p.Allows(service.RoleViewer, "", nil) }

// canWrite reports whether p writes skills: an unlimited author or
// higher. (A limited role does not sign in to the UI: see login.)
func canWrite(p service.Principal) bool { return p.Allows(service.RoleAuthor, "", nil) }

// canReview reports whether p approves drafts and moves pins: an
// unlimited reviewer or admin.
func canReview(p service.Principal) bool { return p.Allows(service.RoleReviewer, "", nil) }

// roleName says what a principal is, for a refusal: its highest role, or
// "read-only (an agent's)".
func roleName(p service.Principal) string {
	if r := p.Role(); r != "" {
		return "a " + r + "'s"
	}
	return "read-only (an agent's)"
}
