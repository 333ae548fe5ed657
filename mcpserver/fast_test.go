package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/testutil"
)

// rawPost posts one JSON-RPC body on a session as principal coder.
func rawPost(t testing.TB, c *http.Client, url, sid, body string) (*http.Response, string) {
	t.Helper()
	return revPost(t, c, url, sid, "2025-06-18", body)
}

// revPost posts one JSON-RPC body with the revision header rev ("": none)
// and, when sid is not "", on a session.
func revPost(t testing.TB, c *http.Client, url, sid, rev, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rev != "" {
		req.Header.Set("Mcp-Protocol-Version", rev)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// fastCalls are tool calls the fast path answers, each with the SDK's
// answer to compare against: the same call with an empty _meta, which
// the fast path leaves to the SDK.
var fastCases = []struct{ name, params string }{
	{"text", `"name":"read_skill_file","arguments":{"name":"alpha","path":"references/guide.md"}`},
	{"binary", `"name":"read_skill_file","arguments":{"name":"alpha","path":"assets/logo.png"}`},
	{"piece", `"name":"read_skill_file","arguments":{"name":"alpha","path":"data/big.txt","offset":5,"length":100}`},
	{"missing file", `"name":"read_skill_file","arguments":{"name":"alpha","path":"nope.md"}`},
	{"unknown skill", `"name":"read_skill_file","arguments":{"name":"nobody","path":"SKILL.md"}`},
	{"other agent's skill", `"name":"load_skill","arguments":{"name":"delta"}`},
	{"bad arguments", `"name":"read_skill_file","arguments":{"name":7}`},
	{"no arguments", `"name":"load_skill"`},
	{"load", `"name":"load_skill","arguments":{"name":"beta"}`},
	{"use", `"name":"use_skill","arguments":{"name":"gamma"}`},
	{"html in text", `"name":"read_skill_file","arguments":{"name":"alpha","path":"<b>&.md"}`},
	{"search", `"name":"search_skills","arguments":{"query":"pdf"}`},
	{"search with a limit", `"name":"search_skills","arguments":{"query":"pdf forms","limit":1}`},
	{"search that finds nothing", `"name":"search_skills","arguments":{"query":"zzzz <b>"}`},
	{"search with no query", `"name":"search_skills","arguments":{"query":" "}`},
	{"search with too many words", `"name":"search_skills","arguments":{"query":"` + strings.Repeat("w ", 40) + `a1 a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 b3 b4 b5 b6 b7 b8 b9 c1 c2 c3 c4 c5 c6 c7 c8 c9 d1 d2 d3 d4 d5 d6"}`},
}

// TestFastPathMatchesSDK: over HTTP, every call the fast path answers gets
// the same status, headers and bytes as the SDK gives the same call.
func TestFastPathMatchesSDK(t *testing.T) {
	f := newFixture(t)
	srv, s, _ := sessionServer(t, f.svc, 10, time.Hour)
	c := httpClient("coder")
	status, sid, body := initialize(t, srv.URL)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range fastCases {
		before := s.fastCalls.Load()
		fastResp, fast := rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","id":`+itoa(i+10)+`,"method":"tools/call","params":{`+tc.params+`}}`)
		if s.fastCalls.Load() != before+1 {
			t.Fatalf("%s: not answered on the fast path", tc.name)
		}
		sdkResp, sdk := rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","id":`+itoa(i+10)+`,"method":"tools/call","params":{"_meta":{},`+tc.params+`}}`)
		if s.fastCalls.Load() != before+1 {
			t.Fatalf("%s: a call with _meta was answered on the fast path", tc.name)
		}
		if fast != sdk {
			t.Errorf("%s: fast path\n%s\nSDK\n%s", tc.name, fast, sdk)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
			if fastResp.Header.Get(h) != sdkResp.Header.Get(h) {
				t.Errorf("%s: %s: fast %q, SDK %q", tc.name, h, fastResp.Header.Get(h), sdkResp.Header.Get(h))
			}
		}
		if fastResp.StatusCode != sdkResp.StatusCode {
			t.Errorf("%s: status fast %d, SDK %d", tc.name, fastResp.StatusCode, sdkResp.StatusCode)
		}
	}
	// Ids: strings (with characters JSON may escape), large numbers.
	for _, id := range []string{`"x-1"`, `"a<b>&\"c\u00e9"`, `9007199254740993`, `-4`, `1e3`} {
		_, fast := rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{`+fastCases[0].params+`}}`)
		_, sdk := rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"_meta":{},`+fastCases[0].params+`}}`)
		if fast != sdk {
			t.Errorf("id %s: fast path\n%s\nSDK\n%s", id, fast, sdk)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestFastPathLeavesRefusalsToSDK: the fast path answers only on a session
// the SDK would serve; the SDK's refusals stand.
func TestFastPathLeavesRefusalsToSDK(t *testing.T) {
	f := newFixture(t)
	srv, s, _ := sessionServer(t, f.svc, 10, time.Hour)
	_, sid, _ := initialize(t, srv.URL)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + fastCases[0].params + `}}`

	// Another principal (the SDK: session user mismatch).
	if resp, b := rawPost(t, httpClient("open"), srv.URL, sid, call); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another token's call on the session: %d %s", resp.StatusCode, b)
	}
	// An unknown session.
	if resp, b := rawPost(t, httpClient("coder"), srv.URL, "no-such-session", call); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d %s", resp.StatusCode, b)
	}
	// An unknown tool is the SDK's to refuse.
	c := httpClient("coder")
	if _, b := rawPost(t, c, srv.URL, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`); !strings.Contains(b, `unknown tool`) {
		t.Errorf("unknown tool: %s", b)
	}
	// An unsupported revision header is the SDK's 400.
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unsupported revision: %d", resp.StatusCode)
	}
	// After DELETE the session is gone for the fast path too.
	del, _ := http.NewRequest("DELETE", srv.URL, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	if r, err := c.Do(del); err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	if resp, b := rawPost(t, c, srv.URL, sid, call); resp.StatusCode != http.StatusNotFound {
		t.Errorf("deleted session: %d %s", resp.StatusCode, b)
	}
	if n := s.fastCalls.Load(); n != 0 {
		t.Errorf("%d refused calls went the fast path", n)
	}
}

// maxFastCallBytes bounds what one read_skill_file call over HTTP
// allocates on the server (the handler, not the network). The SDK's path
// allocated about 200 KB per call (32 KiB per JSON decode, six decodes).
const maxFastCallBytes = 48 << 10

// TestFastPathAllocates: a read_skill_file call over HTTP allocates under
// maxFastCallBytes.
func TestFastPathAllocates(t *testing.T) {
	f := newFixture(t)
	pool := NewSessions(10, time.Hour, quiet)
	_, h := newHTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, Sessions: pool})
	h = testAuth(h)
	post := func(sid, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Test-Principal", "coder")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := w.Header().Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	perCall := func(params string) uint64 {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + params + `}}`
		if w := post(sid, body); w.Code != 200 || !strings.Contains(w.Body.String(), "Read this first") {
			t.Fatalf("call: %d %s", w.Code, w.Body)
		}
		const n = 200
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		for range n {
			post(sid, body)
		}
		runtime.ReadMemStats(&b)
		return (b.TotalAlloc - a.TotalAlloc) / n
	}
	fast := perCall(fastCases[0].params)
	sdk := perCall(`"_meta":{},` + fastCases[0].params)
	t.Logf("bytes allocated per read_skill_file call: fast path %d, SDK %d", fast, sdk)
	if fast > maxFastCallBytes {
		t.Errorf("a read_skill_file call allocates %d bytes, over %d", fast, maxFastCallBytes)
	}
}

// TestFastPathStdio: over stdio, the fast path's answers are the SDK's
// bytes; calls before initialize, other methods and a line longer than
// fastLineMax go to the SDK.
func TestFastPathStdio(t *testing.T) {
	f := newFixture(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := Options{Agent: "coder", Logger: quiet}
	var srv *server
	done := make(chan error, 1)
	go func() {
		done <- serveStdioWith(ctx, f.svc, opt, inR, outW, func(s *server) { srv = s })
	}()
	lines := bufio.NewReaderSize(outR, 1<<20)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		t.Helper()
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(l, "\n")
	}
	// Before initialize: the SDK's refusal.
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + fastCases[0].params + `}}`)
	if r := recv(); !strings.Contains(r, `"error"`) || !strings.Contains(r, "initialization") {
		t.Errorf("a call before initialize: %s", r)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := recv(); !strings.Contains(r, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range fastCases {
		before := srv.fastCalls.Load()
		send(`{"jsonrpc":"2.0","id":` + itoa(i+10) + `,"method":"tools/call","params":{` + tc.params + `}}`)
		fast := recv()
		if srv.fastCalls.Load() != before+1 {
			t.Fatalf("%s: not answered on the fast path", tc.name)
		}
		send(`{"jsonrpc":"2.0","id":` + itoa(i+10) + `,"method":"tools/call","params":{"_meta":{},` + tc.params + `}}`)
		if sdk := recv(); fast != sdk {
			t.Errorf("%s: fast path\n%s\nSDK\n%s", tc.name, fast, sdk)
		}
	}
	// A line longer than fastLineMax: the SDK's, whole.
	before := srv.fastCalls.Load()
	long := strings.Repeat("x", fastLineMax+100)
	send(`{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"read_skill_file","arguments":{"name":"alpha","path":"` + long + `"}}}`)
	if r := recv(); !strings.Contains(r, `"id":90`) || !strings.Contains(r, `"isError":true`) {
		t.Errorf("long line: %.300s", r)
	}
	if srv.fastCalls.Load() != before {
		t.Error("a line over fastLineMax went the fast path")
	}
	// The input ends: the server returns.
	inW.Close()
	select {
	case <-done:
	case <-testutil.After(t):
		t.Fatal("serveStdio did not return after the input ended")
	}
}

// TestMarshalResult: the fast path's result encoding is the SDK's, byte
// for byte, for text it must escape (HTML, U+2028, invalid UTF-8, control
// characters) and for contents it leaves to the SDK.
func TestMarshalResult(t *testing.T) {
	texts := []string{"", "plain", "<b>&amp;</b>", "line\u2028sep\u2029", "bad \xff\xfe utf8", "tab\tnul\x00\"quote\"\\", "é ü 日本"}
	var results []*mcp.CallToolResult
	for _, s := range texts {
		results = append(results,
			&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}},
			&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}, &mcp.TextContent{Text: s + "2"}}, IsError: true})
	}
	results = append(results,
		&mcp.CallToolResult{Content: []mcp.Content{}},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "skill://a/b", MIMEType: "image/png", Blob: []byte{1, 2}}}}},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": "v"}}}},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"a": 1}},
		// search_skills' form: the structured content is the text's bytes.
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"a":"<b>"}`}}, StructuredContent: mustMarshal(map[string]any{"a": "<b>&\u2028"})},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[]"}, &mcp.TextContent{Text: "none"}}, StructuredContent: mustMarshal(map[string]any{"skills": []int{}}), IsError: true},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(nil)},
		&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, RequestState: "s"},
	)
	for i, res := range results {
		want, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalResult(res)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%d: got\n%s\nwant\n%s", i, got, want)
		}
	}
}

