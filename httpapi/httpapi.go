// Package httpapi is loadout's REST API over net/http: skills in the store
// (create, update, files, versions, restore, import, export), read-only
// views of folder and plugin skills, and each agent's prompt, activation
// (load), file reads and search. Every request goes through the service
// layer, so authorization, receipts and the write-time checks are the same
// as over MCP.
//
// New does not authenticate: the server wraps the mux that holds New's
// handler (and the MCP and well-known handlers) in Auth, which puts the
// caller's service.Principal in the request context. A handler without a
// principal in its context acts for the zero Principal, which may do
// nothing. Each route's scope (the route table's) is checked before its
// body is read. The other middlewares, from the outside in, are Timeouts
// (body and write deadlines), RequestID, Log, Measure (metrics: each
// request by route pattern, method and status) and Guard (the Host header
// and cross-origin writes); LimitListener bounds the connections beneath
// them.
//
// Errors are JSON:
//
//	{"error": {"code", "message", "field"?, "path"?, "currentVersion"?, "problems"?}}
//
// The codes are service.Error's, plus "bad_request" (a malformed body,
// header or parameter), "precondition_required" (an update without
// If-Match), "unsupported_media_type" (a body of a type the route does not
// take), "request_timeout" (a body slower than the read timeout),
// "method_not_allowed" (a path with routes for other methods only; a path
// with none is "not_found"), and the guards' "host_not_allowed" and
// "cross_origin" (see Guard), and Auth's "csrf" (403: a write with the web
// UI's session cookie but without its X-CSRF-Token). StatusOf
// gives the HTTP status of each code.
//
// Content types: a route with a body takes only the types its row of the
// route table declares (JSON routes application/json, import also a zip,
// a file PUT any type), and refuses others with 415 before reading the
// body. A web page can send text/plain or a form to another origin
// without asking it first (a "simple" request), but not JSON; so this,
// with Guard's origin check, keeps pages from writing skills.
//
// Versions and ETags: a stored skill's ETag is "v<version>" (the store's
// version number). PUT /v1/skills/{name}, file PUT and DELETE and restore
// need If-Match: "vN" when the skill is stored (428 without it); a stale
// one is a 409 with the current version, and nothing changes. If-Match: *
// skips the check. DELETE /v1/skills/{name} honours If-Match but does not
// require it. If-Match compares strongly (RFC 9110): a weak W/"vN" never
// matches, so it is a 409 like a stale version. A file's ETag is its digest
// ("sha256:<hex>"); If-None-Match on a file compares weakly.
package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/internal/httpbody"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// Options configure the API.
type Options struct {
	// Limits should be the service's (service.Options.Limits); zero fields
	// take skill's defaults. They size the body caps: a file PUT may carry
	// MaxFileSize bytes; a JSON document MaxTotalSize*4/3 (base64) plus 1
	// MiB; an import what portable.LimitsFor says (the UI's and the CLI's
	// import limits too).
	Limits skill.Limits
	// Logger is used when the request context carries none (see Log).
	Logger *slog.Logger
	// Ready, when set, is the server's readiness (GET /readyz): New adds
	// the API's warm-up jobs to it, and the server runs them.
	Ready *Readiness
	// Metrics, when set, serves GET /metrics (the metrics package's
	// exposition) to a metrics token; without it the route is a 404.
	Metrics http.Handler
}

// Error codes the HTTP layer adds to service's.
const (
	CodeBadRequest           = "bad_request"
	CodePreconditionRequired = "precondition_required"
	// CodeMethodNotAllowed: the path exists but not for this method (405,
	// with an Allow header).
	CodeMethodNotAllowed = "method_not_allowed"
)

// StatusOf maps an error code to its HTTP status (errstatus.Of, the one
// table every HTTP transport uses).
func StatusOf(code string) int { return errstatus.Of(code) }

