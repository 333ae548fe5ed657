package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/service"
)

// The fast path: loadout answers its tools' calls (read_skill_file,
// load_skill, use_skill, search_skills) itself, on a session the SDK
// opened and initialized (or, stateless, with no session at all), instead
// of handing the message to the SDK.
//
// Why: the SDK decodes every message several times over (the body, the
// JSON-RPC envelope, _meta, the params) with a JSON decoder that
// allocates a 32 KiB buffer each time: about 190 KB of garbage per tool
// call over HTTP, 100 KB over stdio. With the catalog's live heap to scan
// on every collection, that garbage, not the tool, set the calls per
// second (bench/mcp.sh; profile in the package doc). Here the message is
// decoded once with encoding/json, the same handler runs with the same
// context values the SDK's path gives it (principal, transport), and the
// answer is encoded the way the SDK encodes it (TestFastPathMatchesSDK
// compares the bytes).
//
// Anything else goes to the SDK unchanged, which also keeps every refusal
// the SDK's: a message is only answered here when it is a single
// JSON-RPC 2.0 call of tools/call whose params hold nothing but name and
// arguments (no _meta: no progress token, no revision of its own), on a
// session that exists and has been initialized (a stateless handler: with
// no session id, as the SDK then makes an initialized session for the
// request), and (over HTTP) with the headers the SDK would accept without
// question (see fastHTTPHeaders).
// One difference: the SDK refuses a call whose id is already in flight on
// the session; calls answered here are not tracked, so two concurrent
// calls with the same id both get answers.

// fastTool is the handler of a tool the fast path answers: the tools a
// host calls most. Their handlers return no Go error in practice (a
// refusal is a result with isError); answer handles one as the SDK does.
func (s *server) fastTool(name string) mcp.ToolHandler {
	switch name {
	case "read_skill_file":
		return s.readSkillFile
	case "load_skill", "use_skill":
		return s.loadSkill
	case "search_skills":
		return s.searchSkills
	}
	return nil
}

// fastCall is a call the fast path may answer.
type fastCall struct {
	id      jsonrpc.ID
	name    string
	args    json.RawMessage
	handler mcp.ToolHandler
}

// parseFast says whether m is a call the fast path answers.
func (s *server) parseFast(m *rpcMessage) (fastCall, bool) {
	if m.Method != "tools/call" || !m.isCall() || m.Version != "2.0" {
		return fastCall{}, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil {
		return fastCall{}, false
	}
	var c fastCall
	for k, v := range params {
		switch k {
		case "name":
			if json.Unmarshal(v, &c.name) != nil {
				return fastCall{}, false
			}
		case "arguments":
			c.args = v
		default:
			return fastCall{}, false // _meta and anything newer: the SDK's
		}
	}
	if c.handler = s.fastTool(c.name); c.handler == nil {
		return fastCall{}, false
	}
	var id any
	if json.Unmarshal(m.ID, &id) != nil {
		return fastCall{}, false
	}
	var err error
	if c.id, err = jsonrpc.MakeID(id); err != nil || !c.id.IsValid() {
		return fastCall{}, false
	}
	return c, true
}

// answer runs the call's handler and appends the JSON-RPC response to
// buf, encoded as the SDK encodes it (no trailing newline).
func (s *server) answer(ctx context.Context, ss *mcp.ServerSession, c fastCall, extra *mcp.RequestExtra, buf *bytes.Buffer) {
	s.fastCalls.Add(1)
	req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: c.name, Arguments: c.args}, Extra: extra}
	var res *mcp.CallToolResult
	var err error
	if obs.Enabled() {
		// One operation, as on the SDK's path (trace.go); the context is
		// the request's own (or stdio's), so its span is the parent.
		ctx, end := obs.Start(ctx, obs.KindMCP, opName("tools/call", c.name),
			obs.Attr{Key: "rpc.system", Value: "jsonrpc"}, obs.Attr{Key: "rpc.method", Value: "tools/call"}, obs.Attr{Key: "gen_ai.tool.name", Value: c.name})
		res, err = c.handler(ctx, req)
		end(outcome(res, err))
	} else {
		res, err = c.handler(ctx, req)
	}
	if err == nil {
		if res.Content == nil {
			res.Content = []mcp.Content{} // as the SDK: never "null"
		}
		// The SDK marshals the result with its MarshalJSON (compact JSON)
		// and puts it in the envelope {"jsonrpc":"2.0","id":ID,"result":...}
		// through an encoder that compacts it again, which changes nothing
		// but costs a copy and a scan of the file's bytes: the envelope is
		// written here around the result as it is.
		var id []byte
		if id, err = idJSON(c.id); err == nil {
			buf.WriteString(`{"jsonrpc":"2.0","id":`)
			buf.Write(id)
			buf.WriteString(`,"result":`)
			if err = appendResult(buf, res); err == nil {
				buf.WriteByte('}')
				return
			}
		}
	}
	// Not reached by the fast tools (their handlers return no error, and
	// their results marshal); answered as the SDK answers a handler's error.
	s.log.Error("mcp tool call failed", "tool", c.name, "err", err)
	buf.Reset()
	b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: c.id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}})
	buf.Write(b)
}

