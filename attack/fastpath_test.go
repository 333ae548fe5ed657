package attack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Attacks on MCP's fast path (mcpserver/fast.go): the tool calls loadout
// answers itself, before the SDK, on a session the SDK holds or, with
// --stateless, with no session at all. Each must refuse what the SDK
// would: another agent's skills, a missing or revoked token, a Host the
// server does not serve, a session of another token or another endpoint.

// splitAgents serves agents coder and ops from folders of their own: only
// coder has secret-plan.
const splitAgents = `{"agents": [{"agentId": "coder", "skills": [{"root": "skills/coder"}]}, {"agentId": "ops", "skills": [{"root": "skills/ops"}]}]}`

const secretBody = "Body of secret-plan: the launch code is 0000."

func splitSkills() map[string]string {
	return map[string]string{
		"coder/secret-plan/SKILL.md":           "---\nname: secret-plan\ndescription: Use when you plan the secret launch.\n---\n" + secretBody + "\n",
		"coder/secret-plan/references/code.md": "secret reference: 0000\n",
		"ops/runbook/SKILL.md":                 "---\nname: runbook\ndescription: Use when you run the book.\n---\nBody of runbook.\n",
	}
}

// fastCall posts one tools/call with no session id (sid "") or on a
// session, with the headers that send it down the fast path.
func fastCall(t *testing.T, s *Server, path, token, sid, tool, args string, extra ...string) (int, string) {
	t.Helper()
	hdr := append([]string{"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", mcpProtocol}, extra...)
	if sid != "" {
		hdr = append(hdr, "Mcp-Session-Id", sid)
	}
	code, _, body := s.Do(t, "POST", path, token, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args), hdr...)
	return code, body
}

// leaks reports whether an answer holds any of coder's secret text.
func leaks(body string) bool {
	return strings.Contains(body, "launch code") || strings.Contains(body, "secret reference") || strings.Contains(body, "secret launch")
}

// TestAttackStatelessFastPath: with --stateless, a tool call carries no
// session, so the token and the endpoint are all there is to check. An
// agent:ops token gets nothing of coder's through coder's endpoint or its
// own, by any of the three fast tools; no token, another Host or a token
// revoked in another process get nothing either; coder's own token does
// (the control, so that a refusal for every call cannot pass).
func TestAttackStatelessFastPath(t *testing.T) {
	s := Start(t, Options{Tokens: true, Config: splitAgents, Skills: splitSkills(), Args: []string{"--stateless"}})
	coder, ops := s.Token(t, "agent:coder"), s.Token(t, "agent:ops")
	calls := []struct{ tool, args string }{
		{"load_skill", `{"name":"secret-plan"}`},
		{"read_skill_file", `{"name":"secret-plan","path":"references/code.md"}`},
		{"search_skills", `{"query":"plan the launch"}`},
	}
	for _, c := range calls {
		code, body := fastCall(t, s, "/agents/coder/mcp", coder, "", c.tool, c.args)
		if code != http.StatusOK || !leaks(body) {
			t.Fatalf("control: coder's own %s on its endpoint: %d %.300s", c.tool, code, body)
		}
		if code, body := fastCall(t, s, "/agents/coder/mcp", ops, "", c.tool, c.args); code != http.StatusForbidden || leaks(body) {
			t.Errorf("an agent:ops token's %s on coder's endpoint: %d %.300s, want 403 and none of coder's text", c.tool, code, body)
		}
		if code, body := fastCall(t, s, "/agents/ops/mcp", ops, "", c.tool, c.args); code != http.StatusOK || leaks(body) {
			t.Errorf("an agent:ops token's %s of coder's skill on its own endpoint: %d %.300s, want 200 without coder's text", c.tool, code, body)
		}
		if code, body := fastCall(t, s, "/agents/coder/mcp", "", "", c.tool, c.args); code != http.StatusUnauthorized || leaks(body) {
			t.Errorf("%s without a token: %d %.300s, want 401", c.tool, code, body)
		}
		// A name the server does not serve (DNS rebinding): refused before MCP.
		if code, body := fastCall(t, s, "/agents/coder/mcp", coder, "", c.tool, c.args, "Host", "attacker.example:80"); code == http.StatusOK || leaks(body) {
			t.Errorf("%s with Host attacker.example: %d %.300s, want a refusal", c.tool, code, body)
		}
	}
	if _, errOut, code := s.CLI(t, "token", "revoke", "--db", s.DB, tokenID(t, s, "agent:coder")); code != 0 {
		t.Fatalf("token revoke: %d %s", code, errOut)
	}
	var code int
	var body string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if code, body = fastCall(t, s, "/agents/coder/mcp", coder, "", "load_skill", `{"name":"secret-plan"}`); code == http.StatusUnauthorized {
			break
		}
	}
	if code != http.StatusUnauthorized || leaks(body) {
		t.Errorf("a revoked token's stateless call 5 s after the revocation: %d %.300s, want 401", code, body)
	}
	s.Healthy(t)
}

