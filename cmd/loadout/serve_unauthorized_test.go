package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/internal/testutil"
)

// TestUnauthorizedSaysBearerToken: every 401 of a server with tokens says
// plainly that a static bearer token is expected (the challenge's
// error_description and a JSON error body), and the OAuth discovery paths
// answer a JSON 404 saying so, so the OAuth-aware clients that found the
// misleading errors (the Inspector CLI, mcp-remote) show the way to a
// token; with a token sent as their --header flags say, both work.
func TestUnauthorizedSaysBearerToken(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	out, err := exec.Command(loadoutBinary(t), "token", "create", "--scope", "admin", "--db", db).Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(out))
	srv := startServe(t, "--root", filepath.Join(examplesDir(t), "skills"), "--db", db, "--no-watch")

	want := func(sent bool) string {
		v := `Bearer realm="loadout", `
		if sent {
			v += `error="invalid_token", `
		}
		return v + `error_description="this server takes a static bearer token, not OAuth: create one with 'loadout token create`
	}
	for _, c := range []struct {
		method, path, auth string
	}{
		{"POST", "/mcp", ""},
		{"POST", "/mcp", "Bearer nope"},
		{"GET", "/mcp", "Basic eDp5"},
		{"GET", "/v1/skills", ""},
		{"POST", "/v1/reload", "Bearer nope"},
		{"GET", "/.well-known/agent-skills/index.json", ""},
		{"GET", "/.well-known/skills/index.json", "Bearer nope"},
		{"GET", "/i/not-a-link/.well-known/skills/index.json", ""},
	} {
		req, _ := http.NewRequest(c.method, srv.base+c.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		derr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 401 || derr != nil || body.Error.Code != "unauthorized" || body.Error.Message == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s (%q): %d %s code %q, want 401 JSON unauthorized", c.method, c.path, c.auth, resp.StatusCode, resp.Header.Get("Content-Type"), body.Error.Code)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, want(c.auth != "")) || strings.Count(got, `"`)%2 != 0 {
			t.Errorf("%s %s (%q): WWW-Authenticate %q, want it to start %q", c.method, c.path, c.auth, got, want(c.auth != ""))
		}
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/mcp/.well-known/openid-configuration", "/register"} {
		code, body := httpDo(t, "GET", srv.base+p, "", nil)
		if code != 404 || !strings.Contains(body, `"code":"not_found"`) || !strings.Contains(body, "not OAuth") || !strings.Contains(body, "loadout token create") {
			t.Errorf("GET %s: %d %s, want a JSON 404 saying it takes bearer tokens, not OAuth", p, code, body)
		}
	}

	bin := testutil.CompatBin(t)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir, "MCP_REMOTE_CONFIG_DIR="+filepath.Join(dir, "mcp-auth"))
	run := func(stdin string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.Env = env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	// mcp-remote without a token: it runs OAuth discovery, and its error
	// now carries the server's word that no OAuth is there.
	if out := run("", "mcp-remote", srv.base+"/mcp"); !strings.Contains(out, "not OAuth") || !strings.Contains(out, "loadout token create") {
		t.Errorf("mcp-remote without a token:\n%s", tail(out, 2000))
	}
	// mcp-remote with --header "Authorization:Bearer TOKEN" proxies stdio.
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	if out := runStdio(t, env, filepath.Join(bin, "mcp-remote"), in, `"id":1`, srv.base+"/mcp", "--header", "Authorization:Bearer "+token); !strings.Contains(out, `"serverInfo"`) {
		t.Errorf("mcp-remote with --header: %s", tail(out, 2000))
	}
	// The Inspector CLI with --header "Authorization: Bearer TOKEN".
	if out := run("", "inspector", "--cli", srv.base+"/mcp", "--method", "tools/list", "--header", "Authorization: Bearer "+token); !strings.Contains(out, "load_skill") {
		t.Errorf("inspector with --header: %s", tail(out, 2000))
	}
	// Without one (and no TTY) it cannot run OAuth; with
	// --stored-auth-only it reports the 401's message.
	if out := run("", "inspector", "--cli", srv.base+"/mcp", "--method", "tools/list", "--stored-auth-only"); !strings.Contains(out, "loadout token create") {
		t.Errorf("inspector --stored-auth-only without a token: %s", tail(out, 2000))
	}
}

// runStdio runs a stdio client, writes in, and returns its stdout once it
// holds want (or after 60 s).
func runStdio(t *testing.T, env []string, name, in, want string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	var out strings.Builder
	cmd.Stdout = &lockedWriter{b: &out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	stdin.Write([]byte(in))
	for ctx.Err() == nil {
		if s := cmd.Stdout.(*lockedWriter).String(); strings.Contains(s, want) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd.Stdout.(*lockedWriter).String()
}

// lockedWriter is a strings.Builder safe to read while a process writes.
type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestChallengeIsQuotable: the challenge's error_description holds no
// character a quoted-string cannot (RFC 6750 §3: %x20-21 / %x23-5B /
// %x5D-7E).
func TestChallengeIsQuotable(t *testing.T) {
	for _, c := range errstatus.TokenHelp {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			t.Fatalf("TokenHelp holds %q", c)
		}
	}
}
