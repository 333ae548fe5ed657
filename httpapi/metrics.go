package httpapi

import (
	"net/http"
	"time"

	"github.com/loadout/loadout/service"
)

// MetricsPath is where the metrics are served (Options.Metrics).
const MetricsPath = "/metrics"

// RequestObserver is told of every HTTP request once it is answered: the
// route pattern that served it ("" when none did: refused before routing,
// or no route's path), its method and status, and how long it took.
// The metrics package implements it; this package imports no metrics
// library.
type RequestObserver interface {
	ObserveRequest(route, method string, status int, took time.Duration)
}

// Measure tells o of every request next answers. Put it inside Log (it
// reads the status Log records; elsewhere it records its own). The route
// is the API's pattern (/v1/skills/{name}), or else the pattern of the
// last ServeMux that routed this request (serve's /agents/{id}/mcp, the
// UI's): never the raw path, so a million distinct paths make no new
// label value. A nil o returns next.
func Measure(o RequestObserver, next http.Handler) http.Handler {
	if o == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, r := stateOf(r)
		// Inside Log, its start and status writer serve, and Log takes
		// the duration measured here: the two make one clock read at the
		// end of a request between them, as Log alone did (a clock read
		// is 25 to 100 ns on some VMs).
		start, sw := s.start, &s.status
		if start.IsZero() {
			start = time.Now()
		}
		if !s.sw {
			sw = &statusWriter{ResponseWriter: w}
			w = sw
		}
		next.ServeHTTP(w, r)
		route := s.route
		if route == "" {
			route = r.Pattern
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		took := time.Since(start)
		s.took = took
		o.ObserveRequest(route, r.Method, status, took)
	})
}

// routed records the API route that serves r, for Measure.
func routed(r *http.Request, pattern string) {
	if s, ok := r.Context().(*reqState); ok {
		s.route = pattern
	} else if s, ok := r.Context().Value(stateKey{}).(*reqState); ok {
		s.route = pattern
	}
}

// metrics serves GET /metrics: Options.Metrics, or a 404 saying metrics
// are off when there is none.
func (a *api) metrics(w http.ResponseWriter, r *http.Request) {
	if a.opt.Metrics == nil {
		writeErr(w, &service.Error{Code: service.CodeNotFound, Message: "this server serves no metrics"})
		return
	}
	a.opt.Metrics.ServeHTTP(w, r)
}

// msgNeedsMetrics is the refusal of a principal without the metrics
// scope on GET /metrics.
const msgNeedsMetrics = "GET /metrics needs a metrics token ('loadout token create --scope metrics'), which can read nothing else; admin, role and agent tokens are refused here, so that the token a Prometheus server holds is never one that reads skills"
