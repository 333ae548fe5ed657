package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/mcpserver"
	"github.com/loadout/loadout/metrics"
)

// serverMetrics makes serve's metrics (docs/metrics.md): the registry GET
// /metrics exposes, told of operations through internal/obs, of loads
// and reads through the service, and reading the service's state, the
// MCP sessions and the UI's live streams when scraped.
func serverMetrics(srv *server, sessions *mcpserver.Sessions) (*metrics.Metrics, error) {
	var c config.Metrics
	if srv.cfg != nil {
		c = srv.cfg.Metrics
	}
	m, err := metrics.New(metrics.Options{SkillLabels: c.SkillLabels, MaxSkillSeries: c.MaxSkillSeries})
	if err != nil {
		return nil, err
	}
	m.WatchService(srv.svc)
	srv.svc.OnActivation(m.Activation)
	if sessions != nil {
		m.WatchSessions(func() int { open, _, _ := sessions.Stats(); return open }, nil)
	}
	// An observer of operations' marks, beside the tracer when there is
	// one (tracing.go).
	srv.closers = append(srv.closers, obs.Add(m.Observer()))
	return m, nil
}

// Bounds of the metrics listener (metrics.addr): a scraper or two, never
// a crowd.
const (
	metricsMaxConns       = 16
	metricsMaxConnsPerIP  = 4
	metricsHeaderTimeout  = 5 * time.Second
	metricsWriteTimeout   = 30 * time.Second
	metricsIdleTimeout    = 2 * time.Minute
	metricsMaxHeaderBytes = 8 << 10
)

// metricsHandler is the metrics listener's handler: GET (or HEAD)
// /metrics, nothing else. On a loopback listener the Host header must
// name this machine, so that a web page reached through a name made to
// resolve to 127.0.0.1 (DNS rebinding) cannot read it.
func metricsHandler(m http.Handler, loopbackOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackOnly {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !config.LoopbackHost(host) {
				http.Error(w, "this listener answers only to loopback host names (127.0.0.1, localhost, [::1])", http.StatusForbidden)
				return
			}
		}
		if r.URL.Path != httpapi.MetricsPath {
			http.Error(w, "this listener serves only GET /metrics", http.StatusNotFound)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GET /metrics only", http.StatusMethodNotAllowed)
			return
		}
		m.ServeHTTP(w, r)
	})
}

// startMetricsListener serves GET /metrics without a token on c.Addr, when
// set, until ctx ends, and returns the address it listens on. A
// non-loopback address needs c.AllowNonLoopback (the config check
// refuses it otherwise; this checks again).
func startMetricsListener(ctx context.Context, c config.Metrics, m *metrics.Metrics, logger *slog.Logger) (net.Addr, error) {
	if c.Addr == "" {
		return nil, nil
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.addr %q: give HOST:PORT, like 127.0.0.1:9464", c.Addr)
	}
	loop := config.LoopbackHost(host)
	if !loop && !c.AllowNonLoopback {
		return nil, fmt.Errorf("metrics.addr %q: refusing a non-loopback metrics listener (it needs no token): use 127.0.0.1, or set metrics.allowNonLoopback", c.Addr)
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.addr: %w", err)
	}
	limited := httpapi.LimitListener(ln, httpapi.ConnLimits{Max: metricsMaxConns, MaxPerIP: metricsMaxConnsPerIP, Logger: logger})
	hs := &http.Server{Handler: metricsHandler(m.Handler(), loop), ReadHeaderTimeout: metricsHeaderTimeout,
		WriteTimeout: metricsWriteTimeout, IdleTimeout: metricsIdleTimeout, MaxHeaderBytes: metricsMaxHeaderBytes}
	limited.Track(hs)
	go func() {
		if err := hs.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	logger.Info("metrics listener", "addr", ln.Addr().String(), "path", httpapi.MetricsPath, "token", "none", "loopback_only", loop)
	return ln.Addr(), nil
}
