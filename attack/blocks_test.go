package attack

// The kill switch against the real binary: a blocked skill through every
// route and transport, blocks of a version and of a source, bad reasons,
// a skill blocked before it exists, concurrent blocks, and two servers on
// one PostgreSQL database.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockMCP opens an MCP session on path and returns the initialize
// answer and a function that sends one request and returns its answer.
func blockMCP(t *testing.T, s *Server, path string) (string, func(method, params string) string) {
	t.Helper()
	hdr := []string{"Accept", "application/json, text/event-stream"}
	code, h, init := s.Do(t, "POST", path, s.Admin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`, hdr...)
	if code != 200 {
		t.Fatalf("initialize %s: %d %s", path, code, init)
	}
	hdr = append(hdr, "Mcp-Session-Id", h.Get("Mcp-Session-Id"), "Mcp-Protocol-Version", "2025-06-18")
	s.Do(t, "POST", path, s.Admin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	id := 1
	return init, func(method, params string) string {
		t.Helper()
		id++
		code, _, body := s.Do(t, "POST", path, s.Admin, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), hdr...)
		if code != 200 {
			t.Fatalf("%s %s: %d %s", method, params, code, body)
		}
		return body
	}
}

func toolCall(tool, args string) string {
	return fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args)
}

// addBlock blocks through the API and returns the block's id.
func addBlock(t *testing.T, s *Server, body string) string {
	t.Helper()
	code, _, resp := s.Do(t, "POST", "/v1/blocks", s.Admin, body)
	if code != 201 {
		t.Fatalf("POST /v1/blocks %s: %d %s", body, code, resp)
	}
	var b struct{ ID string }
	json.Unmarshal([]byte(resp), &b)
	return b.ID
}

func unblock(t *testing.T, s *Server, idOrSkill string) {
	t.Helper()
	if code, _, resp := s.Do(t, "DELETE", "/v1/blocks/"+url.PathEscape(idOrSkill), s.Admin, ""); code != 200 {
		t.Fatalf("DELETE /v1/blocks/%s: %d %s", idOrSkill, code, resp)
	}
}

// listings are the bytes every listing of the coder agent and of the
// global catalog serves, by route.
func listings(t *testing.T, s *Server) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{
		"/v1/agents/coder/prompt",
		"/v1/agents/*/prompt",
		"/agents/coder/.well-known/agent-skills/index.json",
		"/agents/coder/.well-known/skills/index.json",
		"/.well-known/agent-skills/index.json",
		"/.well-known/skills/index.json",
		"/v1/agents/coder/search?q=deploy+lint+notes+project",
	} {
		code, _, body := s.Do(t, "GET", p, s.Admin, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", p, code, body)
		}
		if strings.HasSuffix(p, "/prompt") {
			// The prompt's bytes; its report tells what changed since
			// the last plan, which a block and an unblock do change.
			var pr struct{ Prompt string }
			json.Unmarshal([]byte(body), &pr)
			body = pr.Prompt
		}
		if strings.Contains(p, "/search") {
			body = regexp.MustCompile(`"query":"[^"]*"`).ReplaceAllString(body, "")
		}
		out[p] = body
	}
	init, _ := blockMCP(t, s, "/agents/coder/mcp")
	// The session id differs per session; the instructions do not.
	if m := regexp.MustCompile(`"instructions":"((?:[^"\\]|\\.)*)"`).FindStringSubmatch(init); m != nil {
		out["mcp instructions"] = m[1]
	} else {
		t.Fatalf("no instructions in the MCP initialize answer: %s", init)
	}
	return out
}

