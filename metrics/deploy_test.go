package metrics_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/metrics"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
)

// deployDir is the repository's deploy/ folder.
const deployDir = "../deploy"

// promtool finds promtool (Debian's prometheus package): absent, the
// test skips, but under CI it fails (.ci/run installs it).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed, and CI must not skip the alert rules' check: install Debian's prometheus package (.ci/run does)")
		}
		t.Skip("promtool is not installed (Debian's prometheus package); under CI this fails")
	}
	return p
}

// TestAlertRules: deploy/prometheus/alerts.yml is valid for promtool, and
// its unit tests (alerts_test.yml: each alert fires on the series that
// should fire it, with its labels and text, and not before its "for")
// pass.
func TestAlertRules(t *testing.T) {
	pt := promtool(t)
	dir := filepath.Join(deployDir, "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(pt, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool %s did not say SUCCESS:\n%s", strings.Join(args, " "), out)
		}
	}
}

// staticRemotes is one remote source's status, as remote.Manager reports
// a git source whose last sync failed.
type staticRemotes struct{ synced time.Time }

func (r staticRemotes) Sync(context.Context, ...string) []service.SourceSync { return nil }
func (r staticRemotes) Status() []service.SourceStatus {
	return []service.SourceStatus{{ID: "team", Kind: "git", Skills: 2, Synced: r.synced, Error: "unreachable"}}
}

// fullScrape is a scrape of metrics over a real service (a folder of
// skills, SQLite) with every family holding a series: a request, a load
// and a read, a mark of each kind, a remote source, sessions.
func fullScrape(t *testing.T) map[string]float64 {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills", "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "skills", "deploy", "SKILL.md"), []byte("---\nname: deploy\ndescription: Use when you deploy.\n---\nBody.\n"), 0o644)
	st, err := sqlite.Open(filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: filepath.Join(dir, "skills")}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { svc.Close() })
	svc.SetRemotes(staticRemotes{synced: time.Now().Add(-time.Hour)})
	m := newMetrics(t, metrics.Options{SkillLabels: true})
	m.WatchService(svc)
	m.WatchSessions(func() int { return 1 }, func() int { return 2 })
	svc.OnActivation(m.Activation)
	obs.Set(m.Observer())
	defer obs.Set(nil)
	p := service.Principal{Open: true}
	if _, err := svc.Load(ctx, p, "coder", "deploy", service.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ReadFile(ctx, p, "coder", "deploy", "SKILL.md", catalog.ReadOptions{}, service.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	m.ObserveRequest("/v1/agents/{id}/skills/{name}", "GET", 200, time.Millisecond)
	for _, k := range []obs.Kind{obs.KindStore, obs.KindRefresh, obs.KindSync, obs.KindSafetyScan} {
		_, end := obs.Start(ctx, k, "x")
		end(nil)
	}
	_, end := obs.Start(ctx, obs.KindMCP, "tools/call load_skill")
	end(nil)
	return scrape(t, m)
}

// metricName finds the metric names an expression reads: loadout's own,
// Go's and the process's.
var metricName = regexp.MustCompile(`\b(?:loadout|go|process)_[a-zA-Z0-9_]+\b`)

// exposedNames is every sample name of a scrape (a histogram's _bucket,
// _sum and _count each).
func exposedNames(s map[string]float64) map[string]bool {
	out := map[string]bool{}
	for k := range s {
		if i := strings.IndexByte(k, '{'); i >= 0 {
			k = k[:i]
		}
		out[k] = true
	}
	return out
}

// TestDeployNamesExposed: every metric name the Grafana dashboard's
// queries and the alert rules read is one loadout exposes (in a scrape
// with every family populated): a renamed metric fails here, not on an
// operator's empty panel or silent alert.
func TestDeployNamesExposed(t *testing.T) {
	exposed := exposedNames(fullScrape(t))
	check := func(where, expr string) int {
		names := metricName.FindAllString(expr, -1)
		for _, n := range names {
			if !exposed[n] {
				t.Errorf("%s reads %s, which loadout does not expose (expr: %s)", where, n, expr)
			}
		}
		return len(names)
	}
	// The dashboard: every panel's every target.
	data, err := os.ReadFile(filepath.Join(deployDir, "grafana", "loadout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("deploy/grafana/loadout.json: %v", err)
	}
	n, queries := 0, 0
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			if c := check("dashboard panel "+p.Title, tg.Expr); c == 0 {
				t.Errorf("panel %q: query %q reads no loadout metric", p.Title, tg.Expr)
			} else {
				n += c
			}
		}
	}
	if queries < 20 {
		t.Errorf("the dashboard has %d queries; expected at least 20", queries)
	}
	// The alert rules.
	data, err = os.ReadFile(filepath.Join(deployDir, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.Alert != "LoadoutDown" && check("alert "+r.Alert, r.Expr) == 0 {
				t.Errorf("alert %s reads no loadout metric: %s", r.Alert, r.Expr)
			}
		}
	}
	sort.Strings(alerts)
	want := []string{"LoadoutDown", "LoadoutHighErrorRate", "LoadoutHighLatencyP99", "LoadoutReceiptsFailing", "LoadoutReceiptsLost", "LoadoutSourceStale"}
	if strings.Join(alerts, " ") != strings.Join(want, " ") {
		t.Errorf("alerts %v, want %v", alerts, want)
	}
	t.Logf("%d queries and %d alerts read %d metric names, all exposed", queries, len(alerts), n)
}

// TestFullScrapeValues: the state families read the service as it is.
func TestFullScrapeValues(t *testing.T) {
	s := fullScrape(t)
	for k, want := range map[string]float64{
		`loadout_catalog_skills`:                                 1,
		`loadout_catalog_agent_skills{agent="coder"}`:            1,
		`loadout_source_sync_failing{kind="git",source="team"}`:  1,
		`loadout_source_skills{kind="git",source="team"}`:        2,
		`loadout_receipts_recorded_total`:                        2,
		`loadout_mcp_sessions`:                                   1,
		`loadout_ui_live_streams`:                                2,
		`loadout_activations_total{agent="coder",outcome="ok"}`:  1,
		`loadout_file_reads_total{agent="coder",outcome="ok"}`:   1,
		`loadout_skill_uses_total{action="load",skill="deploy"}`: 1,
		`loadout_receipt_write_errors_total`:                     0,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if age := s[`loadout_source_pin_age_seconds{kind="git",source="team"}`]; age < 3590 || age > 3700 {
		t.Errorf("pin age %v s, want about 3600", age)
	}
}
