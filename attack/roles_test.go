package attack

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// TestAttackRoles runs the role attacks against the real binary, on
// SQLite and PostgreSQL: a viewer writing (every write route refused,
// the store unchanged); an author limited to team-data-* editing,
// deleting and importing another skill; a reviewer outside its glob
// writing; a limited token trying to learn the names of skills outside
// its limit through the list, search, diagnostics, sources and receipts
// routes (all refused: a limited role may not use a route over every
// skill).
func TestAttackRoles(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Tokens: true})
		for _, name := range []string{"team-data-etl", "billing"} {
			if code, _, b := s.Do(t, "POST", "/v1/skills", s.Admin, skillDoc(t, name, "Body of "+name+".", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})); code != 201 {
				t.Fatalf("creating %s: %d %s", name, code, b)
			}
		}
		// state is what the store holds, read by the admin: each skill's
		// ETag (its version) and the list of names.
		state := func() string {
			var parts []string
			for _, name := range []string{"team-data-etl", "billing", "team-data-new", "fresh"} {
				code, hdr, _ := s.Do(t, "GET", "/v1/skills/"+name, s.Admin, "")
				parts = append(parts, name+"="+http.StatusText(code)+hdr.Get("ETag"))
			}
			_, _, files := s.Do(t, "GET", "/v1/skills/billing/files", s.Admin, "")
			return strings.Join(parts, " ") + " " + files
		}
		before := state()
		viewer := s.Token(t, "viewer")
		data := s.Token(t, "author:team-data-*")
		reviewer := s.Token(t, "reviewer:team-data-*")

		type call struct{ method, path, body string }
		writes := []call{
			{"POST", "/v1/skills", skillDoc(t, "fresh", "x")},
			{"PUT", "/v1/skills/billing", skillDoc(t, "billing", "changed")},
			{"DELETE", "/v1/skills/billing", ""},
			{"PUT", "/v1/skills/billing/files/notes.md", "evil"},
			{"PUT", "/v1/skills/billing/files/new.md", "evil"},
			{"DELETE", "/v1/skills/billing/files/notes.md", ""},
			{"POST", "/v1/skills/billing/versions/1/restore", ""},
			{"POST", "/v1/import", "[" + skillDoc(t, "fresh", "x") + "," + skillDoc(t, "billing", "changed") + "]"},
			{"POST", "/v1/reload", ""},
			{"POST", "/v1/sources/store/sync", ""},
		}
		for _, w := range writes {
			code, _, body := s.Do(t, w.method, w.path, viewer, w.body, "If-Match", "*")
			if code != http.StatusForbidden || !strings.Contains(body, "needs") {
				t.Errorf("viewer %s %s: %d %.300s, want 403 naming the role needed", w.method, w.path, code, body)
			}
		}
		if got := state(); got != before {
			t.Fatalf("refused viewer writes changed the store:\n%s\n%s", before, got)
		}

		// The team-data author, and a reviewer of team-data-*: every
		// write to billing is refused naming billing and the role; the
		// import that carries billing beside a skill of its own writes
		// neither.
		for tok, who := range map[string]string{data: "author of team-data-*", reviewer: "reviewer of team-data-*"} {
			for _, w := range writes[1:8] {
				body := w.body
				if w.path == "/v1/import" {
					body = "[" + skillDoc(t, "team-data-new", "x") + "," + skillDoc(t, "billing", "changed") + "]"
				}
				code, _, out := s.Do(t, w.method, w.path, tok, body, "If-Match", "*")
				if code != http.StatusForbidden || !strings.Contains(out, `\"billing\"`) || !strings.Contains(out, "the author role") {
					t.Errorf("%s: %s %s: %d %.300s, want 403 naming the author role and billing", who, w.method, w.path, code, out)
				}
			}
			if got := state(); got != before {
				t.Fatalf("%s: refused writes changed the store:\n%s\n%s", who, before, got)
			}
		}
		// Within its glob the author writes.
		if code, _, b := s.Do(t, "PUT", "/v1/skills/team-data-etl", data, skillDoc(t, "team-data-etl", "v2"), "If-Match", `"v1"`); code != 200 {
			t.Errorf("the team-data author on its own skill: %d %s", code, b)
		}

		// Names outside the limit: no route over every skill answers a
		// limited token, and no refusal names a skill it did not ask for.
		for _, p := range []string{"/v1/skills", "/v1/diagnostics", "/v1/diagnostics?skill=billing", "/v1/sources", "/v1/receipts", "/v1/receipts?skill=billing",
			"/v1/agents/coder/search?q=billing", "/v1/agents/coder/skills/billing", "/v1/skills/billing", "/v1/skills/billing/export", "/v1/skills/billing/versions"} {
			code, _, body := s.Do(t, "GET", p, data, "")
			if code != http.StatusForbidden {
				t.Errorf("the team-data author on %s: %d %.300s, want 403", p, code, body)
			}
			if strings.Contains(body, "billing") && !strings.Contains(p, "billing") {
				t.Errorf("the team-data author on %s learns of billing: %.300s", p, body)
			}
		}
		if code, _, body := s.Do(t, "GET", "/v1/skills/team-data-etl", data, ""); code != 200 {
			t.Errorf("the team-data author reading its skill: %d %.300s", code, body)
		}
		// The agents list names no skill, and a role holds no agent.
		code, _, body := s.Do(t, "GET", "/v1/agents", data, "")
		var agents struct{ Agents []any }
		if json.Unmarshal([]byte(body), &agents); code != 200 || len(agents.Agents) != 0 {
			t.Errorf("the team-data author's agents: %d %.300s", code, body)
		}
	})
}

