package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// TestServeLogJSONEveryLine: with --log-json every line serve writes to
// stderr is a JSON object, including the banner (one "serving" line) and
// what packages log to slog.Default() (the well-known handler; before,
// its lines went to slog's default text logger, and at debug not at all).
func TestServeLogJSONEveryLine(t *testing.T) {
	dir := t.TempDir()
	for name, fm := range map[string]string{"good": "name: good\ndescription: Good.", "broken": "name: broken"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", name), 0o755))
		testutil.Write(t, filepath.Join(dir, "skills", name, "SKILL.md"), "---\n"+fm+"\n---\nbody\n")
	}
	cmd := exec.Command(loadoutBinary(t), "serve", "--addr", "127.0.0.1:0", "--log-json", "--log-level", "debug",
		"--root", filepath.Join(dir, "skills"), "--db", filepath.Join(dir, "loadout.db"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var all []string
	base := ""
	timeout := testutil.After(t)
	for base == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve stopped:\n%s", strings.Join(all, "\n"))
			}
			all = append(all, l)
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "serving" {
				api, _ := m["api"].(string)
				base = strings.TrimSuffix(api, "/v1/skills")
			}
		case <-timeout:
			t.Fatalf("no serving line:\n%s", strings.Join(all, "\n"))
		}
	}
	// The well-known handler logs to slog.Default().
	httpDo(t, "GET", base+"/.well-known/agent-skills/index.json", "", nil)
	cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		all = append(all, l)
	}
	cmd.Wait()
	wellknown := false
	for _, l := range all {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("not a JSON line with --log-json: %q", l)
			continue
		}
		msg, _ := m["msg"].(string)
		wellknown = wellknown || strings.Contains(msg, "well-known")
	}
	if !wellknown {
		t.Errorf("the well-known handler's debug line is missing:\n%s", strings.Join(all, "\n"))
	}
}

// TestFailLineJSON: with --log-json, serve's fatal error is a JSON line.
func TestFailLineJSON(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(loadoutBinary(t), "serve", "--addr", "0.0.0.0:0", "--log-json", "--root", dir, "--db", filepath.Join(dir, "x.db"))
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	out, _ := cmd.CombinedOutput()
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("not a JSON line with --log-json: %q", l)
		}
	}
	if !strings.Contains(string(out), `"level":"ERROR","msg":"refusing to listen`) {
		t.Errorf("no JSON error line:\n%s", out)
	}
}
