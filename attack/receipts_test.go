package attack

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/sqlite"
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
		t.Logf("SIGTERM took %v", took)
		if took > 5*time.Second {
			t.Errorf("SIGTERM took %v, want at most 5 s", took)
		}
		if strings.Contains(s.Log(), "writing receipts failed") {
			t.Errorf("the store refused receipts:\n%s", tail(s.Log(), 3000))
		}
	})
}

// sideDB opens the server's database beside it (another instance, as a
// second process would), for what an attack cannot do over HTTP: make the
// database refuse receipts.
func sideDB(t *testing.T, engine string, s *Server) *sql.DB {
	t.Helper()
	if engine == "postgres" {
		st, err := postgres.Open(context.Background(), s.DB)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.DB()
	}
	st, err := sqlite.Open(s.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.DB()
}

// TestAttackReceiptStoreRefuses: when the database itself refuses receipt
// rows (here a constraint on the skill "poison": what PostgreSQL did to a
// NUL byte), the refused row is dropped with one log line and the next
// 1,000 receipts are written. When it then fails every write (the table
// gone), requests are still answered at once, and SIGTERM ends the server
// within 5 s, saying how many receipts were lost.
func TestAttackReceiptStoreRefuses(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		db := sideDB(t, engine, s)
		q := `CREATE TRIGGER receipts_poison BEFORE INSERT ON receipts WHEN NEW.skill = 'poison' BEGIN SELECT RAISE(ABORT, 'poison refused'); END`
		if engine == "postgres" {
			q = `ALTER TABLE receipts ADD CONSTRAINT receipts_poison CHECK (skill <> 'poison')`
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/poison", "", ""); code != 404 {
			t.Fatalf("GET poison: %d, want 404", code)
		}
		for i := range 1000 {
			p := "/v1/agents/coder/skills/deploy"
			if i%2 == 1 {
				p = "/v1/agents/coder/skills/deploy/files/references/guide.md"
			}
			if code, _, body := s.Do(t, "GET", p, "", ""); code != 200 {
				t.Fatalf("GET %s: %d %.200s", p, code, body)
			}
			if i == 500 {
				s.Do(t, "GET", "/v1/agents/coder/skills/poison", "", "")
			}
		}
		var n int64
		for _, r := range listReceipts(t, s) {
			if r.Skill == "deploy" && r.Outcome == "ok" {
				n += r.Count
			}
			if r.Skill == "poison" {
				t.Errorf("a refused receipt is listed: %+v", r)
			}
		}
		if n != 1000 {
			t.Errorf("%d receipts of the 1,000 good requests written, want 1000\n%s", n, tail(s.Log(), 3000))
		}
		if c := strings.Count(s.Log(), "the store refused receipts"); c < 1 || c > 2 {
			t.Errorf("%d log lines about refused receipts, want one per flush that held one (1 or 2):\n%s", c, tail(s.Log(), 3000))
		}

		// The receipts table gone: every write fails.
		if _, err := db.Exec(`ALTER TABLE receipts RENAME TO receipts_gone`); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range 300 {
			if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", ""); code != 200 {
				t.Fatalf("GET deploy with the receipts table gone: %d %.200s", code, body)
			}
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("300 loads took %v with the store failing", took)
		}
		time.Sleep(300 * time.Millisecond)
		if !strings.Contains(s.Log(), "writing receipts failed; they are kept and tried again") {
			t.Errorf("no log line of the failing writes:\n%s", tail(s.Log(), 3000))
		}
		took := s.Stop(t)
		t.Logf("SIGTERM with the store failing took %v", took)
		if took > 5*time.Second {
			t.Errorf("SIGTERM took %v with the store failing, want at most 5 s", took)
		}
		if !strings.Contains(s.Log(), "receipts could not be written before exit") {
			t.Errorf("no log line of the receipts lost at exit:\n%s", tail(s.Log(), 3000))
		}
	})
}

// TestAttackReceiptBytes: requests for long made-up paths leave receipts
// near the caps (about 1.7 KB a row as stored on PostgreSQL): with
// receipts.maxBytes set, the server keeps the raw receipts near that many
// bytes by itself, not maxRows rows of them (1,000,000 rows of 1.7 KB
// would be 1.7 GB).
func TestAttackReceiptBytes(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		const maxBytes = 300 << 10
		s := Start(t, Options{Engine: engine, Config: `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}]}], "receipts": {"maxBytes": 307200}}`})
		seg := strings.Repeat("p", 250)
		start := time.Now()
		for i := range 3000 {
			p := fmt.Sprintf("/v1/agents/coder/skills/deploy/files/%d/%s/%s/%s/%s", i, seg, seg, seg, seg)
			if code, _, body := s.Do(t, "GET", p, "", ""); code != 404 && code != 400 {
				t.Fatalf("GET a long missing path: %d %.200s", code, body)
			}
		}
		t.Logf("3,000 long reads took %v", time.Since(start))
		var est int64
		var rows int
		deadline := time.Now().Add(15 * time.Second)
		for {
			code, _, body := s.Do(t, "GET", "/v1/receipts?limit=10000", "", "")
			if code != 200 {
				t.Fatalf("GET /v1/receipts: %d %.300s", code, body)
			}
			var out struct {
				Receipts []struct{ Agent, Skill, Action, Path, Source, Plugin, Trust, Digest, Transport, Outcome, Token, Code, Origin string }
			}
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatal(err)
			}
			est, rows = 0, len(out.Receipts)
			for _, r := range out.Receipts {
				text := len(r.Agent) + len(r.Skill) + len(r.Action) + len(r.Path) + len(r.Source) + len(r.Plugin) + len(r.Trust) +
					len(r.Digest) + len(r.Transport) + len(r.Outcome) + len(r.Token) + len(r.Code) + len(r.Origin)
				est += 128 + int64(text)*5/4 // store.ReceiptBytes
			}
			// maxBytes, plus what was written since the last maintenance
			// began (under a tenth).
			if est <= maxBytes+maxBytes/5 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("after %v: %d raw receipts of about %d bytes kept after 3,000 long reads (maxBytes %d)", time.Since(start), rows, est, maxBytes)
		if est > maxBytes+maxBytes/5 || rows >= 3000 {
			t.Errorf("%d raw receipts of about %d bytes kept, want at most %d", rows, est, maxBytes+maxBytes/5)
		}
		if took := s.Stop(t); took > 5*time.Second {
			t.Errorf("SIGTERM took %v, want at most 5 s", took)
		}
	})
}
