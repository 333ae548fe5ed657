package webui_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/bench/gen"
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
// weight in a real Chromium. Targets: the skills page under
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

// BenchmarkSkillsListScale is the skills list as an operator meets it: the
// real binary (`loadout serve --root`) over a generated tree (bench/gen:
// descriptions of 50 to 900 characters, three supporting files a skill,
// one a script) of 400, 2,000 and 10,000 skills (LOADOUT_BENCH_SIZES), and
// over a real collection when LOADOUT_BENCH_CORPUS=DIR. Per size:
//
//	ms-first-server  the first page after the server is up, in Chromium:
//	                 request to last byte (the rows are built, and wait for
//	                 the safety checks the server starts with)
//	ms-first-dcl     that load's DOMContentLoaded
//	ms-server        a GET /ui/ once the safety checks have ended, as a
//	                 browser asks (gzip), to the last byte; the target is
//	                 under 50 ms at 10,000
//	ms-dcl           DOMContentLoaded of /ui/ in Chromium at 1280×800, the
//	                 browser's cache off (target: under 1 s)
//	KB-html          the page's HTML, uncompressed (target: under 100 KB)
//
// Each iteration is one GET and one browser load; bench/ui_list.sh runs it
// with -benchtime 10x and prints the table.
func BenchmarkSkillsListScale(b *testing.B) {
	sizes := []int{400, 2_000, 10_000}
	if s := os.Getenv("LOADOUT_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("LOADOUT_BENCH_SIZES=%q: want positive numbers, comma-separated", s)
			}
			sizes = append(sizes, n)
		}
	}
	type tree struct {
		name, dir string
		n         int
	}
	var trees []tree
	for _, n := range sizes {
		trees = append(trees, tree{fmt.Sprintf("n=%d", n), "", n})
	}
	if c := os.Getenv("LOADOUT_BENCH_CORPUS"); c != "" {
		trees = append(trees, tree{"corpus=" + filepath.Base(c), c, 0})
	}
	ctx := browsertest.Browser(b, 1280, 800)
	browsertest.Do(b, ctx, "network on, cache off", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}))
	type navTiming struct{ Server, DCL float64 }
	load := func(b *testing.B, u string) navTiming {
		browsertest.Do(b, ctx, "open "+u, chromedp.Navigate(u))
		return browsertest.Get(b, ctx, "navigation timing", chromedp.Evaluate[navTiming](
			`(() => { const n = performance.getEntriesByType("navigation")[0]; return {Server: n.responseEnd - n.requestStart, DCL: n.domContentLoadedEventEnd} })()`))
	}
	for _, tr := range trees {
		b.Run(tr.name, func(b *testing.B) {
			dir := tr.dir
			if dir == "" {
				dir = filepath.Join(b.TempDir(), "skills")
				if err := gen.Tree(dir, tr.n, 1); err != nil {
					b.Fatal(err)
				}
			}
			srv := browsertest.Serve(b, []string{"HOME=" + b.TempDir()}, "--root", dir, "--db", filepath.Join(b.TempDir(), "l.db"), "--no-watch")
			first := load(b, srv.URL+"/ui/")
			// The steady state: once the start's safety checks have ended
			// (until then the list shows its rows without their findings,
			// and shares the CPU with the checks).
			var size int
			for deadline := time.Now().Add(10 * time.Minute); ; {
				body := getBody(b, srv.URL+"/ui/")
				size = len(body)
				if !strings.Contains(body, `id="skills-pending"`) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("the safety checks did not end in 10 minutes")
				}
				time.Sleep(100 * time.Millisecond)
			}
			var server time.Duration
			var dcl float64
			for b.Loop() {
				d, _ := timedGet(b, srv.URL+"/ui/", true)
				server += d
				dcl += load(b, srv.URL+"/ui/").DCL
			}
			n := float64(max(b.N, 1))
			b.ReportMetric(first.Server, "ms-first-server")
			b.ReportMetric(first.DCL, "ms-first-dcl")
			b.ReportMetric(float64(server)/1e6/n, "ms-server")
			b.ReportMetric(dcl/n, "ms-dcl")
			b.ReportMetric(float64(size)/1024, "KB-html")
		})
	}
}

// getBody GETs u and fails unless it is a 200.
func getBody(b *testing.B, u string) string {
	b.Helper()
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(body)
}

// timedGet GETs u as a browser would (gzip accepted when gz), fails unless
// it is a 200, and returns the time to the last byte and the body's size.
func timedGet(b *testing.B, u string, gz bool) (time.Duration, int) {
	b.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	if gz {
		// Set by hand, so the client leaves the body compressed, as sent.
		req.Header.Set("Accept-Encoding", "gzip")
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v\n%.500s", u, resp.StatusCode, err, body)
	}
	return d, len(body)
}
