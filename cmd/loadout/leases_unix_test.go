//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// leaseHeld reports whether some process holds a lease (a shared lock) on
// any snapshot of source id in cache: an exclusive lock, as a process
// removing an old snapshot takes, is then refused.
func leaseHeld(t *testing.T, cache, id string) bool {
	t.Helper()
	leases, _ := filepath.Glob(filepath.Join(cache, id, ".leases", "*"))
	if len(leases) == 0 {
		t.Fatalf("no lease file under %s", filepath.Join(cache, id))
	}
	for _, p := range leases {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		f.Close() // drops the lock, if taken
		if err != nil {
			return true
		}
	}
	return false
}

// TestServeReleasesReplacedSources: a reload that replaces the remote
// sources lets go of the old sources' snapshots (other processes may then
// remove them); the new ones are held while served.
func TestServeReleasesReplacedSources(t *testing.T) {
	g, cfg, _ := lockFixture(t)
	cache := filepath.Join(filepath.Dir(cfg), "cache")
	conf := func(id string) string {
		b, _ := json.Marshal(map[string]any{
			"remote": map[string]any{"cache": cache},
			"agents": []any{map[string]any{"agentId": "coder", "skills": []any{map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": id}}}},
		})
		return string(b)
	}
	writeConfig(t, cfg, conf("team"))
	a := startServe(t, "--config", cfg, "--no-watch")
	if !served(t, a.base, "pdf") || !leaseHeld(t, cache, "team") {
		t.Fatalf("the served snapshot is not leased\n%s", a.log())
	}
	writeConfig(t, cfg, conf("other"))
	if code, body := httpDo(t, "POST", a.base+"/v1/reload", "", nil); code != 200 {
		t.Fatalf("POST /v1/reload: %d %s", code, body)
	}
	if !served(t, a.base, "pdf") {
		t.Fatalf("pdf is not served from the new source\n%s", a.log())
	}
	if !leaseHeld(t, cache, "other") {
		t.Error("the new source's snapshot is not leased")
	}
	if leaseHeld(t, cache, "team") {
		t.Errorf("the replaced source's snapshot is still leased: no other process may remove it\n%s", a.log())
	}
	if strings.Contains(a.log(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", a.log())
	}
}