// api holds what the handlers share.
type api struct {
	svc     *service.Service
	opt     Options
	lim     skill.Limits
	fileCap int64 // bytes of a file PUT
	// imp is the import's limits (POST /v1/import), the set the UI and
	// the CLI use too (portable.LimitsFor).
	imp      portable.ImportLimits
	docCap   int64 // bytes of a JSON document (or array) body
	loads    loadCache
	details  detailCache               // GET /v1/skills/{name} of catalog skills (skills.go)
	diags    atomic.Pointer[diagEntry] // GET /v1/diagnostics (diagpage.go)
	ready    *Readiness                // nil: always ready
	prompts  promptCache               // GET /v1/agents/{id}/prompt (agents.go)
	searches searchCache               // GET /v1/agents/{id}/search (agents.go)
	lists    listCache                 // GET /v1/skills (skills.go)
	// unstored: catalog skills with no stored namesake, recently (skills.go).
	unstored unstoredCache
	// records: stored skills' records, recently (skills.go).
	records recordCache
	exports exportCache                   // GET /v1/skills/{name}/export and …/versions/{v} (skills.go)
	rcpts   atomic.Pointer[receiptsEntry] // GET /v1/receipts (agents.go)
	// writes counts the write requests this API has answered (any method
	// but GET and HEAD), for the caches of answers that the catalog's
	// generation does not cover (the disabled stored skills).
	writes atomic.Uint64
	// storedFiles are stored files' bytes and ETags (skills.go).
	storedFiles storedFileCache
	openapi     *httpbody.Body
	// indexBody is GET /'s answer, encoded once.
	indexBody []byte
	patterns  []string
}

// New returns the API's handler. It does not authenticate: wrap it (or the
// mux holding it) in Auth.
func New(svc *service.Service, opt Options) http.Handler {
	a := newAPI(svc, opt)
	if opt.Ready != nil {
		a.ready = opt.Ready
		opt.Ready.add(a.warmJobs()...)
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		h := rt.handle
		if rt.op.Body != nil {
			h = requireType(rt.op.Body.Content, h)
		}
		h = requireScope(rt, h)
		if rt.Method != "GET" && rt.Method != "HEAD" {
			write := h
			h = func(a *api, w http.ResponseWriter, r *http.Request) {
				defer a.writes.Add(1)
				a.writes.Add(1) // before and after: a listing made meanwhile is not kept
				write(a, w, r)
			}
		}
		pattern := rt.Pattern
		mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) { routed(r, pattern); h(a, w, r) })
	}
	// Every other request: the JSON error shape instead of ServeMux's
	// plain-text 404 and 405 (a pattern without a method is the least
	// specific, so it never shadows a route).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { noRoute(mux, w, r) })
	return mux
}

// routeMethods are the methods noRoute tries for the Allow header of a 405.
var routeMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// noRoute answers a request no route matches: 405 method_not_allowed with
// an Allow header when the path has routes for other methods, else 404
// not_found. It runs only on misses, so the routes pay nothing for it.
func noRoute(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range routeMethods {
		probe := *r
		probe.Method = m
		if _, pat := mux.Handler(&probe); pat != "" && pat != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeErr(w, &service.Error{Code: CodeMethodNotAllowed,
			Message: fmt.Sprintf("%s %s: this path takes %s; GET / lists every endpoint", r.Method, r.URL.Path, strings.Join(allow, ", "))})
		return
	}
	writeErr(w, &service.Error{Code: service.CodeNotFound,
		Message: fmt.Sprintf("no endpoint %s %s; GET / lists every endpoint, GET /v1/openapi.json describes them", r.Method, r.URL.Path)})
}

// Refusals of requireScope. The agent one is the service's, so that a
// refusal reads the same whether the route or the service made it.
const (
	msgNeedsAdmin = "this needs an admin token; agent tokens use /v1/agents/ID/… and /agents/ID/mcp"
	msgNotAgent   = "this token may not read that agent"
	msgNeedsToken = "this needs a bearer token"
)

