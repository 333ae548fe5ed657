package httpapi_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
)

// benchFiles is a catalog of 200 folder skills with bodies of a few
// kilobytes and a handful of files each.
func benchFiles() map[string]string {
	files := map[string]string{}
	body := strings.Repeat("Follow these steps carefully; see references/guide.md for <details>.\n", 40)
	for i := range 200 {
		n := fmt.Sprintf("skill-%03d", i)
		files[n+"/SKILL.md"] = md(n, "Does thing number "+n+" for the benchmark.", body)
		for j := range 5 {
			files[fmt.Sprintf("%s/references/ref%d.md", n, j)] = "# ref\n"
		}
	}
	return files
}

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkLoad measures GET /v1/agents/{id}/skills/{name}, the cached
// load, with receipts recorded into the SQLite store:
//   - handler: Auth(New(...)).ServeHTTP in process, no network;
//   - handler-token: the same with a bearer token (a token lookup per request);
//   - full-chain: RequestID(Log(Auth(New(...)))) with a discarding logger;
//   - serve-chain-token: serve's whole chain (Timeouts, RequestID, Log at
//     info, Guard, Auth, New) with an agent token;
//   - serve-chain-token-metrics: the same with serve's metrics (Measure
//     and the loads' counter);
//   - tcp: over loopback through httptest.NewServer with keep-alive.
func BenchmarkLoad(b *testing.B) {
	e := newEnvServe(b, benchFiles(), false, true) // bodies held, as serve holds them
	url := "/v1/agents/coder/skills/skill-042"
	serve := func(b *testing.B, h http.Handler, token string) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", url, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			w := &nopWriter{h: http.Header{}}
			for pb.Next() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
	b.Run("handler", func(b *testing.B) { serve(b, e.h, "") })
	b.Run("handler-token", func(b *testing.B) { serve(b, e.h, e.admin) })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("full-chain", func(b *testing.B) { serve(b, httpapi.RequestID(httpapi.Log(quiet, e.h)), "") })
	// serve's chain (timeouts, request id, log, guard, auth), with an
	// agent token as production runs.
	b.Run("serve-chain-token", func(b *testing.B) {
		h := chain(b, e.svc)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", "http://127.0.0.1:8080"+url, nil)
			req.Header.Set("Authorization", "Bearer "+e.coder)
			w := &deadlineRecorder{nopWriter: nopWriter{h: http.Header{}}}
			for pb.Next() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	})
	// The same with serve's metrics (httpapi.Measure, the load's counter
	// through the service's hook): compare with serve-chain-token.
	b.Run("serve-chain-token-metrics", func(b *testing.B) {
		h, _ := chainMetrics(b, e.svc)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest("GET", "http://127.0.0.1:8080"+url, nil)
			req.Header.Set("Authorization", "Bearer "+e.coder)
			w := &deadlineRecorder{nopWriter: nopWriter{h: http.Header{}}}
			for pb.Next() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	})
	// Over loopback TCP through serve's chain, with an agent token,
	// without and with the metrics: what a client sees of their cost.
	tcpChain := func(b *testing.B, h http.Handler) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		tr := &http.Transport{MaxIdleConnsPerHost: 256}
		c := &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req, _ := http.NewRequest("GET", srv.URL+url, nil)
			req.Header.Set("Authorization", "Bearer "+e.coder)
			for pb.Next() {
				res, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
	}
	b.Run("tcp-chain", func(b *testing.B) { tcpChain(b, chain(b, e.svc)) })
	b.Run("tcp-chain-metrics", func(b *testing.B) { h, _ := chainMetrics(b, e.svc); tcpChain(b, h) })
	b.Run("tcp", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 256}
		c := &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := c.Get(e.srv.URL + url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
	})
}
