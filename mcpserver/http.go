package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/internal/errstatus"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/service"
)

// bridgeToken is what HTTPHandler puts in the Authorization header of the
// request it hands to the SDK. It is not a secret: the SDK's bearer
// middleware needs a token to call the verifier, and the verifier ignores
// it and reads the principal the caller's auth middleware put in the
// request context. The caller's real bearer never reaches the SDK.
const bridgeToken = "Bearer loadout-principal"

// HTTPHandler serves one agent view over MCP streamable HTTP (mounted at
// /mcp for the global catalog and /agents/{id}/mcp for an agent).
//
// The principal comes from the request context (service.PrincipalFrom),
// set by an auth middleware the caller wraps around this handler. A
// principal that may not read the agent gets 403 (401 for an unknown
// token, 404 for an unknown agent) before the SDK sees the request. For
// requests that pass, the principal travels with each message through the
// SDK's per-request token info, so every tool call, read and receipt is the
// caller's, even on a session another request opened. The token id is the
// session's user id, so a session opened with one token cannot be used
// with another.
//
// Sessions (unless Stateless) are bounded by opt.Sessions: a count and an
// idle timeout, shared by the handlers given the same Sessions.
//
// Revisions: it serves every MCP revision the SDK offers, stateful or
// not. The SDK serves 2026-07-28 and later (SEP-2575, without sessions)
// only on a stateless handler, so a stateful HTTPHandler sends a request
// of those revisions (its MCP-Protocol-Version header, else its
// _meta revision) to a stateless handler over the same server; the older
// revisions get sessions as before.
//
// Unknown methods: a call of a method the server does not handle gets
// JSON-RPC -32601 (HTTP 200, with its id) at the revisions before
// 2026-07-28 too, as over stdio, where the SDK would answer HTTP 400 in
// plain text (and the Go SDK's client would then close its session); an
// unknown notification gets 202 and is dropped; in a batch each unknown
// call gets its error beside the SDK's answers to the rest. At 2026-07-28
// the SDK answers -32601 itself (with HTTP 404, as that revision says).
// A POST body is read first, at most MaxRequestBytes (413 too_large).
//
// Responses to POSTs are single JSON bodies (the SDK's JSONResponse
// option), not SSE streams, which gave more tool calls per second in
// BenchmarkReadSkillFileHTTP (about 4,300-5,200 against 1,800-3,600 on a
// shared 2-core machine). Notifications still flow on the GET stream
// (and on subscriptions/listen, which the SDK always streams).
func HTTPHandler(svc *service.Service, opt Options) http.Handler {
	_, h := newHTTPHandler(svc, opt)
	return h
}

