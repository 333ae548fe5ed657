// Package compat checks loadout against the official MCP and skills
// clients, pinned in package.json: the conformance suite's server
// scenarios, the Inspector CLI's skill verification, the TypeScript SDK's
// SkillsClient, the skills extension authors' SDK, two stdio bridges and
// the skills installer. Each runs against the real binary serving an
// edge-case catalog (catalog_test.go), stateful and --stateless. The run
// also builds the compatibility table in docs/mcp.md (table_test.go).
//
// It is a test-only package: go test ./compat (scripts/test.sh runs it with
// the rest). The clients need Node 24, installed from the npm registry by
// `npm ci` here (testutil.CompatBin does it on first use; .ci/run before
// the tests).
package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/testutil"
)

// clientTimeout bounds every client run: the longest, the conformance
// suite at one revision, takes a few seconds.
const clientTimeout = 2 * time.Minute

// modes are the two ways loadout serves MCP over HTTP.
var modes = []string{"stateful", "stateless"}

// statefulServes20260728 says whether the default (stateful) `serve`
// answers protocol revision 2026-07-28, which the skills extension is
// written against (in both modes if the SDK allows; the
// Go SDK's own stateful handler refuses it). If it is decided that only
// --stateless serves it, set this to false: the stateful runs at
// 2026-07-28 are then skipped with a note, and the table says so.
const statefulServes20260728 = true

// serves tells whether the server in mode is expected to speak rev; the
// runs at a revision it does not serve are skipped.
func serves(t *testing.T, mode, rev string) bool {
	if mode == "stateful" && rev >= "2026-07-28" && !statefulServes20260728 {
		t.Skipf("the stateful server does not serve %s (statefulServes20260728 is false): --stateless does", rev)
		return false
	}
	return true
}

// dir is this package's folder (compat/).
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// env is what every client runs with: the pinned Node first on PATH, an
// empty HOME (nothing read from or written to the user's), no telemetry,
// no colours, and no network beyond loopback (no-network.mjs).
type env struct {
	bin, home string
}

func newEnv(t *testing.T, bin string) env {
	return env{bin: bin, home: t.TempDir()}
}

func (e env) vars() []string {
	keep := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "NODE_OPTIONS", "LOADOUT_CONFIG", "LOADOUT_DB":
			continue
		}
		if strings.HasPrefix(k, "npm_") || strings.HasPrefix(k, "NPM_") {
			continue
		}
		keep = append(keep, kv)
	}
	return append(keep,
		"PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+e.home,
		"XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(e.home, ".cache"),
		"NODE_OPTIONS=--import="+fileURL(filepath.Join(dir(), "no-network.mjs")),
		"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1", "FORCE_COLOR=0", "CI=1",
		"NODE_DISABLE_COMPILE_CACHE=1", "NO_UPDATE_NOTIFIER=1",
	)
}

func fileURL(p string) string {
	return "file://" + filepath.ToSlash(p)
}

// result is one client run.
type result struct {
	stdout, stderr string
	code           int // exit code; -1 if it did not exit on its own
	err            error
}

func (r result) String() string {
	s := fmt.Sprintf("exit %d", r.code)
	if r.err != nil {
		s += " (" + r.err.Error() + ")"
	}
	return s + "\n--- stdout:\n" + tail(r.stdout) + "\n--- stderr:\n" + tail(r.stderr)
}

func tail(s string) string {
	const max = 20000
	if len(s) > max {
		return "[…]" + s[len(s)-max:]
	}
	return s
}

// run runs a client (a command found on the pinned bin folder, or node)
// with a timeout; its whole process group is killed at the timeout. Fetches
// beyond loopback that no-network.mjs blocked are errors of t.
func (e env) run(t *testing.T, workdir string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	path := filepath.Join(e.bin, name)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = workdir
	cmd.Env = e.vars()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), code: -1, err: err}
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		r.code = cmd.ProcessState.ExitCode()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			r.err = nil
		}
	}
	if ctx.Err() != nil {
		r.err = fmt.Errorf("timed out after %s", clientTimeout)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if u, ok := strings.CutPrefix(line, "compat: blocked fetch "); ok {
			t.Errorf("%s tried the network beyond loopback: %s", name, u)
		}
	}
	return r
}

