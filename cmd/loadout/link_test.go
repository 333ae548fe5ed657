package main

import (
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

// A link token (npx skills add cannot send a bearer, so a
// server with tokens could not be installed from) serves one agent's
// well-known index, its files and archives at /i/SECRET/…, and nothing
// else; as a bearer it is refused; admin and agent tokens are refused in
// the path; revoking it ends the link; the log never holds the secret.
func TestLinkToken(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	testutil.Must(t, os.MkdirAll(filepath.Join(skills, "alpha", "scripts"), 0o755))
	testutil.Write(t, filepath.Join(skills, "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Use when alpha.\n---\nDo alpha.\n")
	testutil.Write(t, filepath.Join(skills, "alpha", "scripts", "run.sh"), "echo alpha\n")
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}, {"agentId": "other", "skills": [{"root": "skills"}]}]}`)
	db := filepath.Join(dir, "x.db")
	cli := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(loadoutBinary(t), args...)
		cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("loadout %q: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out)), stderr.String()
	}
	admin, _ := cli("token", "create", "--db", db, "--scope", "admin")
	agent, _ := cli("token", "create", "--db", db, "--scope", "agent:coder")
	srv := startServe(t, "--config", cfg, "--db", db, "--no-watch", "--log-level", "debug")

	link, msg := cli("token", "create", "--db", db, "--link", "coder", "--name", "installer", "--url", srv.base+"/")
	if !strings.HasPrefix(link, srv.base+"/i/lo_") {
		t.Fatalf("token create --link printed %q, want %s/i/SECRET", link, srv.base)
	}
	if !strings.Contains(msg, "npx skills add "+link+"\n") {
		t.Errorf("token create --link does not print the install command:\n%s", msg)
	}
	secret := strings.TrimPrefix(link, srv.base+"/i/")

	var body string
	eventually(t, tokenDeadline, "the new link serving the index", func() bool {
		var code int
		code, body = httpDo(t, "GET", link+"/.well-known/agent-skills/index.json", "", nil)
		return code == 200
	})
	if !strings.Contains(body, `"alpha.tar.gz"`) {
		t.Errorf("link index: %s", body)
	}
	for _, p := range []string{"/.well-known/agent-skills/alpha.tar.gz", "/.well-known/skills/index.json",
		"/.well-known/skills/alpha/SKILL.md", "/.well-known/skills/alpha/scripts/run.sh"} {
		if code, body := httpDo(t, "GET", link+p, "", nil); code != 200 {
			t.Errorf("link %s: %d %s", p, code, tail(body, 200))
		}
	}

	// Under the prefix, only the index.
	for _, p := range []string{"/v1/skills", "/mcp", "/agents/coder/mcp", "/", "", "/.well-known/x/../../v1/skills"} {
		if code, body := httpDo(t, "GET", link+p, "", nil); code == 200 {
			t.Errorf("link + %q: 200 %s, want a refusal", p, tail(body, 200))
		}
	}
	// As a bearer, the link token is refused everywhere.
	for _, p := range []string{"/v1/skills", "/v1/agents", "/v1/openapi.json", "/v1/agents/coder/prompt",
		"/agents/coder/.well-known/agent-skills/index.json", "/.well-known/agent-skills/index.json"} {
		if code, body := httpDo(t, "GET", srv.base+p, secret, nil); code != 401 {
			t.Errorf("link token as a bearer on %s: %d %s, want 401", p, code, tail(body, 200))
		}
	}
	if code, body := httpDo(t, "POST", srv.base+"/agents/coder/mcp", secret, strings.NewReader(`{}`), "Content-Type", "application/json"); code != 401 {
		t.Errorf("link token as a bearer on MCP: %d %s, want 401", code, tail(body, 200))
	}
	// Admin and agent tokens are not links: they would leak more than one
	// agent's index through URLs.
	for _, tok := range []string{admin, agent} {
		if code, body := httpDo(t, "GET", srv.base+"/i/"+tok+"/.well-known/agent-skills/index.json", "", nil); code != 401 {
			t.Errorf("a %s token in the link path: %d %s, want 401", tok[:6], code, tail(body, 200))
		}
	}
	// The bearer forms still work.
	if code, body := httpDo(t, "GET", srv.base+"/agents/coder/.well-known/agent-skills/index.json", agent, nil); code != 200 {
		t.Errorf("agent bearer: %d %s", code, tail(body, 200))
	}

	list, _ := cli("token", "list", "--db", db, "--json")
	i := strings.Index(list, `"name": "installer"`)
	j := strings.LastIndex(list[:max(i, 0)], `"id": "`)
	if i < 0 || j < 0 {
		t.Fatalf("token list: %s", list)
	}
	id := list[j+7:]
	id = id[:strings.Index(id, `"`)]
	cli("token", "revoke", "--db", db, id)
	start := time.Now()
	eventually(t, tokenDeadline, "the revoked link refused", func() bool {
		code, _ := httpDo(t, "GET", link+"/.well-known/agent-skills/index.json", "", nil)
		return code == 401
	})
	t.Logf("revoked link refused after %s", time.Since(start).Round(time.Millisecond))

	logs := srv.log()
	if strings.Contains(logs, secret) || strings.Contains(logs, admin) || strings.Contains(logs, agent) {
		t.Errorf("the log holds a token secret:\n%s", logs)
	}
	if !strings.Contains(logs, "/i/REDACTED/.well-known/agent-skills/index.json") {
		t.Errorf("the log has no redacted link request:\n%s", tail(logs, 2000))
	}
}