// TestAttackScopeInput: token scopes with control characters, huge
// globs and too many scopes are refused by the binary with exit 2, naming
// the scope and the bound; at the bound they are accepted. Bounds: a
// scope is at most 128 bytes; a token holds at most 16 scopes.
func TestAttackScopeInput(t *testing.T) {
	s := Start(t, Options{Tokens: true})
	create := func(args ...string) (string, string, int) {
		return s.CLI(t, append([]string{"token", "create", "--db", s.DB, "--name", "x"}, args...)...)
	}
	glob := func(n int) string { return "author:" + strings.Repeat("a", n-len("author:")-1) + "*" }
	for _, c := range []struct {
		scope, says string
	}{
		{"author:team\x1b[2J", "control character"},
		// (A NUL cannot be in an argument: store's TestParseScope has it.)
		{"viewer\r\nadmin", "control character"},
		{"author:team\u202e", "control character"},
		{glob(129), "129 bytes, over the 128"},
		{"author:" + strings.Repeat("*", 100000), "over the 128"},
		{"admin:", "give a name glob"},
		{"author:[", "not a valid pattern"},
		{"superuser", "not a role"},
		{"viewer:tag=", "give the tag"},
	} {
		out, errOut, code := create("--scope", c.scope)
		if code != 2 || out != "" || !strings.Contains(errOut, c.says) || !strings.Contains(errOut, "ROLE:GLOB") {
			t.Errorf("scope %.40q: exit %d, stdout %q, stderr %.400s; want 2 saying %q and the accepted forms", c.scope, code, out, errOut, c.says)
		}
		if strings.ContainsAny(errOut, "\x1b\x00\r") {
			t.Errorf("scope %.40q: the error writes a control character to the terminal: %q", c.scope, errOut)
		}
	}
	if _, errOut, code := create("--scope", glob(128)); code != 0 {
		t.Errorf("a scope of 128 bytes: exit %d %s", code, errOut)
	}
	var many []string
	for i := range 17 {
		many = append(many, "--scope", "agent:a"+strings.Repeat("b", i))
	}
	if _, errOut, code := create(many[:32]...); code != 0 {
		t.Errorf("16 scopes: exit %d %s", code, errOut)
	}
	if _, errOut, code := create(many...); code != 2 || !strings.Contains(errOut, "at most 16 scopes; this one has 17") {
		t.Errorf("17 scopes: exit %d %s", code, errOut)
	}
	// A token made of the bound works: the server authenticates it.
	tok := s.Token(t, glob(128))
	if code, _, body := s.Do(t, "GET", "/v1/skills/aaaa", tok, ""); code != http.StatusNotFound && code != http.StatusForbidden {
		t.Errorf("a token with a 128-byte scope: %d %.200s", code, body)
	}
}
