package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/service"
)

func BenchmarkZZSearchRoute(b *testing.B) {
	dir := b.TempDir()
	if err := gen.Tree(dir, 10000, 1); err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "bench", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cat, service.Options{Logger: quiet})
	h := httpapi.Auth(svc, httpapi.New(svc, httpapi.Options{Logger: quiet}))
	l, _ := cat.Agent("bench")
	l.WarmSearch()
	req := httptest.NewRequest("GET", "/v1/agents/bench/search?q=release+notes+for+the+api", nil)
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}
