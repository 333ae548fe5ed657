package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// The write benchmarks run against a real SQLite store of
// LOADOUT_BENCH_STORED skills (default 10,000), made once per process.
var (
	storedOnce sync.Once
	storedDir  string
	storedN    int
	storedErr  error
)

func storedDB(b *testing.B) (path string, n int) {
	b.Helper()
	storedOnce.Do(func() {
		storedN = 10_000
		if s := os.Getenv("LOADOUT_BENCH_STORED"); s != "" {
			if storedN, storedErr = strconv.Atoi(s); storedErr != nil || storedN <= 0 {
				storedErr = fmt.Errorf("LOADOUT_BENCH_STORED=%q: want a positive number", s)
				return
			}
		}
		if storedDir, storedErr = os.MkdirTemp("", "loadout-bench-store-"); storedErr != nil {
			return
		}
		st, err := sqlite.Open(filepath.Join(storedDir, "loadout.db"))
		if err != nil {
			storedErr = err
			return
		}
		defer st.Close()
		items := make([]store.ImportItem, storedN)
		for i := range items {
			items[i] = store.ImportItem{Bundle: benchBundle(i, 0), Source: "import"}
		}
		res, err := st.Import(context.Background(), items)
		if err != nil {
			storedErr = err
			return
		}
		for _, r := range res {
			if r.Action != store.ActionCreated {
				storedErr = fmt.Errorf("import of %s: %s %v", r.Name, r.Action, r.Error)
				return
			}
		}
	})
	if storedErr != nil {
		b.Fatal(storedErr)
	}
	return filepath.Join(storedDir, "loadout.db"), storedN
}

func TestMain(m *testing.M) {
	code := m.Run()
	if storedDir != "" {
		os.RemoveAll(storedDir)
	}
	os.Exit(code)
}

// edits numbers the writes of every benchmark run, so that no write saves
// the bytes a skill already has (which changes nothing).
var edits atomic.Int64

func benchName(i int) string {
	words := []string{"deploy", "lint", "review", "report", "audit", "cache", "sync", "build"}
	return fmt.Sprintf("%s-%s-%05d", words[i%len(words)], words[(i/8)%len(words)], i)
}

func benchBundle(i, edit int) *skill.Bundle {
	name := benchName(i)
	return &skill.Bundle{
		Content: fmt.Appendf(nil, "---\nname: %s\ndescription: Helps with %s tasks, edit %d. Use it when the user asks about %s.\ntags: [bench, %s]\n---\n# %s\n\nStep one. Step two. Step three.\n", name, name, edit, name, name[:4], name),
		Files:   []skill.BundleFile{{Path: "references/guide.md", Data: []byte("# Guide\n\nRead me.\n")}, {Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho run\n"), Executable: true}},
	}
}

// benchService is a server's service over the stored skills: the store as
// cmd/loadout wires it, three agents and the global catalog, and the
// store's change feed followed the way "loadout serve" follows it.
func benchService(b *testing.B, follow bool) (*Service, int, *atomic.Int64) {
	b.Helper()
	path, n := storedDB(b)
	st, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Store: true, Available: []string{"deploy-*", "audit-*"}, Inline: []string{"deploy-lint-*"}}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
		{AgentID: "docs", Skills: []catalog.SourceSpec{{Store: true, Available: []string{"report-*", "review-*"}}}},
	}, catalog.Options{Store: benchProvider(st)})
	if err != nil {
		b.Fatal(err)
	}
	if got := len(cat.Global().Names()); got != n {
		b.Fatalf("the catalog holds %d skills, want %d", got, n)
	}
	s := New(cat, Options{Store: st, Server: st, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { s.Close() })
	if !follow {
		return s, n, nil
	}
	return s, n, followStore(ctx, b, s, st)
}