// wantRefused checks that every route and transport refuses the skill
// name and lists it nowhere; reason must be in every refusal.
func wantRefused(t *testing.T, s *Server, name, reason string) {
	t.Helper()
	for _, p := range []string{
		"/v1/agents/coder/skills/" + name,
		"/v1/agents/*/skills/" + name,
		"/v1/agents/coder/skills/" + name + "/files/SKILL.md",
		"/v1/agents/coder/skills/" + name + "/files/SKILL.md?raw=1",
		"/v1/agents/coder/skills/" + name + "/files/references/guide.md",
		"/.well-known/agent-skills/" + name + "/SKILL.md",
		"/.well-known/skills/" + name + "/SKILL.md",
		"/agents/coder/.well-known/agent-skills/" + name + "/SKILL.md",
		"/v1/skills/" + name + "/export",
		"/v1/skills/" + name + "/export?format=zip",
		"/ui/skills/" + name,
		"/ui/skills/" + name + "/files/SKILL.md",
		"/ui/skills/" + name + "/view/SKILL.md",
	} {
		code, _, body := s.Do(t, "GET", p, s.Admin, "", "Accept", "application/json")
		if code != 403 || !strings.Contains(body, "blocked") || !hasReason(body, reason) {
			t.Errorf("GET %s: %d %.300s; want 403 blocked naming the reason %q", p, code, body, reason)
		}
		if strings.Contains(body, "Body of "+name) {
			t.Errorf("GET %s: the body of the blocked skill was served", p)
		}
	}
	for p, body := range listings(t, s) {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(body) {
			i := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).FindStringIndex(body)[0]
			t.Errorf("%s still names %s: …%s…", p, name, body[max(0, i-200):min(len(body), i+100)])
		}
	}
	_, call := blockMCP(t, s, "/agents/coder/mcp")
	for _, c := range []struct{ tool, args string }{
		{"load_skill", fmt.Sprintf(`{"name":%q}`, name)},
		{"read_skill_file", fmt.Sprintf(`{"name":%q,"path":"SKILL.md"}`, name)},
	} {
		body := call("tools/call", toolCall(c.tool, c.args))
		if !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "blocked") || !hasReason(body, reason) || strings.Contains(body, "Body of "+name) {
			t.Errorf("MCP %s %s: %.400s", c.tool, name, body)
		}
	}
	if body := call("tools/call", toolCall("search_skills", fmt.Sprintf(`{"query":%q}`, name))); strings.Contains(body, `\"name\":\"`+name+`\"`) || strings.Contains(body, `"name":"`+name+`"`) {
		t.Errorf("MCP search_skills finds %s: %.400s", name, body)
	}
	if body := call("resources/read", fmt.Sprintf(`{"uri":"skill://%s/SKILL.md"}`, name)); !strings.Contains(body, "blocked") || strings.Contains(body, "Body of "+name) {
		t.Errorf("MCP resources/read of %s: %.400s", name, body)
	}
	// The tools' name enum follows the catalog after MCP's 50 ms
	// coalescing (the tools themselves refuse at once, above).
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		body := call("tools/list", `{}`)
		if !strings.Contains(body, `"`+name+`"`) {
			break
		}
		if time.Since(start) > time.Second {
			i := strings.Index(body, `"`+name+`"`)
			t.Errorf("MCP tools/list still names %s in an enum after 1 s: %s", name, body[max(0, i-300):min(len(body), i+100)])
			break
		}
	}
}

// hasReason reports whether body holds reason, as text or as JSON escapes
// it (<, > and & as \u003c...).
func hasReason(body, reason string) bool {
	j, _ := json.Marshal(reason)
	return strings.Contains(body, reason) || strings.Contains(body, strings.Trim(string(j), `"`))
}

// stdio runs `loadout mcp` for coder on the server's config and store and
// returns its answers to a load, a read and a search of name.
func stdio(t *testing.T, s *Server, name string) string {
	t.Helper()
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":%q}}}`+"\n", name)
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_skill_file","arguments":{"name":%q,"path":"SKILL.md"}}}`+"\n", name)
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_skills","arguments":{"query":%q}}}`+"\n", name)
	cmd := exec.Command(Bin(t), "mcp", "--no-watch", "--config", filepath.Join(s.Dir, "loadout.json"), "--agent", "coder", "--db", s.DB)
	cmd.Dir, cmd.Env = s.Dir, s.env
	cmd.Stdin = strings.NewReader(in.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("loadout mcp: %v\n%s", err, errb.String())
	}
	return out.String()
}

