package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

func TestTokenCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "loadout.db")

	r := runCLI(t, "token", "create", "--db", db, "--scope", "agent:coder", "--scope", "admin", "--name", "ci")
	if r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	secret := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(secret, "lo_") || strings.Contains(secret, "\n") || len(secret) != 46 {
		t.Fatalf("stdout is not one secret: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "cannot be shown again") {
		t.Errorf("stderr does not warn the secret is shown once: %q", r.stderr)
	}
	if strings.Contains(r.stderr, secret) {
		t.Errorf("stderr repeats the secret")
	}

	r = runCLI(t, "token", "create", "--db", db, "--scope", "agent:reviewer")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	second := strings.TrimSpace(r.stdout)

	// Bad scopes, or none, are refused as usage errors.
	for _, args := range [][]string{{"--scope", "root"}, {"--scope", "agent:"}, {"--scope", "agent:a b"}, {}} {
		r := runCLI(t, append([]string{"token", "create", "--db", db}, args...)...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q", args, r.code, r.stdout)
		}
		if len(args) > 0 && !strings.Contains(r.stderr, args[1]) {
			t.Errorf("%q: the error does not name the scope: %s", args, r.stderr)
		}
	}

	r = runCLI(t, "token", "list", "--db", db, "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var listed struct{ Tokens []store.Token }
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(listed.Tokens) != 2 || listed.Tokens[1].Name != "ci" || strings.Join(listed.Tokens[1].Scopes, " ") != "agent:coder admin" {
		t.Fatalf("list --json: %s", r.stdout)
	}
	if strings.Contains(r.stdout, secret) || strings.Contains(r.stdout, second) {
		t.Error("list prints a secret")
	}
	ciID := listed.Tokens[1].ID

	r = runCLI(t, "token", "list", "--db", db)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ID") || !strings.Contains(r.stdout, ciID) || !strings.Contains(r.stdout, "agent:coder,admin") || !strings.Contains(r.stdout, "never") {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The secret authenticates, until it is revoked.
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if tok, err := s.TokenBySecret(ctx, secret); err != nil || tok.ID != ciID {
		t.Fatalf("TokenBySecret: %v %v", tok, err)
	}
	r = runCLI(t, "token", "revoke", "--db", db, ciID)
	if r.code != 0 || !strings.Contains(r.stdout, ciID) {
		t.Fatalf("revoke: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := s.TokenBySecret(ctx, secret); store.ErrorCode(err) != store.NotFound {
		t.Errorf("a revoked token authenticates: %v", err)
	}
	if _, err := s.TokenBySecret(ctx, second); err != nil {
		t.Errorf("the other token: %v", err)
	}
	r = runCLI(t, "token", "list", "--db", db)
	if strings.Contains(r.stdout, ciID) {
		t.Errorf("list shows the revoked token:\n%s", r.stdout)
	}
	if r := runCLI(t, "token", "revoke", "--db", db, "nope"); r.code != 1 || !strings.Contains(r.stderr, "nope") {
		t.Errorf("revoking an unknown id: exit %d: %s", r.code, r.stderr)
	}
	if r := runCLI(t, "token", "revoke", "--db", db); r.code != 2 {
		t.Errorf("revoke without an id: exit %d", r.code)
	}
	if r := runCLI(t, "token"); r.code != 2 || !strings.Contains(r.stderr, "token create") {
		t.Errorf("token alone: exit %d: %s", r.code, r.stderr)
	}
	if r := runCLI(t, "token", "frobnicate"); r.code != 2 {
		t.Errorf("unknown subcommand: exit %d", r.code)
	}
}

func TestReceiptsCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "loadout.db")
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	rs := []store.Receipt{
		{Time: now.Add(-3 * time.Hour), Agent: "coder", Skill: "pdf-tools", Action: "load", Source: "store", Digest: "sha256:0123456789abcdef0123", Transport: "http", Outcome: "ok", Token: "t1"},
		{Time: now.Add(-2 * time.Hour), Agent: "reviewer", Skill: "pdf-tools", Action: "read", Path: "scripts/x.sh", Source: "plugin", Plugin: "acme", Trust: "trusted", Transport: "mcp-stdio", Outcome: "not_found"},
		{Time: now.Add(-time.Minute), Agent: "coder", Skill: "deploy", Action: "load", Source: "folder", Transport: "mcp-http", Outcome: "ok", Count: 7},
	}
	if err := s.AddReceipts(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r := runCLI(t, "receipts", "--db", db)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "TIME AGENT SKILL ACTION COUNT PATH SOURCE PLUGIN TRUST DIGEST TRANSPORT OUTCOME" {
		t.Fatalf("table:\n%s", r.stdout)
	}
	if !strings.Contains(lines[1], "deploy") || !strings.Contains(lines[3], "sha256:0123456789ab ") || strings.Contains(lines[3], "0123456789abc") {
		t.Errorf("order or short digest:\n%s", r.stdout)
	}
	// COUNT: how many loads a row stands for (identical receipts of one
	// flush are one row).
	if f := strings.Fields(lines[2]); len(f) != 12 || f[4] != "1" || f[5] != "scripts/x.sh" || f[7] != "acme" || f[9] != "-" || f[11] != "not_found" {
		t.Errorf("row: %q", f)
	}
	if f := strings.Fields(lines[1]); len(f) != 12 || f[2] != "deploy" || f[4] != "7" {
		t.Errorf("row of 7 loads: %q", f)
	}
	if r := runCLI(t, "receipts", "--db", db, "--json", "--skill", "deploy"); !strings.Contains(r.stdout, `"count": 7`) {
		t.Errorf("--json has no count: %s", r.stdout)
	}

	count := func(args ...string) int {
		t.Helper()
		r := runCLI(t, append([]string{"receipts", "--db", db, "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		var out struct{ Receipts []store.Receipt }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return len(out.Receipts)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 3},
		{[]string{"--agent", "coder"}, 2},
		{[]string{"--skill", "pdf-tools"}, 2},
		{[]string{"--agent", "coder", "--skill", "pdf-tools"}, 1},
		{[]string{"--since", "90m"}, 1},
		{[]string{"--since", "150m"}, 2},
		{[]string{"--since", now.Add(-4 * time.Hour).Format(time.RFC3339)}, 3},
		{[]string{"--limit", "2"}, 2},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("%q: %d receipts, want %d", c.args, got, c.want)
		}
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--since", "-1h"}, {"--limit", "0"}, {"--limit", "10001"}, {"--daily"}, {"--usage", "--limit", "100001"}} {
		if r := runCLI(t, append([]string{"receipts", "--db", db}, bad...)...); r.code != 2 {
			t.Errorf("%q: exit %d", bad, r.code)
		}
	}

	// Usage: counts per agent, skill, action and outcome, most used first.
	usage := func(args ...string) map[string]int64 {
		t.Helper()
		r := runCLI(t, append([]string{"receipts", "--db", db, "--usage", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("--usage %q: exit %d: %s", args, r.code, r.stderr)
		}
		var out struct{ Usage []store.Usage }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("--usage %q: %v", args, err)
		}
		got := map[string]int64{}
		for _, u := range out.Usage {
			got[u.Agent+" "+u.Skill+" "+u.Action+" "+u.Outcome] += u.Count
		}
		return got
	}
	if got := usage(); len(got) != 3 || got["coder pdf-tools load ok"] != 1 || got["reviewer pdf-tools read not_found"] != 1 || got["coder deploy load ok"] != 7 {
		t.Errorf("--usage: %v (the deploy row stands for 7 loads)", got)
	}
	if got := usage("--agent", "coder"); len(got) != 2 {
		t.Errorf("--usage --agent coder: %v", got)
	}
	r = runCLI(t, "receipts", "--db", db, "--usage", "--daily")
	if r.code != 0 || strings.Join(strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0]), " ") != "DAY AGENT SKILL ACTION OUTCOME COUNT" ||
		!strings.Contains(r.stdout, now.Add(-time.Minute).Format(time.DateOnly)) {
		t.Errorf("--usage --daily: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// --maintain keeps the config's bound; the counts stay. receipts.maxBytes
	// bounds them too: 1 byte keeps none.
	cfg := filepath.Join(t.TempDir(), "loadout.json")
	for _, c := range []struct {
		name, receipts string
		want           []string
		left           int
	}{
		{"--maintain", `{"maxRows": 1}`, []string{"counted 9 new loads and reads", "deleted 2 raw receipt rows"}, 1},
		{"--maintain with maxBytes 1", `{"maxBytes": 1}`, []string{"deleted 1 raw receipt rows", "rows and 1 bytes)"}, 0},
	} {
		if err := os.WriteFile(cfg, []byte(`{"store": "`+db+`", "receipts": `+c.receipts+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, "receipts", "--config", cfg, "--maintain")
		if r.code != 0 || !strings.Contains(r.stdout, c.want[0]) || !strings.Contains(r.stdout, c.want[1]) {
			t.Errorf("%s: exit %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		if got := count(); got != c.left {
			t.Errorf("after %s: %d receipts", c.name, got)
		}
		if got := usage(); len(got) != 3 || got["coder deploy load ok"] != 7 {
			t.Errorf("--usage after %s: %v", c.name, got)
		}
	}
}
