package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// loadoutBinary builds cmd/loadout once per test run.
func loadoutBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loadout-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "loadout")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type running struct {
	cmd  *exec.Cmd
	base string
	logs *strings.Builder
	mu   *sync.Mutex
}

func (r *running) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

// startServe runs `loadout serve` on a free loopback port and waits for it.
func startServe(t *testing.T, args ...string) *running {
	t.Helper()
	return startServeEnv(t, nil, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
}

// startServeEnv runs loadout with args (a serve command that listens on
// loopback) and env added to the environment ($LOADOUT_CONFIG and
// $LOADOUT_DB are cleared first), and waits for its banner, text or JSON.
func startServeEnv(t *testing.T, env []string, args ...string) *running {
	t.Helper()
	cmd := exec.Command(loadoutBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB="), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, logs: &strings.Builder{}, mu: &sync.Mutex{}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`(?:API: +|"api":")(http://127\.0\.0\.1:\d+)/v1/skills`)
		for sc.Scan() {
			r.mu.Lock()
			r.logs.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	select {
	case r.base = <-found:
	case <-testutil.After(t):
		t.Fatalf("serve did not start:\n%s", r.log())
	}
	return r
}

func httpDo(t *testing.T, method, url, token string, body io.Reader, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// eventually retries f for up to d.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if f() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not happen within %s", what, d)
}

func TestServeE2E(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	for name, desc := range map[string]string{"deploy": "Deploy safely.", "lint": "Lint code."} {
		testutil.Must(t, os.MkdirAll(filepath.Join(skills, name, "references"), 0o755))
		testutil.Write(t, filepath.Join(skills, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nVersion one of "+name+".\n")
		testutil.Write(t, filepath.Join(skills, name, "references", "guide.md"), "# Guide for "+name+"\n")
	}
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Must(t, os.WriteFile(cfg, []byte(`{"agents": [
  {"agentId": "ops", "skills": [{"root": "skills", "available": ["deploy"]}, {"store": true}]},
  {"agentId": "dev", "skills": [{"root": "skills"}]}
]}`), 0o644))
	db := filepath.Join(dir, "loadout.db")
	mk := func(scope string) string {
		r := runCLI(t, "token", "create", "--db", db, "--scope", scope, "--name", scope)
		if r.code != 0 {
			t.Fatalf("token create: %d %s", r.code, r.stderr)
		}
		return strings.TrimSpace(r.stdout)
	}
	admin, opsTok := mk("admin"), mk("agent:ops")

	srv := startServe(t, "--config", cfg)
	base := srv.base
	eventually(t, 2*time.Second, "startup saying tokens are required", func() bool { return strings.Contains(srv.log(), "tokens are required") })
	if code, _ := httpDo(t, "GET", base+"/healthz", "", nil); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	if code, _ := httpDo(t, "GET", base+"/v1/skills", "", nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	code, body := httpDo(t, "GET", base+"/v1/agents/ops/skills/deploy", opsTok, nil)
	if code != 200 || !strings.Contains(body, "Version one of deploy.") {
		t.Errorf("agent token load: %d %s", code, body)
	}
	c1, b1 := httpDo(t, "GET", base+"/v1/agents/dev/skills/lint", opsTok, nil)
	c2, b2 := httpDo(t, "GET", base+"/v1/agents/nope/skills/lint", opsTok, nil)
	if c1 != 403 || c2 != 403 || b1 != b2 {
		t.Errorf("wrong scope: %d %s / %d %s", c1, b1, c2, b2)
	}
	if code, body := httpDo(t, "GET", base+"/v1/agents/ops/skills/deploy/files/..%2F..%2Floadout.json", opsTok, nil); code < 400 || code >= 500 || strings.Contains(body, "agents") {
		t.Errorf("traversal: %d %s", code, body)
	}

	// Live reload: an edit shows up within a second, without a restart.
	testutil.Write(t, filepath.Join(skills, "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy safely.\n---\nVersion two of deploy.\n")
	eventually(t, time.Second, "the edit being served", func() bool {
		_, body := httpDo(t, "GET", base+"/v1/agents/ops/skills/deploy", opsTok, nil)
		return strings.Contains(body, "Version two of deploy.")
	})
	// A new skill appears in a listing.
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "fresh"), 0o755))
	testutil.Write(t, filepath.Join(skills, "fresh", "SKILL.md"), "---\nname: fresh\ndescription: New.\n---\nFresh.\n")
	eventually(t, time.Second, "the new skill being listed", func() bool {
		_, body := httpDo(t, "GET", base+"/v1/skills", admin, nil)
		return strings.Contains(body, `"fresh"`)
	})
	// A broken edit keeps the last good version, and the diagnostic says so.
	testutil.Write(t, filepath.Join(skills, "deploy", "SKILL.md"), "---\nname: deploy\ndescription: [broken\n---\nVersion three.\n")
	eventually(t, time.Second, "the kept-last-good diagnostic", func() bool {
		_, body := httpDo(t, "GET", base+"/v1/diagnostics", admin, nil)
		return strings.Contains(body, "kept-last-good")
	})
	if _, body := httpDo(t, "GET", base+"/v1/agents/ops/skills/deploy", opsTok, nil); !strings.Contains(body, "Version two of deploy.") {
		t.Errorf("broken edit not served from the last good version: %s", body)
	}
	// A deleted skill disappears.
	testutil.Must(t, os.RemoveAll(filepath.Join(skills, "fresh")))
	eventually(t, time.Second, "the deleted skill leaving the listing", func() bool {
		_, body := httpDo(t, "GET", base+"/v1/skills", admin, nil)
		return !strings.Contains(body, `"fresh"`)
	})

	// Receipts were recorded for the loads, with the transport.
	_, body = httpDo(t, "GET", base+"/v1/receipts?agent=ops", admin, nil)
	var rc struct {
		Receipts []struct{ Agent, Skill, Transport, Outcome, Digest, Source string }
	}
	json.Unmarshal([]byte(body), &rc)
	if len(rc.Receipts) == 0 || rc.Receipts[0].Transport != "http" || rc.Receipts[0].Source != "folder" || !strings.HasPrefix(rc.Receipts[0].Digest, "sha256:") {
		t.Errorf("receipts: %s", body)
	}

	// Graceful shutdown: SIGTERM ends it with status 0.
	srv.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v:\n%s", err, srv.log())
		}
	case <-testutil.After(t):
		t.Error("serve did not stop on SIGTERM")
	}
	if r := runCLI(t, "receipts", "--db", db, "--agent", "ops", "--json"); !strings.Contains(r.stdout, `"transport": "http"`) {
		t.Errorf("receipts not flushed to the store at shutdown: %s", r.stdout)
	}
}

func TestServeRefusesNonLoopbackWithoutTokens(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(loadoutBinary(t), "serve", "--addr", "0.0.0.0:0", "--root", dir, "--db", filepath.Join(dir, "x.db"))
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Patience(t))
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to listen on 0.0.0.0:0 without tokens") {
		t.Errorf("err=%v\n%s", err, out)
	}
}

