package main

import (
	"context"
	"log/slog"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// maxLoggedDiagnostics bounds the diagnostics serve logs one by one at
// start and after each reload; past it one line counts the rest (loadout
// check prints them all).
const maxLoggedDiagnostics = 20

// diagLogger logs each error and warning diagnostic of the catalog once:
// all of them at start, then those a reload brings (a broken edit's
// kept-last-good included), one line each.
type diagLogger struct {
	logger *slog.Logger
	max    int
	seen   map[string]bool
}

func newDiagLogger(logger *slog.Logger) *diagLogger {
	return &diagLogger{logger: logger, max: maxLoggedDiagnostics, seen: map[string]bool{}}
}

// log logs the diagnostics of cat not logged before, and forgets those
// gone (so that a problem that comes back is logged again).
func (l *diagLogger) log(cat *catalog.Catalog, when string) {
	now := map[string]bool{}
	logged, more := 0, 0
	for _, d := range cat.Diagnostics() {
		if d.Severity != skill.Error && d.Severity != skill.Warning {
			continue
		}
		k := d.String()
		now[k] = true
		if l.seen[k] {
			continue
		}
		if logged == l.max {
			more++
			continue
		}
		logged++
		attrs := []any{"when", when, "code", d.Code}
		for _, a := range [][2]string{{"path", d.Path}, {"skill", d.Skill}, {"field", d.Field}, {"agent", d.Agent}, {"winner", d.Winner}, {"loser", d.Loser}} {
			if a[1] != "" {
				attrs = append(attrs, a[0], a[1])
			}
		}
		attrs = append(attrs, "message", d.Message)
		if d.Severity == skill.Error {
			l.logger.Error("skill error", attrs...)
		} else {
			l.logger.Warn("skill warning", attrs...)
		}
	}
	if more > 0 {
		l.logger.Warn("more skill diagnostics not logged; 'loadout check' with the same flags prints them all", "when", when, "not_logged", more, "logged", logged)
	}
	l.seen = now
}

// follow logs what each change of the catalog brings, until ctx ends.
func (l *diagLogger) follow(ctx context.Context, svc *service.Service) {
	ch, stop := svc.Subscribe()
	go func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				l.log(svc.Catalog(), "reload")
			}
		}
	}()
}
