package main

import (
	"context"
	"log/slog"
	"time"

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
	// safetySeen are the error findings of the safety checks logged,
	// kept apart from seen: they are logged by another pass (logSafety).
	safetySeen map[string]bool
}

func newDiagLogger(logger *slog.Logger) *diagLogger {
	return &diagLogger{logger: logger, max: maxLoggedDiagnostics, seen: map[string]bool{}, safetySeen: map[string]bool{}}
}

// log logs the diagnostics of cat not logged before, and forgets those
// gone (so that a problem that comes back is logged again).
func (l *diagLogger) log(cat *catalog.Catalog, when string) {
	l.seen = l.logNew(cat.Diagnostics(), l.seen, when, func(d skill.Diagnostic) bool {
		return d.Severity == skill.Error || d.Severity == skill.Warning
	})
}

// logSafety runs the safety checks over the catalog (the service's
// Report: cached per skill, so after a change only changed skills are
// read, and the report made here is the one the UI and the API then
// serve) and logs each error finding not logged before: a
// folder or plugin skill is served with them unless "safety": {"gate"}
// names its kind, and nothing else would say so until someone asked for
// the diagnostics. It forgets findings gone, so one that comes back is
// logged again.
func (l *diagLogger) logSafety(ctx context.Context, svc *service.Service, when string) {
	ds := svc.Report(ctx).Safety
	if ctx.Err() != nil {
		return // stopping: not every skill was checked
	}
	l.safetySeen = l.logNew(ds, l.safetySeen, when, func(d skill.Diagnostic) bool { return d.Severity == skill.Error })
}

// logNew logs the diagnostics keep accepts that are not in seen, one line
// each up to l.max, and returns the set of those now present.
func (l *diagLogger) logNew(diags []skill.Diagnostic, seen map[string]bool, when string, keep func(skill.Diagnostic) bool) map[string]bool {
	now := map[string]bool{}
	logged, more := 0, 0
	for _, d := range diags {
		if !keep(d) {
			continue
		}
		k := d.String()
		now[k] = true
		if seen[k] {
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
	return now
}

// follow logs what each change of the catalog brings, until ctx ends.
// The first safety pass waits for up to be closed (nil: no wait).
func (l *diagLogger) follow(ctx context.Context, svc *service.Service, up <-chan struct{}) {
	ch, stop := svc.Subscribe()
	go func() {
		defer stop()
		// The safety checks read every file of every skill: at start they
		// run here, once the server is up, not before it (they took 1.9
		// CPU-seconds at 50,000 skills from the steps to ready).
		if up != nil {
			select {
			case <-up:
			case <-ctx.Done():
				return
			}
		}
		l.logSafety(ctx, svc, "start")
		wait := time.NewTimer(0)
		<-wait.C
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			// A burst of changes (writes in a row, a sync) is logged once:
			// the safety report is made over the whole catalog, and made
			// after each write it was a third of a write's cost.
			wait.Reset(diagCoalesce)
			for waiting := true; waiting; {
				select {
				case <-ctx.Done():
					wait.Stop()
					return
				case <-ch:
				case <-wait.C:
					waiting = false
				}
			}
			l.log(svc.Catalog(), "reload")
			l.logSafety(ctx, svc, "reload")
		}
	}()
}

// diagCoalesce is how long follow waits after a change before it logs
// what changes in that time brought.
const diagCoalesce = 250 * time.Millisecond