// server is a running `loadout serve` (the real binary, built once by
// browsertest.Binary without the race detector: the servers only answer
// the clients here).
type server struct {
	base string // http://127.0.0.1:PORT
}

func (s *server) mcp() string { return s.base + "/mcp" }

// serve starts `loadout serve --root root` on a free loopback port, with a
// store in a temporary folder, and stops it when the test ends (printing
// its log if the test failed).
func serve(t *testing.T, root string, stateless bool) *server {
	t.Helper()
	args := []string{"--root", root, "--db", filepath.Join(t.TempDir(), "loadout.db")}
	if stateless {
		args = append(args, "--stateless")
	}
	return &server{base: browsertest.Serve(t, nil, args...).URL}
}

// TestClients runs every pinned client against loadout serving the
// edge-case catalog, stateful and stateless, and then checks docs/mcp.md's
// compatibility table against what ran.
func TestClients(t *testing.T) {
	bin := testutil.CompatBin(t)
	root := t.TempDir()
	writeCatalog(t, root)
	e := newEnv(t, bin)
	na := readNotApplicable(t)
	tab := newTable()
	conf := &conformanceRun{na: na, hit: map[string]bool{}}

	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			srv := serve(t, root, mode == "stateless")
			t.Run("conformance", func(t *testing.T) {
				tab.ran(clientConformance, mode, conf.run(t, e, mode, srv.mcp()))
			})
			t.Run("inspector", func(t *testing.T) {
				tab.ran(clientInspector, mode, inspector(t, e, mode, srv))
			})
			t.Run("skillsclient", func(t *testing.T) {
				ok := t.Run("legacy", func(t *testing.T) { skillsClient(t, e, "sdk", "", "--url", srv.mcp()) })
				ok = t.Run("2026-07-28", func(t *testing.T) {
					if serves(t, mode, "2026-07-28") {
						skillsClient(t, e, "sdk", "2026-07-28", "--url", srv.mcp())
					}
				}) && ok
				tab.ran(clientSDK, mode, ok)
			})
			t.Run("ext-skills", func(t *testing.T) {
				tab.ran(clientExtSkills, mode, skillsClient(t, e, "ext-skills", "", "--url", srv.mcp()))
			})
			t.Run("mcp-remote", func(t *testing.T) {
				tab.ran(clientMCPRemote, mode, skillsClient(t, e, "sdk", "", "--stdio", filepath.Join(e.bin, "mcp-remote"), srv.mcp(), "--transport", "http-only"))
			})
			t.Run("supergateway", func(t *testing.T) {
				tab.ran(clientSupergateway, mode, skillsClient(t, e, "sdk", "", "--stdio", filepath.Join(e.bin, "supergateway"), "--streamableHttp", srv.mcp(), "--outputTransport", "stdio", "--logLevel", "none"))
			})
			t.Run("skills", func(t *testing.T) {
				tab.ran(clientSkills, mode, installer(t, e, srv, root))
			})
		})
	}
	conf.checkStale(t)
	tab.check(t, conf)
}

// inspector runs the Inspector CLI: skills/list with --verify (exit 7: a
// skill failed verification, 8: could not be fully checked) on the 2025
// handshake and on the 2026-07-28 one (--protocol-era modern), tools/list
// with --strict (exit 6: a tool schema error), and resources/read of the
// empty file.
func inspector(t *testing.T, e env, mode string, srv *server) bool {
	t.Helper()
	ok := true
	for _, args := range [][]string{
		{"--method", "skills/list", "--verify"},
		{"--method", "skills/list", "--verify", "--protocol-era", "modern"},
		{"--method", "tools/list", "--strict"},
		{"--method", "resources/read", "--uri", emptyFile},
	} {
		if slices.Contains(args, "modern") && mode == "stateful" && !statefulServes20260728 {
			t.Logf("not run, the stateful server does not serve 2026-07-28: inspector --cli URL %s", strings.Join(args, " "))
			continue
		}
		r := e.run(t, e.home, "inspector", append([]string{"--cli", srv.mcp()}, args...)...)
		if r.code != 0 || r.err != nil {
			ok = false
			problems := verifyProblems(r.stdout)
			if len(problems) == 0 {
				t.Errorf("inspector --cli URL %s: %s", strings.Join(args, " "), r)
				continue
			}
			t.Errorf("inspector --cli URL %s: exit %d:\n\t%s", strings.Join(args, " "), r.code, strings.Join(problems, "\n\t"))
			t.Logf("inspector output: %s", r)
		}
	}
	return ok
}

