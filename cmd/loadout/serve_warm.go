package main

import (
	"context"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/wellknown"
)

// warmJobs are what serve builds after it listens and before it says it
// is ready (httpapi.Readiness, GET /readyz), in this order: the search
// indexes (the first search_skills at 10,000 skills took 1.47 s), the
// agents' install indexes (seconds at 10,000 skills), then the API's own
// (the diagnostics and the skill list). A request for any of them
// meanwhile waits for the build under way instead of starting its own.
func warmJobs(srv *server) []httpapi.WarmJob {
	return []httpapi.WarmJob{
		{Name: "search", Run: func(ctx context.Context) { warmSearch(ctx, srv.svc.Catalog()) }},
		{Name: "install_indexes", Run: func(ctx context.Context) { wellknown.Warm(ctx, srv.svc, srv.logger) }},
	}
}
