package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/internal/cputime"
)

// Readiness is what a server builds after it listens and before it says
// it is ready: the search indexes, the install indexes, the diagnostics
// and the skill list, which the first request of each would otherwise
// build (1.47 s for the first search_skills at 10,000 skills, seconds for
// an install index). The server listens first (a request that
// comes meanwhile waits for the build under way, never starts its own),
// runs the jobs one after another, and then is ready: GET /readyz answers
// 200 instead of 503, /healthz says "ready": true, and the log says
// "ready" with how long it took and the CPU seconds used to then. (serve
// logs "listening" before, when it begins to answer.)
//
// The catalog itself is loaded before the server listens, so a server
// that answers has one; Readiness covers what is built after.
//
// Drain turns readiness off for good when shutdown begins: /readyz
// answers 503 ("draining": true) while requests in flight finish, so a
// load balancer stops sending new ones; /healthz (liveness) stays 200
// until the process exits.
type Readiness struct {
	done     chan struct{}
	mu       sync.Mutex
	jobs     []WarmJob // the API's own, added by New
	took     time.Duration
	building string // the job running now, for the 503 answer
	draining atomic.Bool
}

// WarmJob is one thing to build before ready.
type WarmJob struct {
	Name string
	Run  func(context.Context)
}

// NewReadiness returns a Readiness not ready yet.
func NewReadiness() *Readiness { return &Readiness{done: make(chan struct{})} }

// Ready reports whether every job has run and shutdown has not begun.
// A nil Readiness (a handler built without one) is ready.
func (rd *Readiness) Ready() bool {
	if rd == nil {
		return true
	}
	return !rd.draining.Load() && rd.built()
}

// Drain marks the start of shutdown: from now on Ready is false and
// GET /readyz answers 503 with "draining": true. It cannot be undone.
func (rd *Readiness) Drain() {
	if rd != nil {
		rd.draining.Store(true)
	}
}

// Draining reports whether Drain was called.
func (rd *Readiness) Draining() bool { return rd != nil && rd.draining.Load() }

// Building is the name of the job running now ("" when none is).
func (rd *Readiness) Building() string {
	if rd == nil {
		return ""
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.building
}

func (rd *Readiness) built() bool {
	select {
	case <-rd.done:
		return true
	default:
		return false
	}
}

func (rd *Readiness) add(jobs ...WarmJob) {
	rd.mu.Lock()
	rd.jobs = append(rd.jobs, jobs...)
	rd.mu.Unlock()
}

// Run runs jobs, then the API's own (the skill list and the diagnostics),
// one after another, and marks rd ready; it logs each job's time and the
// whole. When ctx ends first it returns without marking ready.
func (rd *Readiness) Run(ctx context.Context, log *slog.Logger, jobs ...WarmJob) {
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	rd.mu.Lock()
	jobs = append(jobs, rd.jobs...)
	rd.mu.Unlock()
	attrs := []any{}
	for _, j := range jobs {
		if ctx.Err() != nil {
			return
		}
		t := time.Now()
		rd.mu.Lock()
		rd.building = j.Name
		rd.mu.Unlock()
		j.Run(ctx)
		attrs = append(attrs, j.Name, time.Since(t).Round(time.Millisecond).String())
	}
	if ctx.Err() != nil {
		return
	}
	rd.mu.Lock()
	rd.building = ""
	rd.mu.Unlock()
	rd.took = time.Since(start)
	close(rd.done)
	// "ready": what first requests would build is built (GET /readyz is
	// 200 from now on), with the CPU seconds this process has used so far
	// (serve logged "listening" with its own when it began to answer).
	head := []any{"took", rd.took.Round(time.Millisecond).String()}
	if user, sys, ok := cputime.Process(); ok {
		head = append(head, "cpu_s", float64((user+sys).Round(time.Millisecond))/float64(time.Second))
	}
	log.Info("ready", append(append(head, attrs...), "built", "the indexes first requests would build")...)
}

// warmJobs are the API's: the first page of GET /v1/skills (the listing
// reads every stored record) and of GET /v1/diagnostics (the report runs
// the safety checks over every skill), each with its gzip form.
func (a *api) warmJobs() []WarmJob {
	return []WarmJob{
		{"diagnostics", func(ctx context.Context) {
			rep := a.svc.Report(ctx)
			if ctx.Err() != nil {
				return
			}
			e, err := a.diagEntry(rep)
			if err != nil {
				return
			}
			if b, _, err := e.page(0, DefaultDiagLimit); err == nil {
				b.Gzipped()
			}
		}},
		{"skill list", func(ctx context.Context) {
			l := a.svc.Catalog().Global()
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/v1/skills", nil)
			if err != nil {
				return
			}
			if ls, err := a.listing(r, l); err == nil {
				if b, err := ls.page("", DefaultListLimit); err == nil {
					b.Gzipped()
				}
			}
		}},
	}
}

// readyz: 200 once the server is ready (Readiness), 503 with Retry-After
// before and from the start of shutdown on; /healthz is 200 as soon as
// the server listens and until it exits.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) {
	if a.ready.Draining() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "draining": true,
			"message": "shutting down: requests in flight are finishing; send new requests to another instance"})
		return
	}
	if !a.ready.Ready() {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "draining": false, "building": a.ready.Building(),
			"message": "building the search indexes, install indexes, diagnostics and skill list: requests are answered meanwhile (each waits for what it needs)"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ready": true, "draining": false, "built": ReadyBuilt,
		"skills": len(a.svc.Catalog().Global().Names()), "generation": a.svc.Generation()})
}

// ReadyBuilt names what a ready server has built, in the order serve
// builds it: the catalog (before it listens), then the warm-up jobs.
var ReadyBuilt = []string{"catalog", "search", "install_indexes", "diagnostics", "skill list"}
