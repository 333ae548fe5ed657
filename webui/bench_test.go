package webui_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/webui"
)

// Benchmarks of the UI (bench/ui.sh, or go test -run '^$' -bench Pages
// ./webui): server time per page through the handler, and each page's
// weight in a real Chromium. Targets (issue 10): the skills page under
// 50 ms at 10,000 skills; every page under 300 KB transferred.

// benchHandler builds the UI's handler over a folder of skills and a SQLite
// store, as `loadout serve` does, in open mode (no tokens).
func benchHandler(b *testing.B, root string, st store.Store) http.Handler {
	b.Helper()
	ctx := context.Background()
	opts := catalog.Options{Store: catalog.ProviderFunc(func(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
		sks, diags, err := store.Skills(ctx, st)
		if err != nil {
			b.Errorf("store.Skills: %v", err)
		}
		return sks, diags
	})}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "coder", DisplayName: "Coder", Skills: []catalog.SourceSpec{{Root: root}, {Store: true}}},
		{AgentID: "writer", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"skill-000*"}}}},
	}, opts)
	if err != nil {
		b.Fatal(err)
	}
	srv, _ := st.(store.Server)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cat, service.Options{Store: st, Server: srv, Logger: quiet})
	b.Cleanup(func() { svc.Close() })
	return webui.New(svc, webui.Options{Logger: quiet})
}

// openBenchStore opens a SQLite store in the benchmark's temporary folder.
func openBenchStore(b *testing.B) store.Store {
	b.Helper()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "loadout.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// serveOne runs one GET through the handler from loopback, as a browser
// on the same machine would (gzip accepted, or not), fails unless it is a
// 200 page, and returns the body's size as sent.
func serveOne(b *testing.B, h http.Handler, target string, gzip bool) int {
	r := httptest.NewRequest("GET", target, nil)
	r.RemoteAddr = "127.0.0.1:50000"
	r.Header.Set("Accept", "text/html")
	if gzip {
		r.Header.Set("Accept-Encoding", "gzip, deflate, br")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d\n%.500s", target, w.Code, w.Body.String())
	}
	return w.Body.Len()
}

// BenchmarkPagesSkills10k: the skills page over 10,000 skills, server time
// per request through the handler, gzip included, as a browser asks for it
// (target: under 50 ms).
func BenchmarkPagesSkills10k(b *testing.B) {
	root := b.TempDir()
	webui.WriteSkills(b, root, 10_000)
	h := benchHandler(b, root, openBenchStore(b))
	size, sent := serveOne(b, h, "/ui/", false), serveOne(b, h, "/ui/", true)
	b.ReportAllocs()
	for b.Loop() {
		serveOne(b, h, "/ui/", true)
	}
	b.ReportMetric(float64(size)/1024, "KB-html")
	b.ReportMetric(float64(sent)/1024, "KB-sent")
}

// BenchmarkPagesSkill200Files: each tab of the skill page of a stored
// skill with 200 supporting files and three versions, next to 1,000
// folder skills; server time per request through the handler.
func BenchmarkPagesSkill200Files(b *testing.B) {
	root := b.TempDir()
	webui.WriteSkills(b, root, 1_000)
	st := openBenchStore(b)
	ctx := context.Background()
	bundle := &skill.Bundle{}
	for i := range 200 {
		var data []byte
		path := fmt.Sprintf("references/part-%03d.md", i)
		switch i % 4 {
		case 1:
			path = fmt.Sprintf("scripts/step-%03d.sh", i)
			data = []byte(fmt.Sprintf("#!/bin/sh\necho step %d\n", i))
		case 2:
			path = fmt.Sprintf("assets/image-%03d.png", i)
			data = tinyPNG
		default:
			data = []byte(fmt.Sprintf("# Part %d\n\n%s\n", i, strings.Repeat("Some reference text. ", 40)))
		}
		bundle.Files = append(bundle.Files, skill.BundleFile{Path: path, Data: data, Executable: i%4 == 1})
	}
	ver := 0
	for v := range 3 {
		bundle.Content = []byte(fmt.Sprintf("---\nname: big\ndescription: A skill with 200 files, for the benchmark. Use when benchmarking.\nversion: 1.%d.0\ntags: [bench]\n---\n# Big\n\nSee [part 0](references/part-000.md) and ![an image](assets/image-002.png).\n\n%s", v, strings.Repeat("A line of the body.\n", 100)))
		rec, err := st.Put(ctx, bundle, store.PutOptions{IfVersion: ver, Source: "api"})
		if err != nil {
			b.Fatal(err)
		}
		ver = rec.Version
	}
	h := benchHandler(b, root, st)
	for _, tab := range []string{"skill-md", "files", "preview", "versions", "usage", "agents"} {
		b.Run("tab="+tab, func(b *testing.B) {
			target := "/ui/skills/big?tab=" + tab
			size, sent := serveOne(b, h, target, false), serveOne(b, h, target, true)
			b.ReportAllocs()
			for b.Loop() {
				serveOne(b, h, target, true)
			}
			b.ReportMetric(float64(size)/1024, "KB-html")
			b.ReportMetric(float64(sent)/1024, "KB-sent")
		})
	}
}

// BenchmarkPagesWeight loads every page the crawl reaches in Chromium,
// cold, and reports the bytes transferred per page (budget: 300 KB each;
// the table is in the log). Each iteration is one whole crawl; run it with
// -benchtime=1x and -v (a benchmark's log is cut short without it).
func BenchmarkPagesWeight(b *testing.B) {
	ctx := browsertest.Browser(b, 1280, 800)
	srv := newCatalog(b).serve(b)
	var ws []pageWeight
	for b.Loop() {
		ws = measureWeights(b, ctx, srv.URL+"/ui/")
	}
	var most, total int64
	for _, w := range ws {
		total += w.Bytes
		most = max(most, w.Bytes)
	}
	b.Logf("page weight, loaded cold (%d pages):\n%s", len(ws), weightTable(ws))
	b.ReportMetric(float64(most)/1024, "KB-heaviest-page")
	b.ReportMetric(float64(total)/float64(max(1, len(ws)))/1024, "KB-mean-page")
	b.ReportMetric(float64(len(ws)), "pages")
}
