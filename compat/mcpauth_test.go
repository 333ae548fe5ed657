package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

// freePort returns a loopback port free a moment ago: the host's
// callback, registered at the provider before the host listens on it.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// oauthServe starts loadout with two agents over two skills and mcpAuth
// naming the provider: group dev → coder (skill deploy), ops → reviewer
// (skill lint).
func oauthServe(t *testing.T, p *oidctest.Provider) *browsertest.Server {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"deploy", "lint"} {
		writeFile(t, filepath.Join(dir, "skills", name, "SKILL.md"), "---\nname: "+name+"\ndescription: Use when you "+name+" the project.\n---\nBody of "+name+".\n")
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
	Search string `json:"search"`
	Error  string `json:"error"`
}

// TestMCPOAuthFlow: the official TypeScript MCP client completes the MCP
// authorization flow against loadout and a real OpenID provider, the user
// signing in on the provider's login page in Chromium, then lists the
// tools and loads a skill of the agent the user's group maps to; another
// agent's skill is not there. Run: go test -run TestMCPOAuthFlow ./compat
func TestMCPOAuthFlow(t *testing.T) {
	bin := testutil.CompatBin(t)
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "mcp-host", RedirectURIs: []string{redirect}, Scopes: []string{"loadout"}}},
		Users:   []oidctest.User{{ID: "alice-id", Username: "alice", Password: "pw-a", Email: "alice@example.com", Groups: []string{"dev"}}},
	})
	srv := oauthServe(t, p)
	endpoint := srv.URL + "/agents/coder/mcp"
	browser := browsertest.Browser(t, 1000, 800)

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
	// The mapped agent's skills only: coder has deploy, not reviewer's lint.
	if !strings.Contains(sum.Search, "deploy") || strings.Contains(sum.Search, "lint") {
		t.Errorf("search_skills saw %q, want deploy and not lint", sum.Search)
	}
}
