package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenRoles: --role with --skills or --tag makes role scopes, list
// shows each token's role and limits, and a bad role, glob or tag is a
// usage error naming it.
func TestTokenRoles(t *testing.T) {
	db := filepath.Join(t.TempDir(), "loadout.db")
	for _, args := range [][]string{
		{"--role", "author", "--skills", "team-data-*", "--name", "data"},
		{"--role", "reviewer", "--tag", "data", "--name", "rev"},
		{"--role", "viewer", "--name", "view"},
		{"--scope", "viewer", "--scope", "author:gam*", "--name", "mixed"},
	} {
		r := runCLI(t, append([]string{"token", "create", "--db", db}, args...)...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "lo_") {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
	}
	r := runCLI(t, "token", "list", "--db", db, "--json")
	var listed struct {
		Tokens []struct {
			Name, Role, Limits string
			Scopes             []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got := map[string]string{}
	for _, tk := range listed.Tokens {
		got[tk.Name] = tk.Role + " | " + tk.Limits + " | " + strings.Join(tk.Scopes, " ")
	}
	want := map[string]string{
		"data":  "author | author of team-data-* | author:team-data-*",
		"rev":   "reviewer | reviewer of skills tagged data | reviewer:tag=data",
		"view":  "viewer | viewer of every skill | viewer",
		"mixed": "author | viewer of every skill, author of gam* | viewer author:gam*",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	r = runCLI(t, "token", "list", "--db", db)
	if !strings.Contains(r.stdout, "ROLE") || !strings.Contains(r.stdout, "reviewer") || !strings.Contains(r.stdout, "author:team-data-*") {
		t.Errorf("list:\n%s", r.stdout)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--role", "owner"}, `role "owner"`},
		{[]string{"--role", "author", "--skills", "Team-*"}, `"author:Team-*"`},
		{[]string{"--role", "author", "--skills", "team-["}, "not a valid pattern"},
		{[]string{"--role", "author", "--tag", ""}, "give the tag after tag="},
		{[]string{"--role", "author", "--tag", "a\x1bb"}, "control character"},
		{[]string{"--skills", "team-*"}, "give --role"},
		{[]string{"--role", "viewer", "--link", "coder"}, "not both"},
		{[]string{"--role", "viewer", "--scope", "index:coder"}, "only scope"},
		{[]string{"--role", "author", "--skills", strings.Repeat("a", 122)}, "over the 128"},
	} {
		r := runCLI(t, append([]string{"token", "create", "--db", db}, c.args...)...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 saying %q", c.args, r.code, r.stdout, r.stderr, c.says)
		}
	}
	// At the bound: a 128-byte scope is accepted.
	if r := runCLI(t, "token", "create", "--db", db, "--role", "author", "--skills", strings.Repeat("a", 121)); r.code != 0 {
		t.Errorf("a 128-byte scope: exit %d: %s", r.code, r.stderr)
	}
}
