package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

// oauthSetup starts the provider, with the MCP host registered as a
// public client whose callback is a loopback port free a moment ago (the
// host listens on it only later) at path, and user alice in group dev;
// then loadout over it (oauthServe), and a browser for alice's sign-in.
func oauthSetup(t *testing.T, path string) oauthRig {
	t.Helper()
	port := testutil.FreePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "mcp-host", RedirectURIs: []string{redirect}, Scopes: []string{"loadout"}}},
		Users:   []oidctest.User{{ID: "alice-id", Username: "alice", Password: "pw-a", Email: "alice@example.com", Groups: []string{"dev"}}},
	})
	srv := oauthServe(t, p)
	return oauthRig{port, redirect, p, srv, srv.URL + "/agents/coder/mcp", browsertest.Browser(t, 1000, 800)}
}

// oauthRig is what oauthSetup started.
type oauthRig struct {
	port     int    // the host's callback port
	redirect string // the host's callback URL
	p        *oidctest.Provider
	srv      *browsertest.Server
	endpoint string // coder's MCP endpoint
	browser  context.Context
}

// oauthServe starts loadout with two agents over two skills and mcpAuth
// naming the provider: group dev → coder (skill deploy), ops → reviewer
// (skill lint).
func oauthServe(t *testing.T, p *oidctest.Provider) *browsertest.Server {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"deploy", "lint"} {
		writeFile(t, filepath.Join(dir, "skills", name, "SKILL.md"), "---\nname: "+name+"\ndescription: Use when you "+name+" the project.\n---\nBody of "+name+".\n")
		writeFile(t, filepath.Join(dir, "skills", name, "references", "guide.md"), "# Guide to "+name+"\n")
	}
	cfg := fmt.Sprintf(`{
  "agents": [
    {"agentId": "coder", "skills": [{"root": "skills", "available": ["deploy"]}]},
    {"agentId": "reviewer", "skills": [{"root": "skills", "available": ["lint"]}]}
  ],
  "mcpAuth": {
    "issuers": [{"issuer": %q}],
    "scopes": ["loadout"],
    "grants": [{"group": "dev", "grant": "agent:coder"}, {"group": "ops", "grant": "agent:reviewer"}]
  }
}`, p.Issuer)
	writeFile(t, filepath.Join(dir, "loadout.json"), cfg)
	return browsertest.Serve(t, nil, "--config", filepath.Join(dir, "loadout.json"), "--db", filepath.Join(dir, "loadout.db"))
}

// oauthSummary is what oauthclient.mjs prints last.
type oauthSummary struct {
	Challenged   bool     `json:"challenged"`
	AuthorizeURL string   `json:"authorizeURL"`
	Resource     string   `json:"resource"`
	Scope        string   `json:"scope"`
	TokenType    string   `json:"tokenType"`
	Tools        []string `json:"tools"`
	Skill        *struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"skill"`
	File *struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"file"`
	Search string `json:"search"`
	Error  string `json:"error"`
}

// TestMCPOAuthFlow: the official TypeScript MCP client completes the MCP
// authorization flow against loadout and a real OpenID provider, the user
// signing in on the provider's login page in Chromium, then lists the
// tools, loads a skill and reads its file, of the agent the user's group maps to; another
// agent's skill is not there. Run: go test -run TestMCPOAuthFlow ./compat
func TestMCPOAuthFlow(t *testing.T) {
	bin := testutil.CompatBin(t)
	rig := oauthSetup(t, "/callback")
	port, redirect, p, srv, endpoint, browser := rig.port, rig.redirect, rig.p, rig.srv, rig.endpoint, rig.browser

	// No token exists, so the server is in open loopback mode; with mcpAuth
	// its MCP endpoints still need a bearer (a stale UI cookie is none).
	for _, cookie := range []string{"", "loadout_session=stale"} {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+srv.URL+"/.well-known/oauth-protected-resource/agents/coder/mcp") {
			t.Errorf("open mode, cookie %q: %d %s, want 401 with the resource metadata", cookie, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	e := newEnv(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), filepath.Join(dir(), "oauthclient.mjs"),
		"--url", endpoint, "--client-id", "mcp-host", "--callback-port", fmt.Sprint(port), "--skill", "deploy")
	cmd.Dir = dir()
	cmd.Env = e.vars()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("the client ended before %s:\n%s", what, stderr.String())
			}
			return l
		case <-ctx.Done():
			t.Fatalf("no %s from the client:\n%s", what, stderr.String())
		}
		return ""
	}

	var first struct {
		Authorize string `json:"authorize"`
		Error     string `json:"error"`
	}
	if l := next("authorization URL"); json.Unmarshal([]byte(l), &first) != nil || first.Authorize == "" {
		t.Fatalf("the client did not start the authorization: %s\n%s", l, stderr.String())
	}
	if !strings.HasPrefix(first.Authorize, p.URL("authorize")) && !strings.HasPrefix(first.Authorize, p.URL("auth")) {
		t.Errorf("authorization URL %s, want the provider's", first.Authorize)
	}

	// The user, in the browser: the provider's login page, then the
	// redirect to the host's callback.
	browsertest.Do(t, browser, "open the authorization URL", chromedp.Navigate(first.Authorize))
	browsertest.Do(t, browser, "sign in",
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
		chromedp.SendKeys(chromedp.CSS(`#username`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "pw-a"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)))
	landed := browsertest.Get(t, browser, "the callback URL", chromedp.Evaluate[string](`location.href`))
	if !strings.HasPrefix(landed, redirect+"?") || !strings.Contains(landed, "code=") {
		t.Errorf("the browser landed on %s, want the callback with a code", landed)
	}

	var sum oauthSummary
	if l := next("summary"); json.Unmarshal([]byte(l), &sum) != nil {
		t.Fatalf("summary: %s", l)
	}
	cmd.Wait()
	t.Logf("summary: %+v", sum)
	if sum.Error != "" {
		t.Fatalf("the client failed: %s\n%s", sum.Error, stderr.String())
	}
	if !sum.Challenged || sum.Resource != endpoint || !strings.Contains(" "+sum.Scope+" ", " loadout ") {
		t.Errorf("the flow: challenged %v, resource %q (want %q), scope %q (want loadout in it)", sum.Challenged, sum.Resource, endpoint, sum.Scope)
	}
	if strings.Join(sum.Tools, ",") == "" || !strings.Contains(strings.Join(sum.Tools, ","), "load_skill") {
		t.Errorf("tools %v, want load_skill among them", sum.Tools)
	}
	if sum.Skill == nil || sum.Skill.IsError || !strings.Contains(sum.Skill.Text, "Body of deploy") {
		t.Errorf("load_skill deploy: %+v", sum.Skill)
	}
	if sum.File == nil || sum.File.IsError || !strings.Contains(sum.File.Text, "Guide to deploy") {
		t.Errorf("read_skill_file deploy references/guide.md: %+v", sum.File)
	}
	// The mapped agent's skills only: coder has deploy, not reviewer's lint.
	if !strings.Contains(sum.Search, "deploy") || strings.Contains(sum.Search, "lint") {
		t.Errorf("search_skills saw %q, want deploy and not lint", sum.Search)
	}
}

