package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// prometheusBin is Debian's prometheus: absent, the test skips, but
// under CI it fails (.ci/run installs the package).
func prometheusBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed, and CI must not skip the scrape test: install Debian's prometheus package (.ci/run does)")
		}
		t.Skip("prometheus is not installed (Debian's prometheus package); under CI this fails")
	}
	return p
}

// promQuery asks Prometheus's HTTP API for an instant vector and returns
// each sample's value by its labels' text.
func promQuery(t *testing.T, promBase, q string) (map[string]string, error) {
	resp, err := http.Get(promBase + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
		Error string
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	out := map[string]string{}
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		out[fmt.Sprint(s.Metric)] = v
	}
	return out, nil
}

// TestPrometheusScrapesServe: a real Prometheus scrapes a real `loadout
// serve` (SQLite) with a metrics token, and a query for the loads counter
// returns the loads made; an admin token in the scrape config is refused
// (the target is down).
func TestPrometheusScrapesServe(t *testing.T) {
	prom := prometheusBin(t)
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", "deploy"), 0o755))
	testutil.Write(t, filepath.Join(dir, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Use when you deploy.\n---\nDeploy.\n")
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "ops", "skills": [{"root": "skills"}]}]}`)
	db := filepath.Join(dir, "loadout.db")
	mk := func(scope string) string {
		r := runCLI(t, "token", "create", "--db", db, "--scope", scope, "--name", scope)
		if r.code != 0 {
			t.Fatalf("token create --scope %s: %d %s", scope, r.code, r.stderr)
		}
		return strings.TrimSpace(r.stdout)
	}
	admin, metricsTok := mk("admin"), mk("metrics")
	testutil.Write(t, filepath.Join(dir, "metrics.token"), metricsTok)
	testutil.Write(t, filepath.Join(dir, "admin.token"), admin)
	srv := startServe(t, "--config", cfg)
	const loads = 7
	for range loads {
		if code, body := httpDo(t, "GET", srv.base+"/v1/agents/ops/skills/deploy", admin, nil); code != 200 {
			t.Fatalf("load: %d %s", code, body)
		}
	}
	if code, _ := httpDo(t, "GET", srv.base+"/v1/agents/ops/skills/nope", admin, nil); code != 404 {
		t.Fatalf("load of a missing skill: %d", code)
	}
	target := strings.TrimPrefix(srv.base, "http://")
	promAddr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	promCfg := filepath.Join(dir, "prometheus.yml")
	testutil.Write(t, promCfg, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: loadout
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: %s
    static_configs:
      - targets: [%q]
  - job_name: loadout-admin
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: %s
    static_configs:
      - targets: [%q]
`, filepath.Join(dir, "metrics.token"), target, filepath.Join(dir, "admin.token"), target))
	cmd := exec.Command(prom, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	logs := &lockedWriter{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.StopAtCleanup(t, cmd)
	promBase := "http://" + promAddr
	// waitFor polls Prometheus until q has one sample, and returns its
	// value: the scrapes of the two jobs, and their order, are
	// Prometheus's own.
	deadline := testutil.After(t)
	waitFor := func(q string) string {
		t.Helper()
		for {
			got, err := promQuery(t, promBase, q)
			if err == nil && len(got) == 1 {
				for _, v := range got {
					return v
				}
			}
			select {
			case <-deadline:
				t.Fatalf("Prometheus never had one sample of %s (last: %v %v); its log:\n%s\nloadout's:\n%s", q, got, err, logs.String(), tail(srv.log(), 3000))
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	for q, want := range map[string]string{
		`loadout_activations_total{job="loadout",agent="ops",outcome="ok"}`:                                          fmt.Sprint(loads),
		`loadout_activations_total{job="loadout",agent="ops",outcome="not_found"}`:                                   "1",
		`loadout_catalog_skills{job="loadout"}`:                                                                      "1",
		`loadout_http_requests_total{job="loadout",route="/v1/agents/{id}/skills/{name}",method="GET",status="200"}`: fmt.Sprint(loads),
		`up{job="loadout"}`:       "1",
		`up{job="loadout-admin"}`: "0", // an admin token is refused: 403
	} {
		if v := waitFor(q); v != want {
			t.Errorf("%s = %s, want %s", q, v, want)
		}
	}
	// The admin's scrapes were answered 403, and counted by the server.
	if v := waitFor(`loadout_http_requests_total{job="loadout",route="/metrics",status="403"}`); v == "0" {
		t.Errorf("the refused admin scrapes are counted %s times", v)
	}
}
