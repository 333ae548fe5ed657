package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/loadout/loadout/httpapi"
)

// drainServer stops serve after SIGTERM or SIGINT, in this order, so that
// a load balancer moves traffic away before anything is refused and no
// request in flight is cut short:
//
//  1. readiness off: GET /readyz answers 503 ("draining": true) at once;
//     /healthz (liveness) stays 200 until the process exits;
//  2. the delay (server.shutdownDelay, default 0): the server still
//     accepts and answers new requests while the load balancer's probe
//     notices; a second signal cuts it short;
//  3. stop accepting: the listener closes, idle kept-alive connections
//     close, and event streams (GET text/event-stream: the UI's live
//     updates, MCP sessions' streams) end, since they never finish by
//     themselves;
//  4. drain: requests in flight get server.shutdownTimeout (default 15 s)
//     to finish; past it their connections are closed.
//
// Each step is logged. served is hs.Serve's result, should the server
// stop by itself meanwhile.
func drainServer(hs *http.Server, served <-chan error, rd *httpapi.Readiness, endStreams func(), delay, timeout time.Duration, log *slog.Logger) {
	rd.Drain()
	log.Info("shutting down: not ready (GET /readyz answers 503)", "delay", delay.String(), "timeout", timeout.String())
	if delay > 0 {
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case sig := <-again:
			log.Info("shutting down: a second signal cut the delay short", "signal", sig.String())
		case err := <-served:
			if !errors.Is(err, http.ErrServerClosed) {
				log.Error("shutting down: the server stopped during the delay", "err", err)
			}
		}
		t.Stop()
		signal.Stop(again)
	}
	log.Info("shutting down: listener closed, finishing requests in flight", "timeout", timeout.String())
	endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Error("shutting down: requests still in flight at the timeout were cut off (server.shutdownTimeout)", "timeout", timeout.String(), "err", err)
		hs.Close()
	}
}

// endingStreams ties the context of each event stream (a GET asking for
// text/event-stream) to streams, so that the drain ends them when it
// stops accepting: left alone they would hold it to its timeout. Other
// requests, MCP POSTs answered as a stream included, are left to finish.
func endingStreams(h http.Handler, streams context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(streams, cancel)
			defer stop()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}