// TestMCPOAuthMCPRemote: mcp-remote (pinned in package.json), a widely
// used bridge that gives stdio-only hosts remote servers with OAuth, does
// the same flow with a pre-registered client (--static-oauth-client-info),
// the user signing in in Chromium, then lists the tools and resources of
// the mapped agent. Run: go test -run TestMCPOAuthMCPRemote ./compat
func TestMCPOAuthMCPRemote(t *testing.T) {
	bin := testutil.CompatBin(t)
	rig := oauthSetup(t, "/oauth/callback")
	port, endpoint, browser := rig.port, rig.endpoint, rig.browser

	e := newEnv(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "mcp-remote-client"), endpoint, fmt.Sprint(port),
		"--host", "127.0.0.1", "--static-oauth-client-info", `{"client_id":"mcp-host"}`, "--auth-timeout", "90")
	cmd.Dir = t.TempDir()
	cmd.Env = append(e.vars(), "MCP_REMOTE_CONFIG_DIR="+filepath.Join(e.home, ".mcp-auth"), "BROWSER=true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Open until the end: mcp-remote shuts down when its standard input
	// ends, as a stdio server does when its host goes.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log safeBuffer
	authURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		next := false
		for sc.Scan() {
			l := sc.Text()
			log.WriteString(l + "\n")
			if next && strings.HasPrefix(l, "http") {
				select {
				case authURL <- strings.TrimSpace(l):
				default:
				}
				next = false
			}
			if strings.Contains(l, "Please authorize this client by visiting") {
				next = true
			}
		}
	}()
	var u string
	select {
	case u = <-authURL:
	case <-ctx.Done():
		t.Fatalf("mcp-remote-client printed no authorization URL:\n%s", log.String())
	}
	parsed, _ := url.Parse(u)
	if parsed == nil || parsed.Query().Get("resource") != endpoint || parsed.Query().Get("code_challenge") == "" {
		t.Errorf("authorization URL %s: want resource=%s and a PKCE challenge", u, endpoint)
	}
	browsertest.Do(t, browser, "open the authorization URL", chromedp.Navigate(u))
	browsertest.Do(t, browser, "sign in",
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
		chromedp.SendKeys(chromedp.CSS(`#username`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "pw-a"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	err = cmd.Wait()
	out := log.String()
	if err != nil || !strings.Contains(out, "Connected successfully!") || !strings.Contains(out, "Exiting OK") {
		t.Fatalf("mcp-remote-client: %v\n%s", err, tail(out))
	}
	tools, resources := between(out, "Tools:", "Requesting resource list"), between(out, "Resources:", "Exiting OK")
	if !strings.Contains(tools, `"load_skill"`) {
		t.Errorf("tools: %s", tools)
	}
	if !strings.Contains(resources, "deploy") || strings.Contains(resources, "lint") {
		t.Errorf("resources %s: want coder's deploy, not reviewer's lint", resources)
	}
}

// between is the text of s between the first from and the next to.
func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	before, _, _ := strings.Cut(rest, to)
	return before
}

type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
