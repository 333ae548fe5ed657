package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// serve logs "listening" with the CPU seconds (user+system) and wall
// seconds it took to answer requests, and starts the safety pass and the
// folder watch only after that line: they are background work, and
// before, they ran beside the steps to it (1.9 CPU-seconds of the safety pass alone at 50,000
// skills). With --log-level debug each step of start-up is logged with
// its CPU too.
func TestServeLogsListeningWithCPUBeforeBackgroundWork(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "keyed", "scripts"), 0o755))
	testutil.Write(t, filepath.Join(skills, "keyed", "SKILL.md"), "---\nname: keyed\ndescription: Ship the build. Use when asked to ship.\n---\nRun scripts/ship.sh.\n")
	testutil.Write(t, filepath.Join(skills, "keyed", "scripts", "ship.sh"), "#!/bin/sh\nAWS_ACCESS_KEY_ID=AKIAZ7QX3M5KJ2W4PN8R aws s3 ls\n")
	srv := startServe(t, "--root", skills, "--db", filepath.Join(dir, "x.db"), "--log-level", "debug")
	eventually(t, 10*time.Second, "the safety finding and the watch logged", func() bool {
		l := srv.log()
		return strings.Contains(l, "code=safety-secret-aws") && strings.Contains(l, `msg="watching skill folders"`)
	})
	logs := srv.log()
	m := regexp.MustCompile(`msg=listening wall_s=([0-9.]+) cpu_s=([0-9.]+) cpu_sys_s=([0-9.]+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no listening line with wall_s, cpu_s and cpu_sys_s:\n%s", logs)
	}
	wall, _ := strconv.ParseFloat(m[1], 64)
	cpu, _ := strconv.ParseFloat(m[2], 64)
	sys, _ := strconv.ParseFloat(m[3], 64)
	if wall <= 0 || cpu <= 0 || sys > cpu {
		t.Errorf("listening: wall %v s, CPU %v s (system %v s): want both above 0, system within CPU", wall, cpu, sys)
	}
	listening := strings.Index(logs, "msg=listening ")
	for _, later := range []string{"code=safety-secret-aws", `msg="watching skill folders"`} {
		if i := strings.Index(logs, later); i < listening {
			t.Errorf("%s logged before listening:\n%s", later, logs)
		}
	}
	for _, step := range []string{`step="catalog scanned"`, `step="handlers built"`} {
		if i := strings.Index(logs, step); i < 0 || i > listening || !regexp.MustCompile(step+` wall_s=[0-9.]+ cpu_s=[0-9.]+`).MatchString(logs) {
			t.Errorf("no debug line for %s with its CPU before listening:\n%s", step, logs)
		}
	}
}

// serve measures the collector's lasting rule again once what first
// requests would build is built (the install indexes grow the heap): the
// "start-up settled" line comes after the warm-up's "ready" line, even with no folder watch (before, the limit was measured before
// them, sat just above the grown heap, and the collector ran back to back
// under load).
func TestServeSettlesAfterWarmUp(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "one"), 0o755))
	testutil.Write(t, filepath.Join(skills, "one", "SKILL.md"), "---\nname: one\ndescription: The one skill. Use when testing.\n---\nBody.\n")
	srv := startServe(t, "--root", skills, "--db", filepath.Join(dir, "x.db"), "--no-watch")
	eventually(t, 10*time.Second, "start-up settled", func() bool { return strings.Contains(srv.log(), "start-up settled") })
	logs := srv.log()
	warm := strings.Index(logs, "msg=ready took=")
	if !regexp.MustCompile(`msg=ready took=\S+ cpu_s=[0-9.]+ `).MatchString(logs) {
		t.Errorf("the ready line has no cpu_s:\n%s", logs)
	}
	settled := strings.Index(logs, "start-up settled")
	if warm < 0 || settled < warm {
		t.Errorf("start-up settled (at %d) before the warm-up ended (at %d):\n%s", settled, warm, logs)
	}
	if n := strings.Count(logs, "start-up settled"); n != 1 {
		t.Errorf("start-up settled logged %d times, want once", n)
	}
}
