package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

const signInConfig = `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}],
  "oidc": {"issuer": "http://127.0.0.1:1/", "clientId": "loadout", "clientSecretEnv": "TEST_OIDC_SECRET",
    "redirectURL": "http://127.0.0.1:7777/ui/oidc/callback", "roles": {"groups": {"admins": ["admin"]}}}}`

// With a provider configured, the server is never open: on loopback
// without any token, the API and the UI need a token or a sign-in (the
// provider is not contacted at start, so one that is down does not stop
// it). The client secret's variable must be set, and is never printed.
func TestServeWithSignInIsNeverOpen(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", "alpha"), 0o755))
	testutil.Write(t, filepath.Join(dir, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Use when alpha.\n---\nDo alpha.\n")
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, signInConfig)

	ctx, cancel := context.WithTimeout(context.Background(), testutil.Patience(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, loadoutBinary(t), "serve", "--addr", "127.0.0.1:0", "--config", cfg, "--db", filepath.Join(dir, "a.db"))
	cmd.Env = []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "oidc.clientSecretEnv: the environment variable TEST_OIDC_SECRET is not set") {
		t.Errorf("serve without the secret's variable: %v\n%s", err, out)
	}

	t.Setenv("TEST_OIDC_SECRET", "very-secret-value")
	r := startServe(t, "--config", cfg, "--db", filepath.Join(dir, "x.db"), "--no-watch")
	if code, _ := httpDo(t, "GET", r.base+"/v1/skills", "", nil); code != 401 {
		t.Errorf("GET /v1/skills without a token on loopback, no tokens exist: %d, want 401", code)
	}
	if code, body := httpDo(t, "GET", r.base+"/ui/login", "", nil); code != 200 || !strings.Contains(body, "Sign in with 127.0.0.1:1") || strings.Contains(body, "open without signing in") {
		t.Errorf("the sign-in page: %d\n%s", code, body)
	}
	if strings.Contains(r.log(), "very-secret-value") || strings.Contains(r.log(), "loopback requests need none") {
		t.Errorf("the log:\n%s", r.log())
	}
}