// TestBlockEveryRoute: a blocked skill is listed nowhere and served by no
// route or transport (HTTP load and file reads, MCP over HTTP and stdio,
// the well-known indexes and files, export, the UI's pages and files),
// every refusal names the reason and leaves a receipt with outcome
// blocked; unblocking gives back the same listing bytes. A block of one
// stored version leaves the others served; a block of a source blocks its
// skills and no others; a skill blocked before it exists is blocked when
// it appears; reasons are bounded and must be one printable line.
func TestBlockEveryRoute(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		doc := func(body string) string {
			return `{"schemaVersion": 2, "skill": {"content": ` + jsonString("---\nname: notes\ndescription: Use when you take notes on the project.\n---\n"+body+"\n") + `}}`
		}
		if code, _, body := s.Do(t, "POST", "/v1/skills", s.Admin, doc("Body of notes v1.")); code != 201 {
			t.Fatalf("create notes: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "PUT", "/v1/skills/notes", s.Admin, doc("Body of notes v2."), "If-Match", `"v1"`); code != 200 {
			t.Fatalf("update notes: %d %s", code, body)
		}
		before := listings(t, s)

		// A folder skill, blocked by name.
		const reason = "leaks the deploy key <b>&</b>"
		id := addBlock(t, s, `{"skill": "deploy", "reason": `+jsonString(reason)+`}`)
		wantRefused(t, s, "deploy", reason)
		if out := stdio(t, s, "deploy"); strings.Count(out, `"isError":true`) != 2 || !strings.Contains(out, "blocked") || strings.Contains(out, "Body of deploy") || strings.Contains(out, `\"name\":\"deploy\"`) {
			t.Errorf("loadout mcp (stdio) serves the blocked skill:\n%.1500s", out)
		}
		// The admin's skill list shows it with mode blocked.
		if _, _, list := s.Do(t, "GET", "/v1/skills", s.Admin, ""); !regexp.MustCompile(`"name":"deploy","description":"[^"]*","source":\{[^}]*\},("digest":"[^"]*",)?"mode":"blocked"`).MatchString(list) {
			t.Errorf("GET /v1/skills does not show deploy blocked: %.600s", list)
		}
		// lint is untouched.
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/lint", s.Admin, ""); code != 200 || !strings.Contains(body, "Body of lint") {
			t.Errorf("an unblocked skill: %d %.300s", code, body)
		}
		// The UI marks it in the skills list, and the Blocks page lists it
		// with its reason escaped.
		if _, _, page := s.Do(t, "GET", "/ui/", s.Admin, ""); !strings.Contains(page, `>blocked</span>`) {
			t.Errorf("the skills list does not mark deploy blocked")
		}
		if _, _, page := s.Do(t, "GET", "/ui/blocks", s.Admin, ""); !strings.Contains(page, "leaks the deploy key &lt;b&gt;&amp;&lt;/b&gt;") || strings.Contains(page, "<b>&</b>") || !strings.Contains(page, id) {
			t.Errorf("the Blocks page does not list the block, escaped")
		}
		// Every refused load and read left a receipt with outcome blocked.
		_, _, rc := s.Do(t, "GET", "/v1/receipts?skill=deploy&limit=1000", s.Admin, "")
		var rs struct {
			Receipts []struct{ Outcome, Transport, Code, Digest string }
		}
		json.Unmarshal([]byte(rc), &rs)
		seen := map[string]bool{}
		for _, r := range rs.Receipts {
			if r.Outcome != "blocked" {
				t.Errorf("a receipt of the blocked skill has outcome %q (%+v)", r.Outcome, r)
			}
			if r.Digest == "" {
				t.Errorf("a blocked receipt names no digest: %+v", r)
			}
			seen[r.Transport] = true
		}
		for _, tr := range []string{"http", "mcp-http", "mcp-stdio", "ui"} {
			if !seen[tr] {
				t.Errorf("no blocked receipt over %s: %s", tr, rc)
			}
		}

		unblock(t, s, id)
		after := listings(t, s)
		for p, b := range before {
			if after[p] != b {
				t.Errorf("%s differs after the unblock:\n%.600s\nwant\n%.600s", p, after[p], b)
			}
		}
		if out := stdio(t, s, "deploy"); !strings.Contains(out, "Body of deploy") {
			t.Errorf("loadout mcp after the unblock:\n%.800s", out)
		}

		// One version: v1 blocked, v2 (current) still served; then v2.
		v1 := addBlock(t, s, `{"skill": "notes", "version": 1, "reason": "v1 is bad"}`)
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/notes", s.Admin, ""); code != 200 || !strings.Contains(body, "Body of notes v2.") {
			t.Errorf("v1 blocked, the current v2: %d %.300s", code, body)
		}
		if code, _, body := s.Do(t, "GET", "/v1/skills/notes/export?version=1", s.Admin, ""); code != 403 || !strings.Contains(body, "v1 is bad") {
			t.Errorf("export of the blocked v1: %d %.300s", code, body)
		}
		if code, _, _ := s.Do(t, "GET", "/v1/skills/notes/export?version=2", s.Admin, ""); code != 200 {
			t.Errorf("export of v2 with v1 blocked: %d", code)
		}
		addBlock(t, s, `{"skill": "notes", "version": 2, "reason": "v2 too"}`)
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/notes", s.Admin, ""); code != 403 || !strings.Contains(body, "v2 too") {
			t.Errorf("v2 blocked: %d %.300s", code, body)
		}
		// A new version is not blocked.
		if code, _, body := s.Do(t, "PUT", "/v1/skills/notes", s.Admin, doc("Body of notes v3."), "If-Match", `"v2"`); code != 200 {
			t.Fatalf("update notes: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/notes", s.Admin, ""); code != 200 || !strings.Contains(body, "Body of notes v3.") {
			t.Errorf("v3 with v1 and v2 blocked: %d %.300s", code, body)
		}
		unblock(t, s, "notes") // every block of notes
		if _, _, body := s.Do(t, "GET", "/v1/blocks", s.Admin, ""); strings.Contains(body, v1) || strings.Contains(body, "notes") {
			t.Errorf("unblock by skill name left blocks: %s", body)
		}

		// A source: the folder's skills, not the store's.
		_, _, srcs := s.Do(t, "GET", "/v1/sources", s.Admin, "")
		m := regexp.MustCompile(`"id":"([^"]*skills)","kind":"folder"`).FindStringSubmatch(srcs)
		if m == nil {
			t.Fatalf("no folder source in %s", srcs)
		}
		src := addBlock(t, s, `{"source": `+jsonString(m[1])+`, "reason": "folder compromised"}`)
		for _, name := range []string{"deploy", "lint"} {
			if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/"+name, s.Admin, ""); code != 403 || !strings.Contains(body, "folder compromised") {
				t.Errorf("source blocked, %s: %d %.300s", name, code, body)
			}
		}
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/notes", s.Admin, ""); code != 200 {
			t.Errorf("source blocked, the stored notes: %d", code)
		}
		unblock(t, s, src)

		// A skill that does not exist yet is blocked when it appears.
		addBlock(t, s, `{"skill": "ghost", "reason": "not before review"}`)
		ghost := `{"schemaVersion": 2, "skill": {"content": ` + jsonString("---\nname: ghost\ndescription: Use when haunted.\n---\nBody of ghost.\n") + `}}`
		if code, _, body := s.Do(t, "POST", "/v1/skills", s.Admin, ghost); code != 201 {
			t.Fatalf("create ghost: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/ghost", s.Admin, ""); code != 403 || !strings.Contains(body, "not before review") {
			t.Errorf("a skill blocked before it existed: %d %.300s", code, body)
		}
		unblock(t, s, "ghost")
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/ghost", s.Admin, ""); code != 200 {
			t.Errorf("ghost after the unblock: %d", code)
		}

		// Bad blocks: refused, naming the field; nothing blocked.
		for _, c := range []struct{ body, field string }{
			{`{"skill": "lint", "reason": "two\nlines"}`, "reason"},
			{`{"skill": "lint", "reason": "esc \u001b[31m red"}`, "reason"},
			{`{"skill": "lint", "reason": "bidi \u2028"}`, "reason"},
			{`{"skill": "lint", "reason": "` + strings.Repeat("r", 1001) + `"}`, "reason"},
			{`{"skill": "lint"}`, "reason"},
			{`{"skill": "lint", "version": 1, "digest": "sha256:00", "reason": "x"}`, "digest"},
			{`{"source": "store", "version": 1, "reason": "x"}`, "source"},
			{`{"reason": "x"}`, "skill"},
		} {
			code, _, body := s.Do(t, "POST", "/v1/blocks", s.Admin, c.body)
			if code != 422 || !strings.Contains(body, `"field":"`+c.field+`"`) {
				t.Errorf("POST /v1/blocks %.80s: %d %.300s; want 422 naming %s", c.body, code, body, c.field)
			}
		}
		if code, _, body := s.Do(t, "POST", "/v1/blocks", s.Admin, `{"skill": "lint", "reason": "x", "extra": 1}`); code != 400 {
			t.Errorf("an unknown field: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "POST", "/v1/blocks", s.Admin, `{"skill": "lint", "reason": "`+strings.Repeat("r", 17<<10)+`"}`); code != 413 {
			t.Errorf("a body over the cap: %d %.200s", code, body)
		}
		if _, _, body := s.Do(t, "GET", "/v1/blocks", s.Admin, ""); body != `{"blocks":[]}` && !strings.Contains(body, `"blocks":[]`) {
			t.Errorf("refused blocks were kept: %s", body)
		}
		// At the limit: kept, and the refusal carries all of it.
		long := strings.Repeat("r", 1000)
		lid := addBlock(t, s, `{"skill": "lint", "reason": "`+long+`"}`)
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/lint", s.Admin, ""); code != 403 || !strings.Contains(body, long) {
			t.Errorf("a reason at the limit: %d", code)
		}
		if code, _, body := s.Do(t, "DELETE", "/v1/blocks/"+lid, s.Admin, ""); code != 200 {
			t.Fatalf("unblock: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "DELETE", "/v1/blocks/"+lid, s.Admin, ""); code != 404 {
			t.Errorf("removing a removed block: %d %s", code, body)
		}
	})
}

