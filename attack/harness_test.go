package attack

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/cputime"
	"github.com/loadout/loadout/internal/pgtest"
	"github.com/loadout/loadout/internal/testutil"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Bin is the loadout binary built from this checkout, once per test run.
func Bin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loadout-attack-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "loadout")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/loadout/loadout/cmd/loadout").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./cmd/loadout: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	// Every run of the binary keeps what it caches (check's saved safety
	// findings) in a folder of this test run's, not the user's.
	cache, err := os.MkdirTemp("", "loadout-attack-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("LOADOUT_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// Options say what one attacked server serves and how.
type Options struct {
	Engine string            // "sqlite" (default) or "postgres": a fresh schema on LOADOUT_TEST_POSTGRES
	Skills map[string]string // files under Dir/skills (path -> content); nil: the skills "deploy" and "lint"
	Config string            // loadout.json; "": one agent "coder" over {"root": "skills"} and {"store": true}
	Args   []string          // further serve flags
	Env    []string          // further environment entries
	Tokens bool              // create an admin token before the start, so that serve requires tokens
	DB     string            // serve this --db (another server's: a second instance) instead of a fresh one
}

// Server is one running `loadout serve`.
type Server struct {
	Base  string // http://127.0.0.1:PORT
	Dir   string // its folder: loadout.json, skills/, and loadout.db on SQLite
	DB    string // the --db it was given
	Admin string // an admin token's secret when Options.Tokens
	Cmd   *exec.Cmd
	env   []string

	mu      sync.Mutex
	logs    bytes.Buffer
	stopped bool
}

const defaultConfig = `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}]}]}`

// DefaultSkills are the skills a server has when Options.Skills is nil.
func DefaultSkills() map[string]string {
	m := map[string]string{}
	for _, name := range []string{"deploy", "lint"} {
		m[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Use when you " + name + " the project.\n---\nBody of " + name + ".\n"
		m[name+"/references/guide.md"] = "# Guide to " + name + "\n"
	}
	return m
}

// WriteFiles writes files (path -> content) under dir, failing the test on
// any error.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dbFor returns the --db value for engine in dir.
func dbFor(t testing.TB, engine, dir string) string {
	t.Helper()
	switch engine {
	case "", "sqlite":
		return filepath.Join(dir, "loadout.db")
	case "postgres":
		base := os.Getenv("LOADOUT_TEST_POSTGRES")
		if base == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("LOADOUT_TEST_POSTGRES is not set, and CI must not skip PostgreSQL: start a server with scripts/pg.sh")
			}
			t.Skip("LOADOUT_TEST_POSTGRES is not set (scripts/pg.sh starts a server); under CI this fails")
		}
		return pgtest.Schema(t, base, "attack_")
	}
	t.Fatalf("unknown engine %q", engine)
	return ""
}

// Engines runs f as the subtests "sqlite" and "postgres".
func Engines(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range []string{"sqlite", "postgres"} {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

var apiLine = regexp.MustCompile(`API: +(http://127\.0\.0\.1:\d+)/v1/skills`)

// Start starts `loadout serve` on a free loopback port and waits until it
// says where it listens. The server is stopped when the test ends.
func Start(t *testing.T, o Options) *Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the attack suite reads /proc")
	}
	bin := Bin(t)
	dir := t.TempDir()
	skills := o.Skills
	if skills == nil {
		skills = DefaultSkills()
	}
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, filepath.Join(dir, "skills"), skills)
	cfg := o.Config
	if cfg == "" {
		cfg = defaultConfig
	}
	WriteFiles(t, dir, map[string]string{"loadout.json": cfg})
	s := &Server{Dir: dir, DB: o.DB}
	if s.DB == "" {
		s.DB = dbFor(t, o.Engine, dir)
	}
	s.env = append(append(os.Environ(), "LOADOUT_CONFIG="+filepath.Join(dir, "loadout.json"), "LOADOUT_DB="+s.DB), o.Env...)
	if o.Tokens {
		s.Admin = s.Token(t, "admin")
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--config", filepath.Join(dir, "loadout.json"), "--db", s.DB}, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = s.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Cmd = cmd
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := apiLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		s.mu.Lock()
		done := s.stopped
		s.mu.Unlock()
		if done {
			return
		}
		cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case s.Base = <-found:
	case <-testutil.After(t):
		t.Fatalf("serve did not start in %s:\n%s", testutil.Patience(t).Round(time.Second), s.Log())
	}
	return s
}