// verifyProblems names every problem in the Inspector's --verify report
// (one JSON object per skill and line).
func verifyProblems(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		var v struct {
			URI         string `json:"uri"`
			OK          bool   `json:"ok"`
			Conformance []struct {
				Code, Severity, Message string
			} `json:"conformance"`
			Frontmatter []struct {
				Code, Severity, Message string
			} `json:"frontmatter"`
			Files []struct {
				URI, Status, Reason string
			} `json:"files"`
		}
		if json.Unmarshal([]byte(line), &v) != nil || v.URI == "" || v.OK {
			continue
		}
		for _, c := range append(v.Conformance, v.Frontmatter...) {
			out = append(out, fmt.Sprintf("%s: %s %s: %s", v.URI, c.Severity, c.Code, c.Message))
		}
		for _, f := range v.Files {
			if f.Status != "verified" {
				out = append(out, fmt.Sprintf("%s: %s %s", f.URI, f.Status, f.Reason))
			}
		}
	}
	return out
}

// summary is what skillsclient.mjs prints.
type summary struct {
	Lib             string `json:"lib"`
	ProtocolVersion string `json:"protocolVersion"`
	Supported       bool   `json:"supported"`
	DirectoryRead   bool   `json:"directoryRead"`
	ListError       string `json:"listError"`
	Listed          []struct {
		URI  string `json:"uri"`
		Name any    `json:"name"`
	} `json:"listed"`
	Invalid []json.RawMessage `json:"invalid"`
	Skills  []skillSummary    `json:"skills"`
}

type skillSummary struct {
	URI   string `json:"uri"`
	Name  any    `json:"name"`
	Get   string `json:"getError"`
	Files []struct {
		URI  string `json:"uri"`
		Size int    `json:"size"`
	} `json:"files"`
	FileErrors []uriError            `json:"fileErrors"`
	Dirs       map[string][]dirChild `json:"dirs"`
	DirErrors  []uriError            `json:"dirErrors"`
}

type uriError struct {
	URI   string `json:"uri"`
	Error string `json:"error"`
}

type dirChild struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
}