// requireScope enforces the scope a route declares in the table, before
// the body is read or anything is looked up: "none" lets anyone through,
// "any" needs a principal (a token, or the open loopback mode), "agent"
// admin or agent:{id}, "admin" an unlimited admin, and a role (viewer,
// author, reviewer) that role or a higher one: for the skill {name} when
// the route has one (a tag limit is checked against the skill's tags), for
// some skill when the route takes its skills from the body (PerSkill: the
// service checks each), else over every skill. The handlers and the
// service check again; this check makes the declared scope the enforced
// one, and refuses every route the same way whether or not its target
// exists. A route without a known scope is a programming error.
func requireScope(rt route, h func(*api, http.ResponseWriter, *http.Request)) func(*api, http.ResponseWriter, *http.Request) {
	scope := rt.op.Scope
	// allowed says whether p may; refusal is its answer when not (made
	// only then: this runs on every request).
	var allowed func(a *api, p service.Principal, r *http.Request) bool
	var refusal func(p service.Principal, r *http.Request) *service.Error
	switch scope {
	case "none":
		return h
	case "any":
		allowed = func(_ *api, p service.Principal, _ *http.Request) bool { return p.Open || p.TokenID != "" }
		refusal = func(service.Principal, *http.Request) *service.Error {
			return &service.Error{Code: service.CodeUnauthorized, Message: msgNeedsToken}
		}
	case "agent":
		allowed = func(_ *api, p service.Principal, r *http.Request) bool { return p.CanAgent(r.PathValue("id")) }
		refusal = func(service.Principal, *http.Request) *service.Error {
			return &service.Error{Code: service.CodeForbidden, Message: msgNotAgent}
		}
	case "metrics":
		// A metrics token only (or the open loopback mode, where
		// everything is open): an admin token is refused on purpose.
		allowed = func(_ *api, p service.Principal, _ *http.Request) bool { return p.Open || p.Metrics() }
		refusal = func(service.Principal, *http.Request) *service.Error {
			return &service.Error{Code: service.CodeForbidden, Message: msgNeedsMetrics}
		}
	case "admin":
		allowed = func(_ *api, p service.Principal, _ *http.Request) bool { return p.Admin() }
		refusal = func(service.Principal, *http.Request) *service.Error {
			return &service.Error{Code: service.CodeForbidden, Message: msgNeedsAdmin}
		}
	case service.RoleViewer, service.RoleAuthor, service.RoleReviewer:
		switch {
		case strings.Contains(rt.Pattern, "{name}"):
			allowed = func(a *api, p service.Principal, r *http.Request) bool {
				return a.svc.RequireRole(r.Context(), p, scope, r.PathValue("name")) == nil
			}
			refusal = func(p service.Principal, r *http.Request) *service.Error {
				return service.NeedsRole(p, scope, r.PathValue("name"))
			}
		case rt.op.PerSkill:
			allowed = func(_ *api, p service.Principal, _ *http.Request) bool { return p.HoldsAnywhere(scope) }
			refusal = func(p service.Principal, _ *http.Request) *service.Error { return service.NeedsRoleSome(p, scope) }
		default:
			allowed = func(_ *api, p service.Principal, _ *http.Request) bool { return p.Allows(scope, "", nil) }
			refusal = func(p service.Principal, _ *http.Request) *service.Error { return service.NeedsRole(p, scope, "") }
		}
	default:
		panic(fmt.Sprintf("httpapi: route %s %s declares scope %q: use none, any, agent, viewer, author, reviewer, admin or metrics", rt.Method, rt.Pattern, scope))
	}
	return func(a *api, w http.ResponseWriter, r *http.Request) {
		if p := principal(r); !allowed(a, p, r) {
			writeErr(w, refusal(p, r))
			return
		}
		h(a, w, r)
	}
}

// anyType in a route's body content map means any media type (the body is
// stored as sent).
const anyType = "*/*"

// requireType refuses a body whose media type is not one of the route's
// (415 unsupported_media_type), before anything is read.
func requireType(content map[string]string, h func(*api, http.ResponseWriter, *http.Request)) func(*api, http.ResponseWriter, *http.Request) {
	if _, ok := content[anyType]; ok {
		return h
	}
	types := make([]string, 0, len(content))
	for t := range content {
		types = append(types, t)
	}
	sort.Strings(types)
	return func(a *api, w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		mt, _, err := mime.ParseMediaType(ct)
		if err == nil {
			if _, ok := content[mt]; ok {
				h(a, w, r)
				return
			}
		}
		got := "no Content-Type"
		if ct != "" {
			got = "Content-Type " + strconv.Quote(ct)
		}
		writeErr(w, &service.Error{Code: CodeUnsupportedMediaType, Field: "Content-Type",
			Message: fmt.Sprintf("%s %s takes %s; the request has %s", r.Method, r.URL.Path, strings.Join(types, " or "), got)})
	}
}

