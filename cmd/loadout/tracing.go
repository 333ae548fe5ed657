package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/tracing"
)

// tracingFlush bounds how long serve waits, when it stops, for the spans
// still queued to reach the collector.
const tracingFlush = 5 * time.Second

// startTracing registers a tracer as the observer of every mark
// (internal/obs) when the config's tracing.endpoint is set, and returns
// the function that flushes it and takes it away. Without an endpoint
// nothing is made and nothing is registered: the marks cost one atomic
// load each.
func startTracing(cfg *config.File, logger *slog.Logger) (stop func(), err error) {
	if cfg == nil || cfg.Tracing.Endpoint == "" {
		return func() {}, nil
	}
	t := cfg.Tracing
	ratio := 1.0
	if t.SampleRatio != nil {
		ratio = *t.SampleRatio
	}
	headers := make(map[string]string, len(t.Headers))
	for k, v := range t.Headers {
		headers[k] = expandBraced(v)
	}
	tr, err := tracing.New(tracing.Options{
		Endpoint: t.Endpoint, Headers: headers, SampleRatio: ratio,
		ServiceName: t.ServiceName, ServiceVersion: buildVersion, Timeout: time.Duration(t.Timeout), Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	remove := obs.Add(tr)
	u, _ := tracing.TracesURL(t.Endpoint)
	logger.Info("tracing", "endpoint", u, "sample_ratio", ratio)
	return func() {
		remove()
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlush)
		defer cancel()
		if err := tr.Shutdown(ctx); err != nil {
			logger.Warn("traces not all exported at shutdown", "err", err.Error())
		}
	}, nil
}

// expandBraced replaces each ${NAME} in s by the environment variable's
// value; any other $ is kept (an API key may hold one).
func expandBraced(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(os.Getenv(s[i+2 : i+j]))
		s = s[i+j+1:]
	}
}
