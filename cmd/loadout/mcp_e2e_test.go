package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// nodeClient returns the folder of the TypeScript MCP client script
// (mcpserver/e2e), installing its pinned packages if needed.
func nodeClient(t *testing.T) string {
	t.Helper()
	return npmFolder(t, "../../mcpserver/e2e", filepath.Join("node_modules", "@modelcontextprotocol", "sdk"))
}

// npmFolder returns the absolute path of a folder of pinned npm packages,
// running npm ci there if want is missing. Without node and npm the test
// skips, unless CI is set: then it fails, so CI never skips it.
func npmFolder(t *testing.T, rel, want string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed, and CI is set: the end-to-end test must run", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	return testutil.NPMFolder(t, rel, want)
}

// runClient runs client.mjs; when it prints READY, change runs.
func runClient(t *testing.T, dir string, change func(), args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"client.mjs"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "READY" {
			change()
		}
	}
	err := cmd.Wait()
	last := ""
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	if err != nil || !strings.HasPrefix(last, "OK ") {
		t.Fatalf("node client: %v\nstdout:\n%s\nstderr:\n%s", err, strings.Join(lines, "\n"), stderr.String())
	}
	return last
}

func mcpFixture(t *testing.T) (cfg, skills string) {
	dir := t.TempDir()
	skills = filepath.Join(dir, "skills")
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "alpha", "references"), 0o755))
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "alpha", "assets"), 0o755))
	testutil.Write(t, filepath.Join(skills, "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Fill pdf forms from structured data.\n---\nRead references/guide.md first.\n")
	testutil.Write(t, filepath.Join(skills, "alpha", "references", "guide.md"), "# Guide\n\nStep one.\n")
	testutil.Write(t, filepath.Join(skills, "alpha", "assets", "logo.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\xff")
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "beta"), 0o755))
	testutil.Write(t, filepath.Join(skills, "beta", "SKILL.md"), "---\nname: beta\ndescription: Review changes.\n---\nReview.\n")
	cfg = filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}]}`)
	return cfg, skills
}

func addSkill(t *testing.T, skills, name string) func() {
	return func() {
		testutil.Must(t, os.MkdirAll(filepath.Join(skills, name), 0o755))
		testutil.Write(t, filepath.Join(skills, name, "SKILL.md"), "---\nname: "+name+"\ndescription: Added while the client waits.\n---\nNew.\n")
	}
}

// TestMCPAgainstRunningServer runs the official TypeScript MCP client
// against `loadout serve` over streamable HTTP and `loadout mcp` over
// stdio: every tool, skill:// resources, skills/list with digests checked
// against the bytes read, skills/get, directory reads, and list_changed
// after a skill folder is added (seen by the live-reload watcher).
func TestMCPAgainstRunningServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	client := nodeClient(t)
	args := []string{"--skill", "alpha", "--text", "references/guide.md", "--binary", "assets/logo.png", "--query", "pdf forms"}
	t.Run("http", func(t *testing.T) {
		cfg, skills := mcpFixture(t)
		srv := startServe(t, "--config", cfg)
		out := runClient(t, client, addSkill(t, skills, "gamma"), append(args, "--wait-change", "gamma", "--http", srv.base+"/agents/coder/mcp")...)
		t.Log(out)
		_, body := httpDo(t, "GET", srv.base+"/v1/receipts?agent=coder", "", nil)
		if !strings.Contains(body, `"transport":"mcp-http"`) {
			t.Errorf("no mcp-http receipts: %.300s", body)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		cfg, skills := mcpFixture(t)
		out := runClient(t, client, addSkill(t, skills, "delta"), append(args, "--wait-change", "delta", "--stdio", loadoutBinary(t), "mcp", "--config", cfg, "--agent", "coder")...)
		t.Log(out)
	})
}
