package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tokenDeadline bounds how long a token created or revoked by another
// command may take to reach a running server (the feed's delay is 200 ms
// on SQLite; the README promises a second; this allows for a loaded
// machine).
const tokenDeadline = 5 * time.Second

// Tokens created or revoked while serve runs switch it between open and
// token-required without a restart (token state was read
// once at start, so 'loadout token create' left the server open).
func TestServeFollowsTokens(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testServeFollowsTokens(t, filepath.Join(t.TempDir(), "x.db")) })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("LOADOUT_TEST_POSTGRES") == "" && os.Getenv("CI") == "" {
			t.Skip("LOADOUT_TEST_POSTGRES is not set (scripts/pg.sh starts a server)")
		}
		testServeFollowsTokens(t, freshPostgres(t))
	})
}

func testServeFollowsTokens(t *testing.T, dsn string) {
	root := filepath.Join(examplesDir(t), "skills")
	srv := startServe(t, "--root", root, "--db", dsn, "--no-watch")
	url := srv.base + "/v1/skills"
	if code, body := httpDo(t, "GET", url, "", nil); code != 200 {
		t.Fatalf("open server: %d %s", code, body)
	}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(loadoutBinary(t), args...)
		cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("loadout %q: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	waitFor := func(want int, token, what string) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(tokenDeadline)
		for {
			code, _ := httpDo(t, "GET", url, token, nil)
			if code == want {
				t.Logf("%s: %d after %s", what, want, time.Since(start).Round(time.Millisecond))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %d after %s, want %d\n%s", what, code, tokenDeadline, want, srv.log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	secret := cli("token", "create", "--db", dsn, "--scope", "admin", "--name", "ci")
	waitFor(401, "", "after token create, a request without a token")
	waitFor(200, secret, "with the new token")
	if !strings.Contains(srv.log(), "every request now needs one") {
		t.Errorf("the switch is not logged:\n%s", srv.log())
	}
	list := cli("token", "list", "--db", dsn, "--json")
	i := strings.Index(list, `"id": "`)
	if i < 0 {
		t.Fatalf("token list: %s", list)
	}
	id := list[i+7:]
	id = id[:strings.Index(id, `"`)]
	cli("token", "revoke", "--db", dsn, id)
	waitFor(200, "", "after the last token is revoked, a request without a token")
}