// Log is what the server has written to stderr so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Do sends one request on a fresh connection and returns the status, the
// headers and the body. hdr holds header names and values in turn.
func (s *Server) Do(t testing.TB, method, path, token, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.Base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, tail(s.Log(), 3000))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, string(data)
}

// Token creates a token with the given scopes in the server's store and
// returns its secret.
func (s *Server) Token(t testing.TB, scopes ...string) string {
	t.Helper()
	args := []string{"token", "create", "--db", s.DB, "--name", fmt.Sprintf("attack-%d", time.Now().UnixNano())}
	for _, sc := range scopes {
		args = append(args, "--scope", sc)
	}
	out, errOut, code := s.CLI(t, args...)
	if code != 0 {
		t.Fatalf("loadout %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	m := strings.TrimSpace(out)
	if !strings.HasPrefix(m, "lo_") || strings.ContainsAny(m, " \n") {
		t.Fatalf("no token secret in the output of token create:\n%s%s", out, errOut)
	}
	return m
}

// CLI runs the loadout binary in the server's folder, on its store and
// config.
func (s *Server) CLI(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, s.Dir, s.env, args...)
}

// CLI runs the loadout binary in dir with env added to this process's
// environment (LOADOUT_CONFIG and LOADOUT_DB cleared unless env sets them).
func CLI(t testing.TB, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, dir, append(append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB="), env...), args...)
}

func run(t testing.TB, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(Bin(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("loadout %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// procStatus reads one "Name: N kB" field of /proc/PID/status.
func procStatusKB(t testing.TB, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's /proc status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("/proc status %s: %q", field, line)
			}
			return v
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// PeakRSSMB is the server's peak resident memory so far (VmHWM), in MB.
func (s *Server) PeakRSSMB(t testing.TB) float64 {
	t.Helper()
	return float64(procStatusKB(t, s.Cmd.Process.Pid, "VmHWM")) / 1024
}

// CPUSeconds is the user and system CPU time the server has used so far.
func (s *Server) CPUSeconds(t testing.TB) float64 {
	t.Helper()
	return ProcCPUSeconds(t, s.Cmd.Process.Pid)
}

// ProcCPUSeconds is the user and system CPU time process pid has used.
func ProcCPUSeconds(t testing.TB, pid int) float64 {
	t.Helper()
	d, ok := cputime.Of(pid)
	if !ok {
		t.Fatalf("reading /proc/%d/stat: no CPU time", pid)
	}
	return d.Seconds()
}

// Healthy fails the test unless /healthz answers 200 within 5 s on a
// fresh connection.
func (s *Server) Healthy(t testing.TB) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(s.Base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v\n%s", err, tail(s.Log(), 3000))
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz answered %d", resp.StatusCode)
	}
}

// Stop sends SIGTERM and waits for the server to exit, failing the test if
// it takes more than 10 s. It returns how long the exit took.
func (s *Server) Stop(t testing.TB) time.Duration {
	t.Helper()
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	start := time.Now()
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	exited := make(chan struct{})
	go func() { s.Cmd.Wait(); close(exited) }()
	select {
	case <-exited:
		return time.Since(start)
	case <-time.After(10 * time.Second):
		s.Cmd.Process.Kill()
		<-exited
		t.Fatalf("serve did not stop within 10 s of SIGTERM:\n%s", tail(s.Log(), 3000))
		return time.Since(start)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
