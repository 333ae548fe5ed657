package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store"
)

// reloadFixture is a config folder with two skill folders: skills (agent
// one) and more (for agents a reload adds).
func reloadFixture(t *testing.T) (dir, cfg, db string) {
	t.Helper()
	dir = t.TempDir()
	for folder, name := range map[string]string{"skills": "alpha", "more": "beta"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, folder, name), 0o755))
		testutil.Write(t, filepath.Join(dir, folder, name, "SKILL.md"), "---\nname: "+name+"\ndescription: The "+name+" skill.\n---\nBody of "+name+".\n")
	}
	cfg = filepath.Join(dir, "loadout.json")
	writeConfig(t, cfg, `{"agents": [{"agentId": "one", "skills": [{"root": "skills"}]}]}`)
	return dir, cfg, filepath.Join(dir, "loadout.db")
}

func writeConfig(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const twoAgents = `{"agents": [
  {"agentId": "one", "skills": [{"root": "skills"}]},
  {"agentId": "two", "skills": [{"root": "more"}]}
]}`

// An edit of the config file takes effect without a restart: a new agent
// (on a folder not watched before) is served over HTTP and at its own MCP
// and index mounts; a broken edit keeps the running config and logs why;
// a setting read only at start is logged as needing a restart.
func TestServeReloadsConfigFileOnChange(t *testing.T) {
	dir, cfg, _ := reloadFixture(t)
	srv := startServe(t, "--config", cfg)
	if code, _ := httpDo(t, "GET", srv.base+"/v1/agents/two/prompt", "", nil); code != 404 {
		t.Fatalf("agent two before the edit: %d", code)
	}
	writeConfig(t, cfg, twoAgents)
	// POST /v1/reload applies it at once (the file watcher would too, a
	// moment later); the new folder's watch outlives the request.
	if code, body := httpDo(t, "POST", srv.base+"/v1/reload", "", nil); code != 200 {
		t.Fatalf("POST /v1/reload: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "the new agent's prompt", func() bool {
		code, body := httpDo(t, "GET", srv.base+"/v1/agents/two/prompt", "", nil)
		return code == 200 && strings.Contains(body, "beta")
	})
	if code, body := httpDo(t, "GET", srv.base+"/agents/two/.well-known/agent-skills/index.json", "", nil); code != 200 || !strings.Contains(body, "beta") {
		t.Errorf("new agent's index: %d %.300s", code, body)
	}
	if !strings.Contains(srv.log(), "config reloaded") {
		t.Errorf("no reload logged:\n%s", srv.log())
	}
	// The new agent's folder is watched: an edit in it is served.
	testutil.Write(t, filepath.Join(dir, "more", "beta", "SKILL.md"), "---\nname: beta\ndescription: The beta skill.\n---\nBeta version two.\n")
	eventually(t, 5*time.Second, "an edit in the new agent's folder", func() bool {
		_, body := httpDo(t, "GET", srv.base+"/v1/agents/two/skills/beta", "", nil)
		return strings.Contains(body, "Beta version two.")
	})

	// Broken JSON: the running config stays, and the log says why.
	writeConfig(t, cfg, `{"agents": [`)
	eventually(t, 5*time.Second, "the broken config logged", func() bool {
		return strings.Contains(srv.log(), "config not reloaded") && strings.Contains(srv.log(), "loadout.json")
	})
	// POST /v1/reload says so too: 422 invalid, naming the file.
	if code, body := httpDo(t, "POST", srv.base+"/v1/reload", "", nil); code != 422 || !strings.Contains(body, `"invalid"`) || !strings.Contains(body, "loadout.json") {
		t.Errorf("POST /v1/reload with a broken config: %d %s", code, body)
	}
	// A field error names the field.
	writeConfig(t, cfg, `{"agents": [{"agentId": "one", "skills": [{"root": "skills"}]}, {"agentId": "one", "skills": [{"root": "more"}]}]}`)
	eventually(t, 5*time.Second, "the duplicate agent id logged", func() bool {
		return strings.Contains(srv.log(), "agentId")
	})
	if code, _ := httpDo(t, "GET", srv.base+"/v1/agents/two/prompt", "", nil); code != 200 {
		t.Errorf("agent two after broken edits: %d", code)
	}
	// A server bound changes only at restart, and the log says so.
	writeConfig(t, cfg, strings.Replace(twoAgents, `{"agents"`, `{"server": {"maxConns": 100}, "agents"`, 1))
	eventually(t, 5*time.Second, "the restart-needed line", func() bool {
		return strings.Contains(srv.log(), "needs a restart") && strings.Contains(srv.log(), "field=server")
	})
	if err := srv.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("serve died: %v\n%s", err, srv.log())
	}
}

// With --no-watch the config is read again on POST /v1/reload and on
// SIGHUP; SIGHUP never stops the server, and SIGTERM after loads flushes
// every receipt to the store.
func TestServeReloadOnRequestAndSIGHUP(t *testing.T) {
	_, cfg, db := reloadFixture(t)
	srv := startServe(t, "--config", cfg, "--no-watch")
	writeConfig(t, cfg, twoAgents)
	if code, body := httpDo(t, "POST", srv.base+"/v1/reload", "", nil); code != 200 {
		t.Fatalf("POST /v1/reload: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", srv.base+"/v1/agents/two/skills/beta", "", nil); code != 200 || !strings.Contains(body, "Body of beta.") {
		t.Fatalf("agent two after POST /v1/reload: %d %.300s", code, body)
	}
	writeConfig(t, cfg, `{"agents": [
  {"agentId": "one", "skills": [{"root": "skills"}]},
  {"agentId": "two", "skills": [{"root": "more"}]},
  {"agentId": "three", "skills": [{"root": "skills"}]}
]}`)
	for range 3 {
		if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "agent three after SIGHUP", func() bool {
		code, _ := httpDo(t, "GET", srv.base+"/v1/agents/three/skills/alpha", "", nil)
		return code == 200
	})
	// The reload is logged once it is applied, so just after the agent
	// answers the line may not be written yet.
	eventually(t, 5*time.Second, "the SIGHUP reload logged (why=SIGHUP)", func() bool {
		return strings.Contains(srv.log(), "why=SIGHUP")
	})
	const loads = 20
	for range loads {
		if code, _ := httpDo(t, "GET", srv.base+"/v1/agents/two/skills/beta", "", nil); code != 200 {
			t.Fatalf("load: %d", code)
		}
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	// SIGHUPs during the drain are dropped. A burst, because the server
	// once let go of SIGHUP on its way to ignoring it, and one that came
	// in that moment killed it.
	for range 200 {
		if srv.cmd.Process.Signal(syscall.SIGHUP) != nil {
			break // it has exited
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v:\n%s", err, srv.log())
		}
	case <-testutil.After(t):
		t.Fatal("serve did not stop on SIGTERM")
	}
	// Identical receipts of one flush are one row: the loads are the
	// sum of the rows' counts.
	r := runCLI(t, "receipts", "--db", db, "--agent", "two", "--skill", "beta", "--json")
	var out struct{ Receipts []store.Receipt }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("receipts --json: %v: %s %s", err, r.stdout, r.stderr)
	}
	var n int64
	for _, rc := range out.Receipts {
		n += rc.Count
	}
	if n < loads+1 {
		t.Errorf("%d loads of beta in the receipts after SIGTERM, want %d: %s %s", n, loads+1, r.stdout, r.stderr)
	}
}
