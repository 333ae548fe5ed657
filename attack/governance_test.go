package attack

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGovernanceFourPrincipals is the whole governance story with four
// principals (an author, a reviewer, an admin and an agent), each with
// its own token and role, on SQLite and PostgreSQL, over two instances
// sharing one database:
//   - the author's edits stay drafts: the agent sees no change;
//   - the author cannot approve (no reviewer role), and a reviewer cannot
//     approve their own draft (review.distinct);
//   - the reviewer's approval reaches the agent on both instances within
//     a second; a pinned agent keeps its version;
//   - the admin's block stops every route on both instances within a
//     second, and its lifting serves the skill again;
//   - the audit chain verifies, names each principal's actions, and a row
//     edited behind the server's back is found.
func TestGovernanceFourPrincipals(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		a := Start(t, Options{Engine: engine, Config: reviewConfig, Tokens: true})
		b := Start(t, Options{Engine: engine, Config: reviewConfig, DB: a.DB})
		author := a.Token(t, "author")
		reviewer := a.Token(t, "reviewer")
		admin := a.Admin
		agent := a.Token(t, "agent:coder")
		load := func(s *Server, agentID string) (int, string) {
			code, _, body := s.Do(t, "GET", "/v1/agents/"+agentID+"/skills/gamma", agent, "")
			if agentID != "coder" {
				code, _, body = s.Do(t, "GET", "/v1/agents/"+agentID+"/skills/gamma", admin, "")
			}
			return code, body
		}
		pending := func() string {
			code, _, body := a.Do(t, "GET", "/v1/reviews?state=pending&skill=gamma", reviewer, "")
			var out struct{ Reviews []struct{ ID string } }
			if code != 200 || json.Unmarshal([]byte(body), &out) != nil || len(out.Reviews) != 1 {
				t.Fatalf("pending reviews: %d %s", code, body)
			}
			return out.Reviews[0].ID
		}
		approve := func(token, id string) (int, string) {
			code, _, body := a.Do(t, "POST", "/v1/reviews/"+id+"/approve", token, `{"comment": "reviewed"}`)
			return code, body
		}

		// The author writes; nothing reaches the agent.
		if code, _, body := a.Do(t, "POST", "/v1/skills", author, reviewDoc("gamma", "Gamma one.")); code != 201 {
			t.Fatalf("the author's create: %d %s", code, body)
		}
		if code, _ := load(a, "coder"); code != 404 {
			t.Fatalf("an unapproved skill reached the agent: %d", code)
		}
		id := pending()
		if code, body := approve(author, id); code != 403 || !strings.Contains(body, "reviewer role") {
			t.Fatalf("the author approved: %d %s", code, body)
		}
		if code, _ := approve(agent, id); code != 403 {
			t.Fatalf("the agent approved: %d", code)
		}
		// The reviewer approves: both instances serve it within a second.
		if code, body := approve(reviewer, id); code != 200 {
			t.Fatalf("the reviewer's approval: %d %s", code, body)
		}
		for _, s := range []*Server{a, b} {
			within(t, "the approved version on "+s.Base, func() bool {
				code, body := load(s, "coder")
				return code == 200 && strings.Contains(body, "Gamma one.")
			})
		}
		// A pinned agent keeps version 1 through the next publish.
		if code, _, body := a.Do(t, "PUT", "/v1/agents/pinned/pins/gamma", reviewer, `{"version": 1}`); code != 200 {
			t.Fatalf("pin: %d %s", code, body)
		}
		if code, _, body := a.Do(t, "PUT", "/v1/skills/gamma", author, reviewDoc("gamma", "Gamma two."), "If-Match", `"v1"`); code != 200 {
			t.Fatalf("the author's edit: %d %s", code, body)
		}
		if _, body := load(b, "coder"); !strings.Contains(body, "Gamma one.") {
			t.Fatalf("a draft reached the agent: %s", body)
		}
		// A reviewer who writes a draft may not approve it.
		if code, _, body := a.Do(t, "PUT", "/v1/skills/gamma/files/notes.md", reviewer, "the reviewer's own notes", "If-Match", "*", "Content-Type", "application/octet-stream"); code != 200 {
			t.Fatalf("the reviewer's draft: %d %s", code, body)
		}
		_, _, list := a.Do(t, "GET", "/v1/reviews?state=pending&skill=gamma", reviewer, "")
		var drafts struct {
			Reviews []struct {
				ID     string
				Author struct{ Name string }
			}
		}
		json.Unmarshal([]byte(list), &drafts)
		if len(drafts.Reviews) != 2 {
			t.Fatalf("two drafts were expected: %s", list)
		}
		own, theirs := drafts.Reviews[0].ID, drafts.Reviews[1].ID // newest first: the reviewer's, then the author's
		if code, body := approve(reviewer, own); code != 403 || !strings.Contains(body, "review.distinct") {
			t.Fatalf("a reviewer approved their own draft: %d %s", code, body)
		}
		if code, body := approve(reviewer, theirs); code != 200 {
			t.Fatalf("approving the author's second draft: %d %s", code, body)
		}
		for _, s := range []*Server{a, b} {
			within(t, "version 2 on "+s.Base, func() bool { _, body := load(s, "coder"); return strings.Contains(body, "Gamma two.") })
			if _, body := load(s, "pinned"); !strings.Contains(body, "Gamma one.") {
				t.Fatalf("the pinned agent moved on %s: %s", s.Base, body)
			}
		}

		// The admin blocks gamma on A: B refuses every route within a
		// second; only an admin may block.
		if code, _, _ := a.Do(t, "POST", "/v1/blocks", reviewer, `{"skill": "gamma", "reason": "a leaked key"}`); code != 403 {
			t.Fatalf("a reviewer blocked: %d", code)
		}
		code, _, body := a.Do(t, "POST", "/v1/blocks", admin, `{"skill": "gamma", "reason": "a leaked key"}`)
		var blk struct{ ID string }
		if code != 201 || json.Unmarshal([]byte(body), &blk) != nil {
			t.Fatalf("block: %d %s", code, body)
		}
		within(t, "the block on the second instance", func() bool { code, _ := load(b, "coder"); return code == 403 })
		for _, p := range []string{"/v1/agents/coder/skills/gamma", "/v1/agents/coder/skills/gamma/files/SKILL.md", "/v1/agents/pinned/skills/gamma"} {
			if code, _, body := b.Do(t, "GET", p, admin, ""); code != 403 || !strings.Contains(body, `"blocked"`) {
				t.Errorf("%s on the second instance while blocked: %d %s", p, code, body)
			}
		}
		if _, _, body := b.Do(t, "GET", "/v1/agents/coder/search?q=gamma", agent, ""); strings.Contains(body, `"name":"gamma"`) {
			t.Errorf("search lists a blocked skill: %s", body)
		}
		if code, _, body := a.Do(t, "DELETE", "/v1/blocks/"+blk.ID, admin, ""); code != 200 {
			t.Fatalf("unblock: %d %s", code, body)
		}
		within(t, "the unblock on the second instance", func() bool { _, body := load(b, "coder"); return strings.Contains(body, "Gamma two.") })
		if _, _, body := b.Do(t, "GET", "/v1/agents/coder/search?q=gamma", agent, ""); !strings.Contains(body, `"name":"gamma"`) {
			t.Errorf("search does not list the skill once unblocked: %s", body)
		}

		// The audit chain verifies and names each principal's writes.
		if v, code := auditVerify(t, a); code != 0 || !v.OK {
			t.Fatalf("audit verify: exit %d %+v", code, v)
		}
		out, errOut, code := a.CLI(t, "audit", "--json", "--limit", "100", "--db", a.DB)
		if code != 0 {
			t.Fatalf("loadout audit: %d %s", code, errOut)
		}
		for _, want := range []string{`"role": "author"`, `"role": "reviewer"`, `"role": "admin"`, `"action": "skill.save"`, `"action": "review.approve"`, `"action": "pin"`, `"action": "block"`, `"action": "unblock"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the audit trail lacks %s", want)
			}
		}
		// A row edited behind the server's back is found, by seq.
		st := sideStore(t, engine, a)
		mustExec(t, st.DB(), `UPDATE audit_log SET actor = 'nobody' WHERE seq = 2`)
		if v, code := auditVerify(t, a); code != 1 || v.OK || v.BadSeq != 2 {
			t.Fatalf("an edited row: exit %d %+v", code, v)
		}
	})
}