// TestBlockConcurrent: 40 concurrent blocks and unblocks of one skill, by
// id and by name, leave the server and the store agreeing: the skill is
// refused exactly when a block of it is left.
func TestBlockConcurrent(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _, body := s.Do(t, "POST", "/v1/blocks", s.Admin, fmt.Sprintf(`{"skill": "deploy", "reason": "race %d"}`, i))
				if code != 201 {
					t.Errorf("block %d: %d %s", i, code, body)
					return
				}
				if i%3 == 0 {
					var b struct{ ID string }
					json.Unmarshal([]byte(body), &b)
					// 404 when the unblock of every block of deploy (i 39)
					// removed it first.
					if code, _, body := s.Do(t, "DELETE", "/v1/blocks/"+b.ID, s.Admin, ""); code != 200 && code != 404 {
						t.Errorf("unblock %d: %d %s", i, code, body)
					}
				}
				if i == 39 {
					s.Do(t, "DELETE", "/v1/blocks/deploy", s.Admin, "")
				}
			}()
		}
		wg.Wait()
		check := func(wantBlocked bool) {
			t.Helper()
			deadline := time.Now().Add(2 * time.Second)
			for {
				code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", s.Admin, "")
				if (code == 403) == wantBlocked {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("deploy answers %d; blocked should be %v", code, wantBlocked)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		_, _, list := s.Do(t, "GET", "/v1/blocks", s.Admin, "")
		check(strings.Contains(list, `"skill":"deploy"`))
		unblock(t, s, "deploy")
		check(false)
		if _, _, list := s.Do(t, "GET", "/v1/blocks", s.Admin, ""); strings.Contains(list, "deploy") {
			t.Errorf("blocks left after unblocking deploy: %s", list)
		}
	})
}