// TestStdioAnswersBeforeInputEnds: a client that writes its requests and
// closes stdin at once (a script piping into `loadout mcp`) gets an
// answer to every call, the SDK's and the fast path's alike, before
// serveStdio returns; notifications get none.
func TestStdioAnswersBeforeInputEnds(t *testing.T) {
	f := newFixture(t)
	opt := Options{Agent: "coder", Logger: quiet}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + fastCases[0].params + `}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4.0,"method":"tools/call","params":{"_meta":{},` + fastCases[0].params + `}}`,
	}, "\n") + "\n"
	want := []string{`"id":1,`, `"id":2,`, `"id":"three",`, `"id":4,`}
	for run := range 40 {
		var out bytes.Buffer
		if err := serveStdio(context.Background(), f.svc, opt, strings.NewReader(in), &out); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(got) != len(want) {
			t.Fatalf("run %d: %d answers for %d calls:\n%s", run, len(got), len(want), out.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Fatalf("run %d: no answer with %s:\n%.600s", run, w, out.String())
			}
		}
	}
}

// TestResponseID: the id of an answer is read without decoding its
// result, and a request or notification of the server's is no answer.
func TestResponseID(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, idKey(json.RawMessage(`7`))},
		{`{"jsonrpc":"2.0","result":{"a":[1,2]},"id":"x"}`, idKey(json.RawMessage(`"x"`))},
		{`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, ""},
		{`not json`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, ""},
	} {
		if got := responseID([]byte(tc.line)); got != tc.want {
			t.Errorf("responseID(%s) = %q, want %q", tc.line, got, tc.want)
		}
	}
	if idKey(json.RawMessage(`1`)) == idKey(json.RawMessage(`"1"`)) {
		t.Error(`id 1 and id "1" share a key`)
	}
	if idKey(json.RawMessage(`1`)) != idKey(json.RawMessage(`1.0`)) {
		t.Error(`id 1 and id 1.0 have different keys`)
	}
}

// statelessServer is an HTTP handler of agent coder without sessions, as
// `loadout serve --stateless` mounts it.
func statelessServer(t testing.TB) (*httptest.Server, *server) {
	t.Helper()
	f := newFixture(t)
	s, h := newHTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, Stateless: true})
	srv := httptest.NewServer(testAuth(h))
	t.Cleanup(srv.Close)
	return srv, s
}

// TestFastPathStatelessMatchesSDK: on a stateless handler every call the
// fast path answers gets the status, headers and bytes the SDK gives the
// same call (the SDK makes a session for the one request), at each
// revision header a client may send, none included.
func TestFastPathStatelessMatchesSDK(t *testing.T) {
	srv, s := statelessServer(t)
	c := httpClient("coder")
	for _, rev := range []string{"2025-06-18", "2025-03-26", "2025-11-25", ""} {
		post := func(body string) (*http.Response, string) { return revPost(t, c, srv.URL, "", rev, body) }
		for i, tc := range fastCases {
			before := s.fastCalls.Load()
			fastResp, fast := post(`{"jsonrpc":"2.0","id":` + itoa(i+10) + `,"method":"tools/call","params":{` + tc.params + `}}`)
			if s.fastCalls.Load() != before+1 {
				t.Fatalf("%s %q: not answered on the fast path", tc.name, rev)
			}
			sdkResp, sdk := post(`{"jsonrpc":"2.0","id":` + itoa(i+10) + `,"method":"tools/call","params":{"_meta":{},` + tc.params + `}}`)
			if s.fastCalls.Load() != before+1 {
				t.Fatalf("%s %q: a call with _meta was answered on the fast path", tc.name, rev)
			}
			if fast != sdk {
				t.Errorf("%s %q: fast path\n%s\nSDK\n%s", tc.name, rev, fast, sdk)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
				if fastResp.Header.Get(h) != sdkResp.Header.Get(h) {
					t.Errorf("%s %q: %s: fast %q, SDK %q", tc.name, rev, h, fastResp.Header.Get(h), sdkResp.Header.Get(h))
				}
			}
			if fastResp.StatusCode != sdkResp.StatusCode || fastResp.StatusCode != 200 {
				t.Errorf("%s %q: status fast %d, SDK %d", tc.name, rev, fastResp.StatusCode, sdkResp.StatusCode)
			}
		}
	}
}

// TestFastPathStatelessLeavesRefusalsToSDK: on a stateless handler a
// request the SDK would refuse, or treat in a way the fast path does not,
// goes to the SDK: each with its own status, and none answered here.
func TestFastPathStatelessLeavesRefusalsToSDK(t *testing.T) {
	srv, s := statelessServer(t)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + fastCases[0].params + `}}`
	cases := []struct {
		name    string
		header  map[string]string
		body    string
		status  int
		contain string
	}{
		{"a session id (the SDK's, whatever it does with it)", map[string]string{"Mcp-Session-Id": "abc"}, call, 200, "Read this first"},
		{"an unsupported revision", map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, call, 400, "Unsupported protocol version"},
		{"the sessionless revision", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, call, 400, ""},
		{"Accept without SSE", map[string]string{"Accept": "application/json"}, call, 400, "Accept must contain"},
		{"Accept without JSON", map[string]string{"Accept": "text/event-stream"}, call, 400, "Accept must contain"},
		{"a Last-Event-ID", map[string]string{"Last-Event-ID": "1"}, call, 400, "Last-Event-ID"},
		// The SDK compares Mcp-Method with the message from 2026-07-28 on;
		// before, it answers the call (so would the fast path, but the SDK
		// is the one to decide).
		{"an Mcp-Method header that does not match", map[string]string{"Mcp-Method": "tools/list"}, call, 200, "Read this first"},
		{"not JSON-RPC 2.0", nil, `{"jsonrpc":"1.0","id":3,"method":"tools/call","params":{` + fastCases[0].params + `}}`, 400, ""},
		{"no id (a notification)", nil, `{"jsonrpc":"2.0","method":"tools/call","params":{` + fastCases[0].params + `}}`, 400, "missing id"},
		{"params with an unknown key", nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"x":1,` + fastCases[0].params + `}}`, 200, "Read this first"},
		{"an unknown tool", nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`, 200, "unknown tool"},
		{"a batch", nil, `[` + call + `]`, 0, ""}, // the SDK's answer, whichever
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := httpClient("coder").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if (tc.status != 0 && resp.StatusCode != tc.status) || !strings.Contains(string(b), tc.contain) {
			t.Errorf("%s: %d %s (want %d with %q)", tc.name, resp.StatusCode, b, tc.status, tc.contain)
		}
	}
	if n := s.fastCalls.Load(); n != 0 {
		t.Errorf("%d of these went the fast path", n)
	}
	// A principal that may not read the agent is refused before either.
	if resp, b := rawPost(t, httpClient("nobody"), srv.URL, "", call); resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no principal: %d %s", resp.StatusCode, b)
	}
	// And the same call as it should be is the fast path's.
	if resp, b := rawPost(t, httpClient("coder"), srv.URL, "", call); resp.StatusCode != 200 || s.fastCalls.Load() != 1 || !strings.Contains(b, "Read this first") {
		t.Errorf("the call itself: %d %s (fast calls %d)", resp.StatusCode, b, s.fastCalls.Load())
	}
}