func newAPI(svc *service.Service, opt Options) *api {
	lim := opt.Limits
	if lim.MaxFileSize <= 0 {
		lim.MaxFileSize = skill.DefaultMaxFileSize
	}
	if lim.MaxTotalSize <= 0 {
		lim.MaxTotalSize = skill.DefaultMaxTotalSize
	}
	if lim.MaxFiles <= 0 {
		lim.MaxFiles = skill.DefaultMaxFiles
	}
	a := &api{svc: svc, opt: opt, lim: lim,
		fileCap: lim.MaxFileSize,
		imp:     portable.LimitsFor(lim),
		docCap:  lim.MaxTotalSize + lim.MaxTotalSize/3 + 1<<20,
	}
	a.loads.m, a.loads.max = map[loadKey]*loadEntry{}, MaxLoadCacheBytes
	a.records.maxLen = MaxRecords
	a.unstored.b.maxLen = MaxUnstored
	a.storedFiles.b.maxBytes, a.storedFiles.b.size = MaxStoredFileBytes, func(f storedFile) int { return len(f.data) }
	a.exports.b.maxBytes, a.exports.b.size = MaxExportCacheBytes, func(e *exportEntry) int { return len(e.body) }
	// Compact: tools read it, not people (jq indents it), and indented it
	// was 139 KB, which halved the route's rate against the cached load.
	doc, err := json.Marshal(openAPIDoc())
	if err != nil {
		panic("httpapi: the OpenAPI document does not marshal: " + err.Error())
	}
	a.openapi = httpbody.New(append(doc, '\n'), ctJSON[0])
	// Indented: the index is read by people, with curl.
	if a.indexBody, err = json.MarshalIndent(indexDoc(), "", "  "); err != nil {
		panic("httpapi: the index does not marshal: " + err.Error())
	}
	a.indexBody = append(a.indexBody, '\n')
	return a
}

func (a *api) logger(r *http.Request) *slog.Logger {
	if l := LoggerFrom(r.Context()); l != nil {
		return l
	}
	if a.opt.Logger != nil {
		return a.opt.Logger
	}
	return slog.Default()
}

var (
	ctJSON  = []string{"application/json"}
	ctText  = []string{"text/plain; charset=utf-8"}
	nosniff = []string{"nosniff"}
)

// writeJSON writes v as JSON with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := marshal(v)
	if err != nil {
		writeErr(w, &service.Error{Code: service.CodeInternal, Message: "the response could not be encoded"})
		return
	}
	writeRaw(w, status, ctJSON, data)
}

func writeRaw(w http.ResponseWriter, status int, ct []string, data []byte) {
	h := w.Header()
	h["Content-Type"] = ct
	h["X-Content-Type-Options"] = nosniff
	h["Content-Length"] = []string{strconv.Itoa(len(data))}
	w.WriteHeader(status)
	w.Write(data)
}

// marshal is json.Marshal without HTML escaping (skill text is full of < and
// >), with a final newline.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

type errorBody struct {
	Error *service.Error `json:"error"`
}

func writeErr(w http.ResponseWriter, e *service.Error) {
	if e.Code == service.CodeUnauthorized {
		errstatus.WriteUnauthorized(w, nil, e)
		return
	}
	writeJSON(w, StatusOf(e.Code), errorBody{e})
}

// WriteError writes err in the API's error envelope with its status
// (StatusOf), for handlers mounted beside the API. An internal error's
// message is replaced by a generic one.
func WriteError(w http.ResponseWriter, err error) {
	e := service.AsError(err)
	if StatusOf(e.Code) == http.StatusInternalServerError {
		e = &service.Error{Code: service.CodeInternal, Message: "internal error"}
	}
	writeErr(w, e)
}

// fail writes err as the error envelope. Internal errors are logged in
// full and answered with a generic message and the request id, so database
// paths and driver text never reach the client.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := service.AsError(err)
	if e.Code == service.CodeInternal || StatusOf(e.Code) == http.StatusInternalServerError {
		a.logger(r).Error("request failed", "method", r.Method, "path", r.URL.Path, "err", e.Error(), "request_id", RequestIDFrom(r.Context()))
		msg := "internal error"
		if id := RequestIDFrom(r.Context()); id != "" {
			msg += " (request id " + id + ")"
		}
		e = &service.Error{Code: service.CodeInternal, Message: msg}
	}
	writeErr(w, e)
}

func badRequest(field, format string, args ...any) *service.Error {
	return &service.Error{Code: CodeBadRequest, Field: field, Message: sprintf(format, args...)}
}