// marshalResult is res.MarshalJSON(), through appendResult.
func marshalResult(res *mcp.CallToolResult) ([]byte, error) {
	var buf bytes.Buffer
	err := appendResult(&buf, res)
	return buf.Bytes(), err
}

// appendResult appends res.MarshalJSON() to buf, written directly when the
// result is only text contents (read_skill_file's and load_skill's usual
// answer): the SDK's MarshalJSON marshals each content with its own
// MarshalJSON, which encoding/json then scans and copies again, for 18%
// of the server's CPU per call over stdio. The bytes are the same
// (TestMarshalResult, TestFastPathMatchesSDK).
//
// A structured content given as json.RawMessage (search_skills') must be
// json.Marshal's output (compact, HTML escaped): it is written as it is,
// as json.Marshal would write it.
func appendResult(buf *bytes.Buffer, res *mcp.CallToolResult) error {
	sc, rawSC := res.StructuredContent.(json.RawMessage)
	direct := res.Meta == nil && (res.StructuredContent == nil || rawSC && len(sc) > 0) &&
		res.InputRequests == nil && res.RequestState == ""
	n := 32 + len(sc)
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			direct = false
			break
		}
		n += len(t.Text) + 32
	}
	if !direct {
		b, err := res.MarshalJSON()
		buf.Write(b)
		return err
	}
	buf.Grow(n + n/16)
	buf.WriteString(`{"content":[`)
	// An Encoder escapes as json.Marshal does (HTML included) and writes
	// into buf without a copy of its own; it adds a newline, cut below.
	enc := json.NewEncoder(buf)
	for i, c := range res.Content {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"type":"text","text":`)
		if err := enc.Encode(c.(*mcp.TextContent).Text); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // the Encoder's newline
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	if rawSC {
		buf.WriteString(`,"structuredContent":`)
		buf.Write(sc)
	}
	if res.IsError {
		buf.WriteString(`,"isError":true`)
	}
	buf.WriteByte('}')
	return nil
}

// bufs are the fast path's response buffers, reused: a response is one
// file's bytes (at most ReadCap) and its envelope.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuf is the largest buffer put back in bufs; a larger one (a
// large file's piece) is left to the collector.
const maxPooledBuf = 64 << 10

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuf {
		b.Reset()
		bufs.Put(b)
	}
}

// idJSON is a request id as the SDK writes it (no HTML escaping).
func idJSON(id jsonrpc.ID) ([]byte, error) {
	if n, ok := id.Raw().(int64); ok {
		return strconv.AppendInt(nil, n, 10), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(id.Raw()); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// fastVersions are the MCP-Protocol-Version header values the fast path
// accepts: the stateful revisions the SDK serves. Later ones never get
// here (isModern); anything else is the SDK's to refuse.
var fastVersions = map[string]bool{"": true, "2025-11-25": true, "2025-06-18": true, "2025-03-26": true, "2024-11-05": true}

// fastHTTPHeaders reports whether the SDK would take a POST's headers
// without a check the fast path does not make: an Accept with both JSON
// and SSE, a known revision, no Last-Event-ID, and none of the Mcp-Method,
// Mcp-Name or Mcp-Param-* headers the SDK compares with the message.
func fastHTTPHeaders(h http.Header) bool {
	acc := strings.Join(h.Values("Accept"), ",")
	if !strings.Contains(acc, "application/json") || !strings.Contains(acc, "text/event-stream") {
		return false
	}
	if !fastVersions[h.Get("Mcp-Protocol-Version")] {
		return false
	}
	for k := range h {
		switch {
		case k == "Last-Event-Id":
			return false
		case strings.HasPrefix(k, "Mcp-") && k != sessionHeader && k != "Mcp-Protocol-Version":
			return false
		}
	}
	return true
}

// loopbackHost reports whether a Host header names a loopback address:
// without Options.HostChecked the SDK refuses other names on a loopback
// connection, so only these take the fast path then.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveFast answers a POST on the fast path and reports whether it did
// (false: nothing was written, the SDK is to answer). A stateful handler
// answers only on a session the SDK holds (sid); a stateless one only
// without a session id, where the SDK would make a session for the one
// request and mark it initialized (StreamableHTTPHandler.serveStateless),
// so no check of a session is left out.
func (s *server) serveFast(w http.ResponseWriter, r *http.Request, pool *Sessions, sid string, m *rpcMessage) bool {
	if (!s.opt.HostChecked && !loopbackHost(r.Host)) || !fastHTTPHeaders(r.Header) {
		return false
	}
	c, ok := s.parseFast(m)
	if !ok {
		return false
	}
	p := service.PrincipalFrom(r.Context())
	var ss *mcp.ServerSession // none when stateless: the handlers use none
	if !s.opt.Stateless {
		var done func()
		if ss, done = pool.beginFast(sid, p.TokenID, s); ss == nil {
			return false
		}
		defer done()
	}
	ctx := context.WithValue(service.WithPrincipal(r.Context(), p), callKey{}, call{transport: service.TransportMCPHTTP})
	extra := &mcp.RequestExtra{Header: r.Header}
	buf := bufs.Get().(*bytes.Buffer)
	defer putBuf(buf)
	s.answer(ctx, ss, c, extra, buf)
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return true
}

// fastLineMax is the longest stdio line the fast path looks at (64 KiB);
// a longer one goes to the SDK as it is (a tool call is far smaller).
const fastLineMax = 64 << 10

// stdioFast is the stdio transport with the fast path: it reads the
// client's lines itself, answers the calls the fast path takes, and
// passes every other line, in order and unchanged, to the SDK's own
// newline-delimited transport through a pipe. Both write whole lines to
// out under one lock (the SDK writes each message and its newline in one
// Write).
type stdioFast struct {
	s   *server
	ctx context.Context
	in  io.Reader
	out *lockedWriter
	ss  atomic.Pointer[mcp.ServerSession]
	// fast counts the calls the fast path is answering, and pending the
	// calls handed to the SDK and not yet answered: when the input ends,
	// the SDK hears of it only once both are answered (drain), so a client
	// that writes its requests and closes stdin (a script, a pipe) gets
	// every answer instead of a process that exits under them.
	fast    sync.WaitGroup
	pending pendingCalls
}

// drainMax bounds how long the end of the input waits for calls in flight:
// a call the SDK never answers (one the client cancelled) cannot hold the
// process open.
const drainMax = 30 * time.Second

// pendingCalls are the ids of the calls handed to the SDK that it has not
// answered yet, keyed by idKey.
type pendingCalls struct {
	mu  sync.Mutex
	ids map[string]int
}

func (p *pendingCalls) add(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]int{}
	}
	p.ids[key]++
}

// done records the answer to a call of key.
func (p *pendingCalls) done(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.ids[key]; n > 1 {
		p.ids[key] = n - 1
	} else {
		delete(p.ids, key)
	}
}

func (p *pendingCalls) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}

// idKey is a JSON-RPC id as a map key that a request and its response
// agree on (1 and 1.0 alike, "1" apart from 1); "" when raw is no id.
func idKey(raw json.RawMessage) string {
	var id any
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil || id == nil {
		return ""
	}
	return fmt.Sprintf("%T:%v", id, id)
}

// responseID is the top-level "id" of the message in line when it is a
// response (no "method"), read without decoding the result, which may be
// a large file's bytes: the SDK writes the id first, then "method" in a
// request of its own, "result" or "error" in an answer.
func responseID(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	id := ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		switch {
		case t == "method":
			return "" // a request or notification of the server's
		case id != "":
			return id // a key after the id that is no method: an answer
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return ""
		}
		if t == "id" {
			if id = idKey(v); id == "" {
				return ""
			}
		}
	}
	return id
}

// sdkWriter is the SDK's side of out: each answer it writes settles its
// call in pending once the line is out.
type sdkWriter struct{ f *stdioFast }

func (w sdkWriter) Write(p []byte) (int, error) {
	n, err := w.f.out.Write(p)
	if w.f.pending.len() > 0 {
		if key := responseID(p); key != "" {
			w.f.pending.done(key)
		}
	}
	return n, err
}

func (w sdkWriter) Close() error { return nil }

// drain waits, when the input has ended, for the calls in flight to be
// answered (at most drainMax, or until ctx ends).
func (f *stdioFast) drain() {
	f.fast.Wait()
	deadline := time.Now().Add(drainMax)
	for f.pending.len() > 0 && time.Now().Before(deadline) && f.ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// Connect implements mcp.Transport.
func (f *stdioFast) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	go f.pump(pw)
	return (&mcp.IOTransport{Reader: pr, Writer: sdkWriter{f}}).Connect(ctx)
}

// pump reads the client's lines until the input ends or the SDK closes
// its side of the pipe.
func (f *stdioFast) pump(pw *io.PipeWriter) {
	br := bufio.NewReaderSize(f.in, fastLineMax)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: the SDK's, in pieces.
			for err == bufio.ErrBufferFull {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
				line, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 && f.try(line) {
			line = nil
		}
		if len(line) > 0 {
			if _, werr := pw.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			f.drain()
			pw.CloseWithError(err) // io.EOF: the SDK sees the input end
			return
		}
	}
}

// try answers line on the fast path (in its own goroutine, as the SDK
// runs calls) and reports whether it did.
func (f *stdioFast) try(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	ss := f.ss.Load()
	c, ok := fastCall{}, false
	if ss != nil && ss.InitializeParams() != nil {
		c, ok = f.s.parseFast(&m)
	}
	if !ok {
		if m.isCall() {
			if key := idKey(m.ID); key != "" {
				f.pending.add(key) // the SDK's to answer
			}
		}
		return false
	}
	f.fast.Add(1)
	go func() {
		defer f.fast.Done()
		ctx := context.WithValue(f.ctx, callKey{}, call{transport: service.TransportMCPStdio})
		buf := bufs.Get().(*bytes.Buffer)
		defer putBuf(buf)
		f.s.answer(ctx, ss, c, nil, buf)
		buf.WriteByte('\n')
		f.out.Write(buf.Bytes())
	}()
	return true
}
