package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/tracing"
)

// BenchmarkLoadCachedTracing is BenchmarkLoad/serve-chain-token (serve's
// whole chain, Trace included, an agent token, the cached load) with a
// traceparent on every request:
//   - Off: no tracing configured (no observer: obs.Start is one atomic load);
//   - On: a tracer exporting every span over OTLP/HTTP, through the real
//     exporter and its batching, to a local receiver that reads and drops
//     each batch.
//
// docs/tracing.md has the figures and the command.
func BenchmarkLoadCachedTracing(b *testing.B) {
	e := newEnvServe(b, benchFiles(), false, true)
	url := "http://127.0.0.1:8080/v1/agents/coder/skills/skill-042"
	run := func(b *testing.B) {
		h := chain(b, e.svc)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+e.coder)
			req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			w := &deadlineRecorder{nopWriter: nopWriter{h: http.Header{}}}
			for pb.Next() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
	b.Run("Off", func(b *testing.B) {
		obs.Set(nil)
		run(b)
	})
	b.Run("On", func(b *testing.B) {
		var batches atomic.Int64
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			batches.Add(1)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK)
		}))
		defer recv.Close()
		tr, err := tracing.New(tracing.Options{Endpoint: recv.URL, SampleRatio: 1})
		if err != nil {
			b.Fatal(err)
		}
		obs.Set(tr)
		defer func() {
			obs.Set(nil)
			tr.Shutdown(context.Background())
		}()
		run(b)
		if err := tr.ForceFlush(context.Background()); err != nil {
			b.Fatal(err)
		}
		if batches.Load() == 0 {
			b.Fatal("no batch reached the receiver")
		}
	})
}

// BenchmarkTraceMiddlewareOff is what Trace adds to a request with no
// observer: the handler alone, and behind Trace. Against the cached load
// (BenchmarkLoad/serve-chain-token, microseconds) it is the whole cost of
// tracing off on the HTTP path; the other marks on that path (none: a
// cached load reaches no store, refresh or safety check) cost the same
// atomic load each.
func BenchmarkTraceMiddlewareOff(b *testing.B) {
	obs.Set(nil)
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	req := httptest.NewRequest("GET", "/v1/agents/coder/skills/skill-042", nil)
	w := &nopWriter{h: http.Header{}}
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, req)
		}
	})
	traced := httpapi.Trace(httpapi.RouteOf(), h)
	b.Run("trace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			traced.ServeHTTP(w, req)
		}
	})
}
