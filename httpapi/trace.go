package httpapi

import (
	"net/http"
	"strings"

	"github.com/loadout/loadout/internal/obs"
)

// Trace marks each request as one obs.KindHTTP operation, for the
// observers the binary registered (traces, metrics). With none it passes
// the request on and costs one atomic load.
//
// The operation's name is "METHOD ROUTE": the request's method when it is
// one of HTTP's (else "_OTHER") and the pattern route matched (a constant
// of the code, such as "/v1/agents/{id}/skills/{name}", never the path: a
// path is data, and a million paths would make a million names). Its
// attributes are the method and the route; the path is not recorded (a
// link URL's path holds its token).
//
// The caller's W3C trace context (the traceparent and tracestate headers)
// is handed to the observers (obs.WithRemote) when it is within bounds: a
// traceparent longer than obs.MaxTraceParent, or sent twice, is ignored
// after a length check, and so is a tracestate longer than
// obs.MaxTraceState or sent twice; a malformed one is the tracer's to
// refuse. The operation ends with nil, or obs.StatusError for a status of
// 400 and up.
//
// Put it inside Log (serve does): it reads the status Log records, and it
// sets the operation's context into the request's state without copying
// the request.
func Trace(route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !obs.Enabled() {
			next.ServeHTTP(w, r)
			return
		}
		traced(route, next, w, r)
	})
}

func traced(route func(*http.Request) string, next http.Handler, w http.ResponseWriter, r *http.Request) {
	pattern := "/"
	if route != nil {
		pattern = route(r)
	}
	method := spanMethod(r.Method)
	st, r := stateOf(r)
	ctx := st.Context
	if tp := r.Header["Traceparent"]; len(tp) == 1 {
		ts := ""
		if v := r.Header["Tracestate"]; len(v) == 1 {
			ts = v[0]
		}
		ctx = obs.WithRemote(ctx, tp[0], ts)
	}
	ctx, end := obs.Start(ctx, obs.KindHTTP, method+" "+pattern,
		obs.Attr{Key: "http.request.method", Value: method}, obs.Attr{Key: "http.route", Value: pattern})
	// The state is the request's context: the operation's context goes
	// under it, so every handler sees the span without a copy of the
	// request (and the state's own keys still answer first).
	st.Context = ctx
	sw, ok := w.(*statusWriter)
	if !ok {
		sw = &statusWriter{ResponseWriter: w}
	}
	var err error
	defer func() {
		if sw.status >= 400 {
			err = obs.StatusError(sw.status)
		}
		if p := recover(); p != nil {
			end(obs.StatusError(http.StatusInternalServerError))
			panic(p)
		}
		end(err)
	}()
	next.ServeHTTP(sw, r)
}

// spanMethod is the method as an operation's name carries it: one of
// HTTP's methods, or "_OTHER" (OpenTelemetry's word) for anything a client
// made up, so that names stay bounded.
func spanMethod(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
		return m
	}
	return "_OTHER"
}

// RouteOf returns the route function of Trace for a server made of the
// muxes in hs (other handlers are skipped): the pattern of the first mux
// whose match is not its catch-all "/", without its method; "/" when none
// matches anything more specific. List the muxes most specific first:
// serve lists the API's (every /v1/ route), then the one behind the
// bearer check (MCP, the well-known index), then the top one (the UI).
// Each lookup is a ServeMux match (under a microsecond), and only runs
// when an observer is registered.
func RouteOf(hs ...http.Handler) func(*http.Request) string {
	var muxes []*http.ServeMux
	for _, h := range hs {
		if m, ok := h.(*http.ServeMux); ok {
			muxes = append(muxes, m)
		}
	}
	return func(r *http.Request) string {
		for _, m := range muxes {
			if _, p := m.Handler(r); p != "" && p != "/" {
				if _, rest, ok := strings.Cut(p, " "); ok {
					p = rest // "GET /v1/…": the method is the request's
				}
				return p
			}
		}
		return "/"
	}
}