// A link token has only its index scope, and --url goes with --link only.
func TestLinkTokenRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	for _, args := range [][]string{
		{"--scope", "index:coder", "--scope", "admin"},
		{"--link", "coder", "--scope", "agent:coder"},
		{"--scope", "admin", "--url", "http://127.0.0.1:7777"},
		{"--link", "coder", "--url", "127.0.0.1:7777"},
		{"--link", "a b"},
	} {
		cmd := exec.Command(loadoutBinary(t), append([]string{"token", "create", "--db", db}, args...)...)
		cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		if code := cmd.ProcessState.ExitCode(); err == nil || code == 0 || !strings.HasPrefix(last, "loadout: ") || !strings.Contains(last, "scope") && !strings.Contains(last, "--url") {
			t.Errorf("token create %q: exit %d, want a refusal naming the scope or flag:\n%s", args, code, out)
		}
	}
}

// The skills installer, which sends no Authorization header, installs from
// a server that requires tokens through a link (and is refused without it).
func TestSkillsInstallerThroughLink(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	e2e := npmFolder(t, "../../wellknown/e2e", filepath.Join("node_modules", "skills", "bin", "cli.mjs"))
	dir := t.TempDir()
	files := map[string]string{
		"SKILL.md":            "---\nname: toolkit\ndescription: Tools for release work.\n---\nRun scripts/run.sh.\n",
		"scripts/run.sh":      "#!/bin/sh\necho ran\n",
		"references/guide.md": "# Guide\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, "skills", "toolkit", filepath.FromSlash(p))
		testutil.Must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		testutil.Write(t, full, c)
	}
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}]}`)
	db := filepath.Join(dir, "x.db")
	create := exec.Command(loadoutBinary(t), "token", "create", "--db", db, "--link", "coder")
	create.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	out, err := create.Output()
	if err != nil {
		t.Fatalf("token create --link: %v", err)
	}
	path := strings.TrimSpace(string(out))
	if !strings.HasPrefix(path, "/i/lo_") {
		t.Fatalf("token create --link without --url printed %q, want /i/SECRET", path)
	}
	srv := startServe(t, "--config", cfg, "--db", db, "--no-watch")

	install := func(url string) (string, error) {
		work, home := t.TempDir(), t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", "--import", "file://"+filepath.Join(e2e, "no-network.mjs"),
			filepath.Join(e2e, "node_modules", "skills", "bin", "cli.mjs"), "add", url, "--skill", "toolkit", "--agent", "amp", "-y")
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1", "FORCE_COLOR=0"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return filepath.Join(work, ".agents", "skills", "toolkit") + "\n" + out.String(), err
	}
	res, err := install(srv.base + path)
	installed, log, _ := strings.Cut(res, "\n")
	if err != nil {
		t.Fatalf("skills add through the link: %v\n%s\nserver log:\n%s", err, log, srv.log())
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(installed, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %v, got %q, want %q\ninstaller output:\n%s", p, err, got, want, log)
		}
	}
	// Without the link, the same server refuses the installer.
	res, _ = install(srv.base + "/agents/coder")
	installed, log, _ = strings.Cut(res, "\n")
	if _, err := os.Stat(filepath.Join(installed, "SKILL.md")); err == nil {
		t.Errorf("the installer installed without a link from a server with tokens:\n%s", log)
	}
	if strings.Contains(srv.log(), strings.TrimPrefix(path, "/i/")) {
		t.Errorf("the log holds the link's secret:\n%s", srv.log())
	}
}