// TestAttackFastPathForeignSession: with sessions, the fast path answers
// only on a session the SDK itself would take: the session must be this
// endpoint's and this token's. A token that may read both agents opens a
// session on ops's endpoint and calls coder's endpoint with its id (the
// SDK keeps sessions per endpoint and answers 404: the fast path answered
// 200 with coder's skill); the admin calls with ops's session id on ops's
// endpoint (the SDK refuses a session opened by another token).
func TestAttackFastPathForeignSession(t *testing.T) {
	s := Start(t, Options{Tokens: true, Config: splitAgents, Skills: splitSkills()})
	ops, dev := s.Token(t, "agent:ops"), s.Token(t, "agent:coder", "agent:ops")

	code, devOnOps := mcpInit(t, s, "/agents/ops/mcp", dev)
	if code != http.StatusOK || devOnOps == "" {
		t.Fatalf("dev's initialize on ops: %d", code)
	}
	mcpNotify(t, s, "/agents/ops/mcp", dev, devOnOps)
	if code, body := fastCall(t, s, "/agents/ops/mcp", dev, devOnOps, "load_skill", `{"name":"runbook"}`); code != http.StatusOK || !strings.Contains(body, "Body of runbook") {
		t.Fatalf("control: dev's load_skill on its own session: %d %.300s", code, body)
	}
	code, body := fastCall(t, s, "/agents/coder/mcp", dev, devOnOps, "load_skill", `{"name":"secret-plan"}`)
	if code != http.StatusNotFound || leaks(body) {
		t.Errorf("a session of ops's endpoint used on coder's: %d %.300s, want 404 as the SDK answers for a session it does not hold", code, body)
	}

	code, opsSID := mcpInit(t, s, "/agents/ops/mcp", ops)
	if code != http.StatusOK || opsSID == "" {
		t.Fatalf("ops's initialize: %d", code)
	}
	mcpNotify(t, s, "/agents/ops/mcp", ops, opsSID)
	if code, body := fastCall(t, s, "/agents/ops/mcp", s.Admin, opsSID, "load_skill", `{"name":"runbook"}`); code == http.StatusOK {
		t.Errorf("the admin token on agent:ops's session: %d %.300s, want a refusal (a session belongs to the token that opened it)", code, body)
	}
	if code, body := fastCall(t, s, "/agents/ops/mcp", ops, opsSID, "load_skill", `{"name":"runbook"}`); code != http.StatusOK || !strings.Contains(body, "Body of runbook") {
		t.Errorf("ops's own session after the refusals: %d %.300s", code, body)
	}
	s.Healthy(t)
}

// mcpNotify sends notifications/initialized on a session.
func mcpNotify(t *testing.T, s *Server, path, token, sid string) {
	t.Helper()
	code, _, body := s.Do(t, "POST", path, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", mcpProtocol)
	if code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("notifications/initialized: %d %s", code, body)
	}
}
