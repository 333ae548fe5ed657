package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// TestNodeClient runs e2e/client.mjs, a script on the official TypeScript
// MCP client, against the server over streamable HTTP (an in-process
// httptest server) and over stdio (internal/stdiotest, built here). The
// script calls every tool, reads skill:// resources, pages through
// skills/list verifying every digest against the bytes it reads, calls
// skills/get and resources/directory/read, then waits for list_changed
// notifications after this test adds a skill.
func TestNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Node client")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed, and CI is set: the end-to-end test must run", tool)
			}
			t.Skipf("%s is not installed: skipping the end-to-end test with the TypeScript MCP client", tool)
		}
	}
	dir := testutil.NPMFolder(t, "e2e", filepath.Join("node_modules", "@modelcontextprotocol", "sdk"))

	t.Run("http", func(t *testing.T) {
		f := newFixture(t)
		scoped := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := service.Principal{TokenID: "tok-e2e", Scopes: []string{"agent:coder"}}
				next.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), p)))
			})
		}
		mux := http.NewServeMux()
		mux.Handle("/agents/coder/mcp", HTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, PageSize: 1}))
		srv := httptest.NewServer(scoped(mux))
		defer srv.Close()
		runNode(t, dir, func() {
			writeSkill(t, f.rootA, "epsilon", "Added while the client waits.", "", nil)
			f.svc.Reload(context.Background(), "e2e")
		}, "--wait-change", "epsilon", "--http", srv.URL+"/agents/coder/mcp")
	})

	t.Run("stdio", func(t *testing.T) {
		f := newFixture(t)
		bin := filepath.Join(t.TempDir(), "stdiotest")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, err := exec.Command(gobin, "build", "-o", bin, "./internal/stdiotest").CombinedOutput(); err != nil {
			t.Fatalf("building the stdio helper: %v\n%s", err, out)
		}
		runNode(t, dir, func() {
			writeSkill(t, f.rootA, "epsilon", "Added while the client waits.", "", nil)
		}, "--wait-change", "epsilon", "--stdio", bin, "-root", f.rootA, "-agent", "coder", "-poll", "50ms")
	})
}

// runNode runs client.mjs with args, calls change when it prints READY, and
// fails unless it ends with an OK line.
func runNode(t *testing.T, dir string, change func(), args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"client.mjs"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if line == "READY" {
			change()
		}
	}
	err = cmd.Wait()
	last := ""
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	if err != nil || !strings.HasPrefix(last, "OK ") {
		t.Fatalf("node client: %v\nstdout:\n%s\nstderr:\n%s", err, strings.Join(lines, "\n"), stderr.String())
	}
	t.Log(last)
}