func newHTTPHandler(svc *service.Service, opt Options) (*server, http.Handler) {
	if !opt.Stateless && opt.Sessions == nil {
		opt.Sessions = NewSessions(0, 0, opt.Logger)
	}
	s := newServer(context.Background(), svc, opt)
	sdkHandler := func(stateless bool) http.Handler {
		sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
			&mcp.StreamableHTTPOptions{Stateless: stateless, Logger: opt.Logger, JSONResponse: true, DisableLocalhostProtection: opt.HostChecked})
		return auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			p := service.PrincipalFrom(r.Context())
			extra := map[string]any{principalExtraKey: p}
			if obs.Enabled() {
				extra[requestCtxKey] = r.Context() // this request's span (trace.go)
			}
			return &auth.TokenInfo{Scopes: p.Scopes, UserID: p.TokenID, Extra: extra}, nil
		}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	}
	bridged := sdkHandler(opt.Stateless)
	// The SDK serves revision 2026-07-28 and later (SEP-2575, which has no
	// sessions) only on a stateless handler. A stateful server sends the
	// requests of those revisions to a stateless handler over the same
	// server, so it serves every revision the SDK offers.
	modern := bridged
	if !opt.Stateless {
		modern = sdkHandler(true)
	}
	pool := opt.Sessions
	if pool != nil {
		pool.Watch(svc.WatchToken)
	}
	return s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := service.PrincipalFrom(r.Context())
		if _, err := svc.Loadout(p, s.agent); err != nil {
			writeError(w, r, err)
			return
		}

		var msgs []rpcMessage
		var batch bool
		var body []byte
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) {
			var err error
			if body, err = readBody(w, r); err != nil {
				writeError(w, r, err)
				return
			}
			msgs, batch = parseMessages(body)
			// The fast path (fast.go) before anything else: it takes only
			// single tools/call messages of the revisions before
			// 2026-07-28, on a session the SDK holds or, stateless, with
			// no session id (the SDK would make a session for the one
			// request, initialized as the revision says).
			sid := r.Header.Get(sessionHeader)
			if !batch && len(msgs) == 1 && (sid != "") != opt.Stateless && s.serveFast(w, r, pool, sid, &msgs[0]) {
				return
			}
		}
		if p.TokenID != "" && (r.Method == http.MethodGet || listens(msgs)) {
			// A stream that may stay open for hours (the GET stream,
			// subscriptions/listen) ends when its token is revoked; other
			// requests are answered at once.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer svc.WatchToken(p.TokenID, cancel)()
			r = r.WithContext(ctx)
		}
		r2 := new(http.Request)
		*r2 = *r
		r2.Header = r.Header.Clone()
		r2.Header.Set("Authorization", bridgeToken)
		if body != nil {
			r2.Body = io.NopCloser(bytes.NewReader(body))
		}
		if isModern(r.Header, msgs) {
			// The SDK answers these revisions' unknown methods itself
			// (JSON-RPC -32601).
			modern.ServeHTTP(w, r2)
			return
		}
		if hasUnknown(msgs) && (opt.Stateless || sessionKnown(pool, r.Header.Get(sessionHeader))) {
			rest, errs := splitUnknown(msgs)
			if !batch || len(rest) == 0 {
				writeUnknown(w, errs, batch)
				return
			}
			// A batch (revision 2025-03-26) with methods the server
			// handles too: the SDK answers those, and the answers for the
			// unknown ones are added to its array.
			body, _ := json.Marshal(rest)
			r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			r2.Header.Del("Content-Length")
			m := &batchMerger{header: http.Header{}, errs: errs}
			defer m.flush(w)
			w = m
		}
		switch sid := r.Header.Get(sessionHeader); {
		case opt.Stateless:
			bridged.ServeHTTP(w, r2)
		case sid != "":
			defer pool.begin(sid)()
			if r.Method != http.MethodDelete {
				bridged.ServeHTTP(w, r2)
				return
			}
			sw := &statusWriter{ResponseWriter: w}
			bridged.ServeHTTP(sw, r2)
			if sw.status == http.StatusNoContent {
				pool.remove(sid)
			}
		case r.Method == http.MethodPost:
			// No session id: this request opens a session.
			user := p.TokenID
			if ok, full := pool.reserve(user); !ok {
				msg := fmt.Sprintf("this token holds its most MCP sessions (%d), all of them busy: retry later, close sessions you no longer use (DELETE with Mcp-Session-Id), or ask the operator to raise --mcp-sessions-per-token", pool.limitFor(user))
				if full == "server" {
					msg = fmt.Sprintf("the server holds its most MCP sessions (%d), and none of this token's is idle to replace: retry later, close sessions you no longer use (DELETE with Mcp-Session-Id), or ask the operator to raise --mcp-sessions", pool.max)
				}
				w.Header().Set("Retry-After", "10")
				writeErrorStatus(w, http.StatusServiceUnavailable, &service.Error{Code: CodeTooManySessions, Message: msg})
				return
			}
			defer pool.unreserve(user)
			if pool.reserved != nil {
				pool.reserved()
			}
			bridged.ServeHTTP(w, r2)
			if id := w.Header().Get(sessionHeader); id != "" {
				pool.doneNew(id)
			}
		default:
			bridged.ServeHTTP(w, r2)
		}
	})
}