// BenchmarkPutFile10k replaces one file of one stored skill through the
// service, as PUT /v1/skills/{name}/files/{path} does: the write, the
// catalog refresh, and (in the background) whatever the store's change
// feed makes the server do.
func BenchmarkPutFile10k(b *testing.B) {
	s, n, feed := benchService(b, true)
	ctx := context.Background()
	admin := Principal{Open: true}
	var name, text string
	b.ReportAllocs()
	for b.Loop() {
		e := int(edits.Add(1))
		name, text = benchName((e*7919)%n), fmt.Sprintf("# Guide\n\nEdit %d.\n", e)
		if _, err := s.PutFile(ctx, admin, name, "references/guide.md", []byte(text), false, -1); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(feed.Load())/float64(b.N), "feed-refreshes/op")
	l, _ := s.Catalog().Agent("dev")
	e, ok := l.Lookup(name)
	if !ok {
		b.Fatal("the last skill written is not in the catalog")
	}
	if data, err := e.Skill.ReadFile("references/guide.md"); err != nil || string(data) != text {
		b.Fatalf("the catalog serves %q (%v) after the last write of %q", data, err, text)
	}
}

// BenchmarkPut10k replaces a whole stored skill (a new description, so
// the loadouts' listings change).
func BenchmarkPut10k(b *testing.B) {
	s, n, feed := benchService(b, true)
	ctx := context.Background()
	admin := Principal{Open: true}
	var k, e int
	b.ReportAllocs()
	for b.Loop() {
		e = int(edits.Add(1))
		k = (e * 7919) % n
		if _, err := s.Put(ctx, admin, benchBundle(k, e), -1, "api", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(feed.Load())/float64(b.N), "feed-refreshes/op")
	l, _ := s.Catalog().Agent("dev")
	want := fmt.Sprintf("Helps with %s tasks, edit %d. Use it when the user asks about %s.", benchName(k), e, benchName(k))
	if en, ok := l.Lookup(benchName(k)); !ok || en.Skill.Description != want {
		b.Fatalf("the catalog does not serve the last write: %+v", en)
	}
}

// benchProvider is the store provider as cmd/loadout wires it.
func benchProvider(st store.Store) catalog.Provider { return store.NewProvider(st) }

// followStore follows the store's change feed as "loadout serve" does,
// and counts the refreshes it makes (with this service's writes alone, a
// refresh is a write applied twice).
func followStore(ctx context.Context, b *testing.B, s *Service, st store.Server) *atomic.Int64 {
	ch, err := store.ChangesByOthers(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for range ch {
			n.Add(1)
			s.Refresh(ctx, nil, "store changed")
		}
	}()
	return &n
}

// BenchmarkPutFile16Writers10k is BenchmarkPutFile10k with 16 writers at
// once, each on skills of its own: ns/op is the time per write of the
// whole server (its inverse is writes per second).
func BenchmarkPutFile16Writers10k(b *testing.B) {
	s, n, feed := benchService(b, true)
	ctx := context.Background()
	admin := Principal{Open: true}
	b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := int(edits.Add(1))
			if _, err := s.PutFile(ctx, admin, benchName((e*7919)%n), "references/guide.md", fmt.Appendf(nil, "# Guide\n\nEdit %d.\n", e), false, -1); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(feed.Load())/float64(b.N), "feed-refreshes/op")
}

// BenchmarkOtherInstanceWrite10k is a write by another instance sharing
// the database (another server, or the CLI): this server reads the whole
// store again, compares, and patches the loadouts of what changed (the
// write itself is not timed).
func BenchmarkOtherInstanceWrite10k(b *testing.B) {
	s, n, _ := benchService(b, false) // the refresh the feed would make is the one timed
	path, _ := storedDB(b)
	other, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	var name, text string
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		e := int(edits.Add(1))
		name, text = benchName((e*7919)%n), fmt.Sprintf("# Guide\n\nEdit %d.\n", e)
		if _, err := other.PutFile(ctx, name, "references/guide.md", []byte(text), false, -1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s.Refresh(ctx, nil, "store changed")
	}
	l, _ := s.Catalog().Agent("dev")
	if e, ok := l.Lookup(name); !ok {
		b.Fatal("the last skill written is not in the catalog")
	} else if data, _ := e.Skill.ReadFile("references/guide.md"); string(data) != text {
		b.Fatalf("the catalog serves %q after the other instance wrote %q", data, text)
	}
}