// skillsClient runs skillsclient.mjs with a client library (sdk or
// ext-skills), optionally pinned to a protocol revision, over HTTP (--url
// URL) or through a stdio bridge (--stdio COMMAND ARGS...), and checks its
// summary: the listing did not throw, every valid skill is listed and no
// invalid one, every file of every skill read and verified, every folder
// read (the empty one as an empty list).
func skillsClient(t *testing.T, e env, lib, pin string, target ...string) bool {
	t.Helper()
	args := []string{filepath.Join(dir(), "skillsclient.mjs"), "--lib", lib}
	if pin != "" {
		args = append(args, "--pin", pin)
	}
	args = append(args, target...)
	r := e.run(t, dir(), "node", args...)
	var s summary
	if r.code != 0 || r.err != nil {
		t.Errorf("skillsclient.mjs %s: %s", strings.Join(args[1:], " "), r)
		return false
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Errorf("skillsclient.mjs printed no JSON summary (%v): %s", err, r)
		return false
	}
	before := t.Failed()
	defer func() {
		if t.Failed() && !before {
			t.Logf("summary:\n%s\nstderr:\n%s", tail(r.stdout), tail(r.stderr))
		}
	}()
	if pin != "" && s.ProtocolVersion != pin {
		t.Errorf("negotiated protocol %q, want %s", s.ProtocolVersion, pin)
	}
	if !s.Supported {
		t.Errorf("%s: the server does not declare the skills extension", lib)
	}
	if !s.DirectoryRead {
		t.Errorf("%s: the server does not declare directoryRead", lib)
	}
	if s.ListError != "" {
		t.Errorf("%s: listing the skills with default options threw: %s", lib, s.ListError)
	}
	listed := map[string]bool{}
	for _, l := range s.Listed {
		if n, ok := l.Name.(string); ok {
			listed[n] = true
		}
	}
	for _, n := range valid {
		if !listed[n] {
			t.Errorf("%s: valid skill %s is not listed", lib, n)
		}
	}
	for _, n := range invalid {
		if listed[n] {
			t.Errorf("%s: spec-invalid skill %s is listed", lib, n)
		}
	}
	if len(s.Invalid) > 0 {
		t.Errorf("%s: the listing has %d invalid entries: %s", lib, len(s.Invalid), s.Invalid)
	}
	emptyRead := false
	for _, sk := range s.Skills {
		if sk.Get != "" {
			t.Errorf("%s: skills/get %s: %s", lib, sk.URI, sk.Get)
		}
		for _, f := range sk.FileErrors {
			t.Errorf("%s: reading %s: %s", lib, f.URI, f.Error)
		}
		for _, d := range sk.DirErrors {
			t.Errorf("%s: resources/directory/read %s: %s", lib, d.URI, d.Error)
		}
		if len(sk.Files) == 0 && len(sk.FileErrors) == 0 {
			t.Errorf("%s: %s: no file read", lib, sk.URI)
		}
		if c, ok := sk.Dirs[emptyDir]; ok {
			emptyRead = true
			if len(c) != 0 {
				t.Errorf("%s: the empty folder %s lists %v", lib, emptyDir, c)
			}
		}
	}
	emptyFailed := slices.ContainsFunc(s.Skills, func(sk skillSummary) bool {
		return slices.ContainsFunc(sk.DirErrors, func(d uriError) bool { return d.URI == emptyDir })
	})
	if listed["empty-file"] && !emptyRead && !emptyFailed {
		t.Errorf("%s: the empty folder %s was not among the folders listed", lib, emptyDir)
	}
	return !t.Failed()
}

// installer runs the skills installer against the server's well-known
// index: `skills add URL --list` must name every valid skill but
// notInstallable, and `skills add URL --skill NAME` must install the
// skills with an empty file and a symlinked file byte for byte (file modes
// aside: installers drop executable bits, which the index warns about).
func installer(t *testing.T, e env, srv *server, root string) bool {
	t.Helper()
	work := t.TempDir()
	url := srv.base + "/agents/roots"
	r := e.run(t, work, "skills", "add", url, "--list")
	if r.code != 0 || r.err != nil {
		t.Errorf("skills add URL --list: %s", r)
		return false
	}
	for _, n := range valid {
		if n == notInstallable {
			continue
		}
		if !strings.Contains(r.stdout, n) {
			t.Errorf("skills add URL --list does not name %s: %s", n, r)
		}
	}
	for _, name := range []string{"empty-file", "plain"} {
		r := e.run(t, work, "skills", "add", url, "--skill", name, "--agent", "amp", "-y")
		if r.code != 0 || r.err != nil {
			t.Errorf("skills add URL --skill %s --agent amp -y: %s", name, r)
			continue
		}
		installed := filepath.Join(work, ".agents", "skills", name)
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(root, name), p)
			want, _ := os.ReadFile(p)
			got, err := os.ReadFile(filepath.Join(installed, rel))
			if err != nil {
				t.Errorf("skills add --skill %s: %s was not installed: %v\n%s", name, rel, err, r)
			} else if !bytes.Equal(got, want) {
				t.Errorf("skills add --skill %s: %s installed as %q, want %q", name, rel, got, want)
			}
			return nil
		})
	}
	return !t.Failed()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