// MaxRequestBytes bounds the body of one POST to an MCP endpoint (1 MiB).
// MCP requests to loadout are small (a tool's arguments, a URI, a cursor);
// a larger body is refused with 413 too_large before it is parsed.
const MaxRequestBytes = 1 << 20

// modernRevision is the first MCP revision (SEP-2575, no sessions) that the
// SDK serves only on a stateless handler.
const modernRevision = "2026-07-28"

// metaProtocolVersion is the _meta key of a request's revision in
// revisions from modernRevision on.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// knownMethods are the methods a client may send that the server handles:
// the go-sdk's (v1.8 serverMethodInfos) and loadout's own (server.go).
// Any other method gets JSON-RPC -32601 over HTTP, as over stdio (the SDK
// answers HTTP 400 text/plain for revisions before modernRevision, and an
// SDK client then closes its session). TestHTTPKnownMethodsReachSDK
// checks each is handled by the SDK.
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"completion/complete": true, "logging/setLevel": true,
	"prompts/list": true, "prompts/get": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
	// loadout's custom methods (mcp.AddReceivingCustomMethod in server.go).
	"skills/list": true, "skills/get": true, "resources/directory/read": true,
}

// rpcMessage is what HTTPHandler reads of each JSON-RPC message of a POST.
type rpcMessage struct {
	raw     json.RawMessage
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// listens reports whether a POST holds subscriptions/listen, which the
// SDK answers with a stream.
func listens(msgs []rpcMessage) bool {
	for i := range msgs {
		if msgs[i].Method == "subscriptions/listen" {
			return true
		}
	}
	return false
}

func (m *rpcMessage) unknown() bool { return m.Method != "" && !knownMethods[m.Method] }

// isCall reports whether m expects an answer (it has an id).
func (m *rpcMessage) isCall() bool { return len(m.ID) > 0 }

// isJSON reports whether a Content-Type is application/json.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// readBody reads a POST's body, at most MaxRequestBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &mbe):
		return nil, &service.Error{Code: service.CodeTooLarge, Message: fmt.Sprintf("the MCP request body is over %d bytes, the most this server reads (MaxRequestBytes): send smaller requests", MaxRequestBytes)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, &service.Error{Code: "request_timeout", Message: "the MCP request body did not arrive within the read timeout (--read-timeout)"}
	}
	return nil, &service.Error{Code: "bad_request", Message: "the MCP request body could not be read: " + err.Error()}
}

// parseMessages reads a POST body's messages (batch: it was an array).
// A body that is not JSON-RPC gives none: the SDK answers it.
func parseMessages(body []byte) (msgs []rpcMessage, batch bool) {
	body = bytes.TrimSpace(body)
	raws := []json.RawMessage{body}
	if len(body) > 0 && body[0] == '[' {
		batch = true
		if json.Unmarshal(body, &raws) != nil {
			return nil, false
		}
	}
	for _, raw := range raws {
		var m rpcMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		if string(m.ID) == "null" {
			m.ID = nil
		}
		m.raw = raw
		msgs = append(msgs, m)
	}
	return msgs, batch
}

// isModern reports whether a request is of a revision the SDK serves only
// statelessly (modernRevision or later; revisions are dates, so they
// compare as strings): by its MCP-Protocol-Version header, or by the
// _meta revision of a message (then the SDK's stateless handler checks
// that the two agree, and answers a mismatch with -32020).
func isModern(h http.Header, msgs []rpcMessage) bool {
	if v := h.Get("Mcp-Protocol-Version"); v >= modernRevision {
		return true
	}
	for _, m := range msgs {
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			if v, ok := p.Meta[metaProtocolVersion].(string); ok && v >= modernRevision {
				return true
			}
		}
	}
	return false
}

func hasUnknown(msgs []rpcMessage) bool {
	for i := range msgs {
		if msgs[i].unknown() {
			return true
		}
	}
	return false
}