// TestBlockTwoInstances: two `loadout serve` on one PostgreSQL database.
// A block made on A is refused by B within a second (NOTIFY), through its
// API and its MCP; the unblock serves it again on B within a second. The
// CLI's block, made on the database directly, reaches both.
func TestBlockTwoInstances(t *testing.T) {
	a := Start(t, Options{Engine: "postgres"})
	b := Start(t, Options{Engine: "postgres", DB: a.DB}) // another instance on A's database
	load := func(s *Server) int {
		code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", s.Admin, "")
		return code
	}
	// until polls B until the load answers want, and returns how long it
	// took from the write's return.
	until := func(s *Server, want int, what string) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			if load(s) == want {
				return time.Since(start)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%s: B still answers %d after 5 s", what, load(s))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	var worst time.Duration
	for round := range 5 {
		if load(b) != 200 || load(a) != 200 {
			t.Fatalf("round %d: deploy is not served before the block: A %d, B %d", round, load(a), load(b))
		}
		id := addBlock(t, a, fmt.Sprintf(`{"skill": "deploy", "reason": "round %d"}`, round))
		d := until(b, 403, "block")
		if load(a) != 403 {
			t.Errorf("round %d: A serves what it blocked", round)
		}
		unblock(t, a, id)
		u := until(b, 200, "unblock")
		t.Logf("round %d: B refused %v after A's block, and served again %v after the unblock", round, d.Round(time.Millisecond), u.Round(time.Millisecond))
		worst = max(worst, d, u)
	}
	if worst >= time.Second {
		t.Errorf("the slowest change took %v to reach the other instance, over 1 s", worst)
	}
	// The CLI writes the store directly: both servers apply it.
	out, errOut, code := a.CLI(t, "block", "deploy", "--reason", "from the cli", "--db", a.DB)
	if code != 0 {
		t.Fatalf("loadout block: %d %s%s", code, out, errOut)
	}
	until(a, 403, "cli block on A")
	until(b, 403, "cli block on B")
	_, call := blockMCP(t, b, "/agents/coder/mcp")
	if body := call("tools/call", toolCall("load_skill", `{"name":"deploy"}`)); !strings.Contains(body, "from the cli") {
		t.Errorf("B's MCP load of the blocked skill: %.300s", body)
	}
	if out, errOut, code := b.CLI(t, "unblock", "deploy", "--db", b.DB); code != 0 {
		t.Fatalf("loadout unblock: %d %s%s", code, out, errOut)
	}
	until(a, 200, "cli unblock on A")
	until(b, 200, "cli unblock on B")
}

// TestBlockFromCLI: `loadout block` and `loadout unblock` write the store
// directly, from another process; the running server applies each within
// a second (SQLite: its feed's 200 ms poll; PostgreSQL: NOTIFY). A
// refused block exits 2 naming the field and writes nothing.
func TestBlockFromCLI(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		until := func(want int, what string) time.Duration {
			t.Helper()
			start := time.Now()
			for {
				code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", s.Admin, "")
				if code == want {
					return time.Since(start)
				}
				if time.Since(start) > 5*time.Second {
					t.Fatalf("%s: still %d after 5 s", what, code)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		for round := range 3 {
			if out, errOut, code := s.CLI(t, "block", "deploy", "--reason", "from the cli", "--db", s.DB); code != 0 {
				t.Fatalf("loadout block: %d %s%s", code, out, errOut)
			}
			d := until(403, "the cli's block")
			if round == 0 {
				// The commands that read skills apply the blocks too.
				for _, args := range [][]string{
					{"load", "--agent", "coder", "deploy"},
					{"read", "--agent", "coder", "deploy", "SKILL.md"},
					{"export", "deploy", "--format", "json", "--out", filepath.Join(t.TempDir(), "x.json")},
				} {
					out, errOut, code := s.CLI(t, args...)
					if code == 0 || !strings.Contains(errOut, "from the cli") || strings.Contains(out, "Body of deploy") {
						t.Errorf("loadout %s with deploy blocked: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
					}
				}
				if out, _, _ := s.CLI(t, "prompt", "--agent", "coder"); strings.Contains(out, "deploy") || !strings.Contains(out, "lint") {
					t.Errorf("loadout prompt lists the blocked skill:\n%s", out)
				}
			}
			if out, errOut, code := s.CLI(t, "unblock", "deploy", "--db", s.DB); code != 0 {
				t.Fatalf("loadout unblock: %d %s%s", code, out, errOut)
			}
			u := until(200, "the cli's unblock")
			t.Logf("%s, round %d: refused %v after the block command returned, served %v after the unblock", engine, round, d.Round(time.Millisecond), u.Round(time.Millisecond))
			if d >= time.Second || u >= time.Second {
				t.Errorf("%s: a change from the cli took %v / %v, over 1 s", engine, d, u)
			}
		}
		out, errOut, code := s.CLI(t, "block", "deploy", "--reason", "two\nlines", "--db", s.DB)
		if code != 2 || !strings.Contains(errOut, "reason") {
			t.Errorf("a reason with a newline: exit %d %s%s", code, out, errOut)
		}
		if out, _, _ := s.CLI(t, "blocks", "--json", "--db", s.DB); !strings.Contains(out, `"blocks": []`) {
			t.Errorf("blocks left: %s", out)
		}
	})
}
