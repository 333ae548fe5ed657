package attack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// mcpSession speaks MCP over streamable HTTP to one agent endpoint, by
// hand: initialize, then calls with the session id it was given.
type mcpSession struct {
	s    *Server
	path string
	id   string
	next int
}

const mcpProtocol = "2025-06-18"

func openMCP(t *testing.T, s *Server, path string) *mcpSession {
	t.Helper()
	m := &mcpSession{s: s, path: path}
	code, hdr, body := s.Do(t, "POST", path, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+mcpProtocol+
		`","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`, "Accept", "application/json, text/event-stream")
	if code != http.StatusOK {
		t.Fatalf("MCP initialize: %d %s", code, body)
	}
	m.id = hdr.Get("Mcp-Session-Id")
	m.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

func (m *mcpSession) send(t *testing.T, msg string) (int, string) {
	t.Helper()
	hdr := []string{"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", mcpProtocol}
	if m.id != "" {
		hdr = append(hdr, "Mcp-Session-Id", m.id)
	}
	code, _, body := m.s.Do(t, "POST", m.path, "", msg, hdr...)
	return code, body
}

// call sends tools/call with raw JSON arguments and returns the answer's
// body (JSON, or one server-sent event holding it).
func (m *mcpSession) call(t *testing.T, tool, args string) string {
	t.Helper()
	m.next++
	code, body := m.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, m.next, tool, args))
	if code != http.StatusOK {
		t.Fatalf("MCP %s %s: %d %s", tool, args, code, body)
	}
	return body
}

type receiptRow struct {
	Agent, Skill, Action, Path, Outcome, Transport, Code string
	Count                                                int64
}

func listReceipts(t *testing.T, s *Server) []receiptRow {
	t.Helper()
	code, _, body := s.Do(t, "GET", "/v1/receipts?limit=10000", "", "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/receipts: %d %s\n%s", code, body, tail(s.Log(), 3000))
	}
	var out struct{ Receipts []receiptRow }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("GET /v1/receipts: %v: %.300s", err, body)
	}
	return out.Receipts
}

// TestAttackReceiptPoison: requests whose skill name or path hold NUL,
// invalid UTF-8, ESC or a bidirectional override, over HTTP and MCP, are
// answered 4xx and leave receipts with those characters escaped (PostgreSQL
// refused the raw NUL, SQLSTATE 22021, and the writer retried that batch
// for ever: no receipt was written after it, GET /v1/receipts answered
// 500 and SIGTERM hung). After them, 1,000 good requests all leave their
// receipts, on both engines, and SIGTERM ends the server within 5 s.
func TestAttackReceiptPoison(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		for _, path := range []string{
			"/v1/agents/coder/skills/a%00b",
			"/v1/agents/coder/skills/a%FFb",
			"/v1/agents/coder/skills/deploy/files/a%FFb",
			"/v1/agents/coder/skills/deploy/files/a%00b",
			"/v1/agents/coder/skills/a%00b/files/x%1B%5B31m",
			"/v1/agents/coder/skills/x%E2%80%AEgpj.exe",
			"/v1/agents/coder/skills/" + strings.Repeat("%00", 2000),
		} {
			code, _, body := s.Do(t, "GET", path, "", "")
			if code < 400 || code >= 500 {
				t.Errorf("GET %s: %d %.200s, want 4xx", path, code, body)
			}
		}
		m := openMCP(t, s, "/agents/coder/mcp")
		for _, c := range []struct{ tool, args string }{
			{"load_skill", `{"name":"a\u0000b"}`},
			{"load_skill", `{"name":"a\u001b]0;pwned\u0007b"}`},
			{"load_skill", "{\"name\":\"a\xffb\"}"},
			{"read_skill_file", `{"name":"deploy","path":"a\u0000b"}`},
			{"read_skill_file", `{"name":"a\u0000b","path":"c\u0000d"}`},
		} {
			body := m.call(t, c.tool, c.args)
			if !strings.Contains(body, `"isError":true`) {
				t.Errorf("MCP %s %s: %.300s, want an error result", c.tool, c.args, body)
			}
		}

		// 1,000 good requests: 500 loads and 500 reads, over both
		// transports, with the poison in between.
		for i := range 1000 {
			switch i % 4 {
			case 0:
				if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", ""); code != 200 {
					t.Fatalf("GET deploy: %d %.200s", code, body)
				}
			case 1:
				if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/lint/files/references/guide.md", "", ""); code != 200 {
					t.Fatalf("GET lint's guide: %d %.200s", code, body)
				}
			case 2:
				m.call(t, "load_skill", `{"name":"lint"}`)
			case 3:
				m.call(t, "read_skill_file", `{"name":"deploy","path":"references/guide.md"}`)
			}
			if i == 500 {
				s.Do(t, "GET", "/v1/agents/coder/skills/a%00c", "", "")
				m.call(t, "load_skill", `{"name":"a\u0000c"}`)
			}
		}

		// Every receipt is written, with its text made safe. Receipts
		// reach the store within a flush (50 ms); listing flushes first.
		deadline := time.Now().Add(10 * time.Second)
		var rs []receiptRow
		var good map[string]int64
		for {
			rs = listReceipts(t, s)
			good = map[string]int64{}
			for _, r := range rs {
				if r.Outcome == "ok" {
					good[r.Transport+" "+r.Action+" "+r.Skill+" "+r.Path] += r.Count
				}
			}
			total := int64(0)
			for _, n := range good {
				total += n
			}
			if total >= 1000 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		want := map[string]int64{
			"http load deploy ":                        250,
			"http read lint references/guide.md":       250,
			"mcp-http load lint ":                      250,
			"mcp-http read deploy references/guide.md": 250,
		}
		for k, n := range want {
			if good[k] != n {
				t.Errorf("receipts of %q: %d, want %d (all: %v)", k, good[k], n, good)
			}
		}
		texts := map[string]bool{}
		for _, r := range rs {
			for _, v := range []string{r.Agent, r.Skill, r.Path, r.Code} {
				if !utf8.ValidString(v) || strings.ContainsFunc(v, func(c rune) bool { return !unicode.IsPrint(c) }) {
					t.Errorf("receipt %+v holds %q: control, invisible or invalid bytes reached the store", r, v)
				}
				if len(v) > 1024 {
					t.Errorf("receipt %+v: a field of %d bytes, past the 1,024-byte cap", r, len(v))
				}
			}
			if r.Outcome != "ok" {
				texts[r.Skill+"|"+r.Path] = true
			}
		}
		// The escapes the receipts keep (see service.ReceiptText).
		for _, k := range []string{`a\x00b|`, `a\xffb|`, `deploy|a\xffb`, `deploy|a\x00b`, `a\x00b|x\x1b[31m`, `x\u202egpj.exe|`,
			`a\x1b]0;pwned\x07b|`, `a\x00b|c\x00d`, `a\x00c|`} {
			if !texts[k] {
				t.Errorf("no refused receipt with skill|path %q; refused receipts: %v", k, texts)
			}
		}
		// The CLI reads the same rows from the store.
		out, errOut, code := s.CLI(t, "receipts", "--json", "--limit", "10000")
		if code != 0 || !strings.Contains(out, `a\\x00b`) {
			t.Errorf("loadout receipts --json: exit %d, no escaped NUL:\n%.500s%s", code, out, errOut)
		}

		took := s.Stop(t)
		if took > 5*time.Second {
			t.Errorf("SIGTERM took %v, want at most 5 s", took)
		}
		if strings.Contains(s.Log(), "writing receipts failed") {
			t.Errorf("the store refused receipts:\n%s", tail(s.Log(), 3000))
		}
	})
}