// sessionKnown reports whether a request's session id is one this server
// holds (or there is none): for an unknown session the SDK's 404 comes
// first, which tells the client to start a new session.
func sessionKnown(pool *Sessions, sid string) bool {
	if sid == "" || pool == nil {
		return true
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.m[sid] != nil
}

// splitUnknown splits messages into those the SDK handles and the
// answers to the unknown calls (unknown notifications are dropped, as
// JSON-RPC has them).
func splitUnknown(msgs []rpcMessage) (rest []json.RawMessage, errs []json.RawMessage) {
	for i := range msgs {
		m := &msgs[i]
		switch {
		case !m.unknown():
			rest = append(rest, m.raw)
		case m.isCall():
			data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code":    -32601,
				"message": fmt.Sprintf("method %q not found: this server does not handle it", m.Method),
			}})
			errs = append(errs, data)
		}
	}
	return rest, errs
}

// writeUnknown answers a POST whose every message is unknown: the errors
// (an array for a batch), or 202 Accepted when all were notifications.
func writeUnknown(w http.ResponseWriter, errs []json.RawMessage, batch bool) {
	if len(errs) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	data := []byte(errs[0])
	if batch {
		data, _ = json.Marshal(errs)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(data, '\n'))
}

// batchMerger holds the SDK's answer to the known part of a batch and
// adds the answers to its unknown calls.
type batchMerger struct {
	header http.Header
	status int
	body   bytes.Buffer
	errs   []json.RawMessage
}

func (m *batchMerger) Header() http.Header { return m.header }
func (m *batchMerger) Write(p []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(p)
}
func (m *batchMerger) WriteHeader(code int) {
	if m.status == 0 {
		m.status = code
	}
}

func (m *batchMerger) flush(w http.ResponseWriter) {
	for k, v := range m.header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	var answers []json.RawMessage
	body := bytes.TrimSpace(m.body.Bytes())
	ok := m.status == http.StatusAccepted // only notifications were known
	if (m.status == http.StatusOK || m.status == 0) && isJSON(m.header.Get("Content-Type")) {
		switch {
		case len(body) > 0 && body[0] == '[':
			ok = json.Unmarshal(body, &answers) == nil
		case len(body) > 0 && body[0] == '{':
			answers, ok = []json.RawMessage{body}, true
		}
	}
	if !ok {
		// The SDK refused the request (or streamed it): its answer stands.
		if m.status != 0 {
			w.WriteHeader(m.status)
		}
		w.Write(m.body.Bytes())
		return
	}
	writeUnknown(w, append(answers, m.errs...), true)
}

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := service.AsError(err)
	status := errstatus.Of(e.Code)
	if status == http.StatusUnauthorized {
		errstatus.WriteUnauthorized(w, r, e)
		return
	}
	writeErrorStatus(w, status, e)
}

// writeErrorStatus writes the error envelope the HTTP API uses.
func writeErrorStatus(w http.ResponseWriter, status int, e *service.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// ServeStdio serves one agent view over stdin and stdout until ctx ends or
// the client disconnects (`loadout mcp --agent ID`). The caller is the
// local user: the principal is open.
func ServeStdio(ctx context.Context, svc *service.Service, opt Options) error {
	return serveStdio(ctx, svc, opt, os.Stdin, os.Stdout)
}

// serveStdio serves over in and out with the fast path (fast.go).
func serveStdio(ctx context.Context, svc *service.Service, opt Options, in io.Reader, out io.Writer) error {
	return serveStdioWith(ctx, svc, opt, in, out, nil)
}

// serveStdioWith is serveStdio that hands the server to started (tests).
func serveStdioWith(ctx context.Context, svc *service.Service, opt Options, in io.Reader, out io.Writer, started func(*server)) error {
	p := service.Principal{Open: true}
	ctx, cancel := context.WithCancel(service.WithPrincipal(ctx, p))
	defer cancel()
	s := newServer(ctx, svc, opt)
	if started != nil {
		started(s)
	}
	if _, err := svc.Loadout(p, s.agent); err != nil {
		return err
	}
	t := &stdioFast{s: s, ctx: ctx, in: in, out: &lockedWriter{w: out}}
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	t.ss.Store(ss)
	// As mcp.Server.Run: until the client goes or ctx ends.
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}
