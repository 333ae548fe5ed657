package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/metrics"
	"github.com/loadout/loadout/service"
)

// skillsService is a service over n skills in a folder served to two
// agents.
func skillsService(t *testing.T, n int) *service.Service {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("skill-%05d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), fmt.Appendf(nil, "---\nname: skill-%05d\ndescription: Use when task %d comes up.\n---\nBody.\n", i, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root}}},
		{AgentID: "writer", Skills: []catalog.SourceSpec{{Root: root}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cat.Global().Names()); got != n {
		t.Fatalf("%d skills in the catalog, want %d", got, n)
	}
	svc := service.New(cat, service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { svc.Close() })
	return svc
}

// seriesAt loads and reads every skill of svc once (and a miss per
// skill), counts a request on each of a few routes, marks one operation
// of each kind, and returns the scrape's sample lines: all of them, and
// loadout's own.
func seriesAt(t *testing.T, svc *service.Service, o metrics.Options) (all, own int) {
	t.Helper()
	ctx := context.Background()
	cat := svc.Catalog()
	m := newMetrics(t, o)
	m.WatchService(svc)
	m.WatchSessions(func() int { return 0 }, func() int { return 0 })
	svc.OnActivation(m.Activation)
	obs.Set(m.Observer())
	defer obs.Set(nil)
	p := service.Principal{Open: true}
	for _, name := range cat.Global().Names() {
		svc.Load(ctx, p, "coder", name, service.TransportHTTP)
		svc.ReadFile(ctx, p, "writer", name, "SKILL.md", catalog.ReadOptions{}, service.TransportHTTP)
		svc.Load(ctx, p, "coder", name+"-missing", service.TransportHTTP)
		m.ObserveRequest("/v1/agents/{id}/skills/{name}", "GET", 200, time.Millisecond)
	}
	for _, r := range []string{"/v1/skills", "/v1/skills/{name}", "/metrics", "/agents/{id}/mcp"} {
		m.ObserveRequest(r, "GET", 200, time.Millisecond)
		m.ObserveRequest(r, "GET", 404, time.Millisecond)
	}
	for _, k := range []obs.Kind{obs.KindStore, obs.KindRefresh, obs.KindSync, obs.KindSafetyScan} {
		_, end := obs.Start(ctx, k, "x")
		end(nil)
	}
	for _, name := range []string{"initialize", "tools/list", "tools/call load_skill", "tools/call read_skill_file"} {
		_, end := obs.Start(ctx, obs.KindMCP, name)
		end(nil)
	}
	s := scrape(t, m)
	for k := range s {
		if strings.HasPrefix(k, "loadout_") {
			own++
		}
	}
	return len(s), own
}

// TestSeriesAt10000Skills is the figure of docs/metrics.md: the series
// /metrics exposes at 10,000 skills, each loaded and read, with default
// settings (no skill names: the same count as at 10 skills) and with
// skill labels at the default cap and at the largest. Skipped with -short.
func TestSeriesAt10000Skills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 skills")
	}
	small, smallOwn := seriesAt(t, skillsService(t, 10), metrics.Options{})
	svc := skillsService(t, 10_000)
	def, defOwn := seriesAt(t, svc, metrics.Options{})
	on, onOwn := seriesAt(t, svc, metrics.Options{SkillLabels: true})
	top, topOwn := seriesAt(t, svc, metrics.Options{SkillLabels: true, MaxSkillSeries: metrics.MaxMaxSkillSeries})
	t.Logf("series at 10,000 skills: default %d (loadout's own %d; at 10 skills %d and %d); skillLabels with the default cap of %d names %d (%d); with the cap at %d names %d (%d)",
		def, defOwn, small, smallOwn, metrics.DefaultMaxSkillSeries, on, onOwn, metrics.MaxMaxSkillSeries, top, topOwn)
	if defOwn != smallOwn {
		t.Errorf("default settings: %d series of loadout's at 10,000 skills, %d at 10: the count must not grow with skills", defOwn, smallOwn)
	}
	// Each admitted name has a load and a read series; _other has both,
	// _unknown the misses' loads.
	if want := defOwn + 2*metrics.DefaultMaxSkillSeries + 2 + 1; onOwn != want {
		t.Errorf("skill labels at the default cap: %d series, want %d", onOwn, want)
	}
	if want := defOwn + 2*metrics.MaxMaxSkillSeries + 1; topOwn != want {
		t.Errorf("skill labels at the largest cap: %d series, want %d (every skill's load and read, and _unknown)", topOwn, want)
	}
}
