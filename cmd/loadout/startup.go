package main

import (
	"context"
	"github.com/loadout/loadout/internal/cputime"
	"log/slog"
	"sync"
	"time"
)

// processStart is when this process began running Go code: start-up
// wall times count from it.
var processStart = time.Now()

// startup tracks serve's (and mcp's) start: the CPU and wall time to each
// step, logged at debug level, and to the moment it listens (requests
// are answered from then on), logged as "listening" at info level, so that an operator on a busy host can tell the work start-up
// did from the time it waited for the CPU. Work that can wait until the
// server answers (the safety pass, the folder watch's set-up) is started
// with after, so that it does not compete with the steps to ready.
type startup struct {
	logger *slog.Logger
	up     chan struct{}
	once   sync.Once
}

func newStartup(logger *slog.Logger) *startup {
	return &startup{logger: logger, up: make(chan struct{})}
}

// startupAttrs are the log attributes of the time since processStart:
// wall seconds, and CPU seconds (user plus system) with the system part.
func startupAttrs() []any {
	attrs := []any{"wall_s", seconds(time.Since(processStart))}
	if user, sys, ok := cputime.Process(); ok {
		attrs = append(attrs, "cpu_s", seconds(user+sys), "cpu_sys_s", seconds(sys))
	}
	return attrs
}

// seconds rounds d to milliseconds, in seconds.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// step logs that a step of start-up is done, at debug level.
func (s *startup) step(name string) {
	if s == nil || !s.logger.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	s.logger.Debug("start-up step", append([]any{"step", name}, startupAttrs()...)...)
}

// listening logs "listening" with the time and CPU to it, and starts the
// work after waits for. Only the first call counts. (Ready comes later:
// httpapi.Readiness logs "ready" once what first requests would build is
// built, and GET /readyz turns 200.)
func (s *startup) listening() {
	s.once.Do(func() {
		s.logger.Info("listening", startupAttrs()...)
		close(s.up)
	})
}

// after runs fn in its own goroutine once listening has been called, unless
// ctx ends first.
func (s *startup) after(ctx context.Context, fn func()) {
	go func() {
		select {
		case <-s.up:
			fn()
		case <-ctx.Done():
		}
	}()
}