func TestTwoInstancesSharePostgres(t *testing.T) {
	if os.Getenv("LOADOUT_TEST_POSTGRES") == "" && os.Getenv("CI") == "" {
		t.Skip("LOADOUT_TEST_POSTGRES is not set (scripts/test.sh starts a server)")
	}
	dsn := freshPostgres(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "a", "skills": [{"store": true}]}]}`)
	a := startServe(t, "--config", cfg, "--db", dsn, "--no-watch")
	b := startServe(t, "--config", cfg, "--db", dsn, "--no-watch")
	doc := `{"schemaVersion": 2, "skill": {"name": "shared", "content": "---\nname: shared\ndescription: Shared.\n---\nFrom instance A.\n", "files": []}}`
	if code, body := httpDo(t, "POST", a.base+"/v1/skills", "", strings.NewReader(doc), "Content-Type", "application/json"); code != 201 {
		t.Fatalf("create through A: %d %s", code, body)
	}
	eventually(t, 2*time.Second, "instance B serving A's edit", func() bool {
		_, body := httpDo(t, "GET", b.base+"/v1/agents/a/skills/shared", "", nil)
		return strings.Contains(body, "From instance A.")
	})
}

// On 0.0.0.0 the banner prints URLs a client can use (loopback, and this
// machine's addresses), and counts read right.
func TestServeBannerOnEveryAddress(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", "one"), 0o755))
	testutil.Write(t, filepath.Join(dir, "skills", "one", "SKILL.md"), "---\nname: one\ndescription: Use when one.\n---\nOne.\n")
	db := filepath.Join(dir, "x.db")
	if r := runCLI(t, "token", "create", "--db", db, "--scope", "admin"); r.code != 0 {
		t.Fatalf("token create: %s", r.stderr)
	}
	// startServe waits for an API line with a 127.0.0.1 URL; before, the
	// banner printed http://0.0.0.0:PORT.
	srv := startServe(t, "--root", filepath.Join(dir, "skills"), "--db", db, "--no-watch", "--addr", "0.0.0.0:0")
	logs := srv.log()
	if strings.Contains(logs, "http://0.0.0.0") || !strings.Contains(logs, "loadout is serving 1 skill to 1 agent\n") {
		t.Errorf("banner:\n%s", logs)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
