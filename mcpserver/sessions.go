package mcpserver

import (
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Sessions.
const (
	// DefaultMaxSessions bounds the sessions of a server. An idle session
	// holds about 6 KB of heap (TestSessionsStayBounded; 30,000 took
	// 256 MB of RSS in the report), so the bound keeps them to about
	// 12-17 MB, and it is far above what one server's agents keep open
	// (one session per running agent).
	DefaultMaxSessions = 2000
	// DefaultSessionIdle closes a session nobody has used for this long.
	// Clients reconnect on their own (a new initialize) when they come
	// back, so it only needs to outlast a pause in an agent's work.
	DefaultSessionIdle = 30 * time.Minute
)

// DefaultMaxSessionsPerToken bounds the sessions of one token (the
// open mode, without tokens, has only the global bound): a quarter of
// DefaultMaxSessions, so no one token's clients can take every place, and
// far above one agent's running instances.
const DefaultMaxSessionsPerToken = 500

// CodeTooManySessions is the error code (HTTP 503) of a new session
// refused because its token (or the server) holds its most sessions and
// the token has none idle to replace.
const CodeTooManySessions = "too_many_sessions"

// Sessions bounds the MCP sessions of every HTTPHandler that shares it
// (Options.Sessions): at most Max open at once, at most PerToken of one
// token, and none left idle longer than Idle. A session is busy while a
// request of it is in flight (an open GET stream included) and idle
// otherwise.
//
// A new session past its token's bound, or past Max, replaces the session
// of the same token idle the longest: that one is closed, and its client
// gets 404 on its next request, which tells an MCP client to start a new
// session. With none of its own idle, the new session is refused with 503
// too_many_sessions. No token's sessions are ever closed for another
// token's (in the open mode every client is the same "no token"), and a
// working session is never closed to make room. A token's sessions close
// when the token is revoked (Watch). The bounds count sessions being
// opened too, so parallel initialize requests cannot pass them.
type Sessions struct {
	max, perToken int
	idle          time.Duration
	log           *slog.Logger

	mu      sync.Mutex
	m       map[string]*sessionEntry
	held    map[string]int // per token id: sessions, and new ones being opened
	pending int            // new-session requests in flight
	watch   func(tokenID string, gone func()) (stop func())

	evicted, expired, revoked int64

	// reserved, when set (tests), runs after a request reserved a place
	// and before the SDK opens its session.
	reserved func()
}

type sessionEntry struct {
	ss *mcp.ServerSession
	// user is the token id that opened the session ("" for none): as the
	// SDK does, only requests with the same token may use the session.
	user string
	// srv is the endpoint whose SDK handler holds the session: one pool
	// bounds every endpoint's sessions, but each endpoint's handler
	// knows only its own (another's id gets 404 there), so the fast path
	// takes a session only on srv.
	srv       *server
	busy      int
	last      time.Time
	timer     *time.Timer
	stopWatch func()
}

// NewSessions returns a bound on sessions; max <= 0 and idle <= 0 take
// the defaults. The bound per token is DefaultMaxSessionsPerToken, or max
// if lower (PerToken changes it).
func NewSessions(max int, idle time.Duration, logger *slog.Logger) *Sessions {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Sessions{max: max, perToken: min(DefaultMaxSessionsPerToken, max), idle: idle, log: logger,
		m: map[string]*sessionEntry{}, held: map[string]int{}}
}

// PerToken sets the bound on one token's sessions (n <= 0: the default,
// DefaultMaxSessionsPerToken; either way at most Max) and returns p. Call
// it before p is used.
func (p *Sessions) PerToken(n int) *Sessions {
	if n <= 0 {
		n = DefaultMaxSessionsPerToken
	}
	p.perToken = min(n, p.max)
	return p
}

// Watch makes p close a token's sessions once the token is revoked;
// watch is service.Service.WatchToken. HTTPHandler sets it.
func (p *Sessions) Watch(watch func(tokenID string, gone func()) (stop func())) {
	p.mu.Lock()
	if p.watch == nil {
		p.watch = watch
	}
	p.mu.Unlock()
}

// Stats reports the open sessions, and how many were closed to make room
// or for being idle.
func (p *Sessions) Stats() (open int, evicted, expired int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m), p.evicted, p.expired
}

// limitFor is the bound on the sessions of token id user.
func (p *Sessions) limitFor(user string) int {
	if user == "" {
		return p.max
	}
	return p.perToken
}

// reserve admits a request of token user that may open a session. Past
// the token's bound or the global one, the token's session idle the
// longest is closed now to make room; with none, the request is refused:
// ok is false and full says which bound ("token" or "server").
func (p *Sessions) reserve(user string) (ok bool, full string) {
	p.mu.Lock()
	switch {
	case p.held[user] >= p.limitFor(user):
		full = "token"
	case len(p.m)+p.pending >= p.max:
		full = "server"
	}
	var closing *mcp.ServerSession
	if full != "" {
		id := p.oldestIdle(user)
		if id == "" {
			p.mu.Unlock()
			return false, full
		}
		old := p.m[id]
		p.drop(id, old)
		p.evicted++
		if p.evicted == 1 || p.evicted%1000 == 0 {
			p.log.Warn("mcp: too many sessions: closed the same token's session idle the longest (see --mcp-sessions and --mcp-sessions-per-token)",
				"bound", full, "max", p.max, "per_token", p.perToken, "idle_for", time.Since(old.last).Round(time.Second), "evicted", p.evicted)
		}
		closing = old.ss
	}
	p.pending++
	p.held[user]++
	p.mu.Unlock()
	if closing != nil {
		closing.Close()
	}
	return true, ""
}

func (p *Sessions) unreserve(user string) {
	p.mu.Lock()
	p.pending--
	p.release(user)
	p.mu.Unlock()
}

// release takes one from the token's count; p.mu is held.
func (p *Sessions) release(user string) {
	if n := p.held[user] - 1; n > 0 {
		p.held[user] = n
	} else {
		delete(p.held, user)
	}
}

// oldestIdle returns the id of the token's session idle the longest, or
// "".
func (p *Sessions) oldestIdle(user string) string {
	var oldID string
	var old *sessionEntry
	for id, e := range p.m {
		if e.user == user && e.busy == 0 && (old == nil || e.last.Before(old.last)) {
			oldID, old = id, e
		}
	}
	return oldID
}

// add records a session that has just been initialized on srv's endpoint
// (by the token id user), in the place its request reserved. The entry
// goes when the SDK closes the session, whatever closed it.
func (p *Sessions) add(ss *mcp.ServerSession, user string, srv *server) {
	id := ss.ID()
	if id == "" {
		return
	}
	// Busy until the initialize request ends (doneNew starts the timer).
	e := &sessionEntry{ss: ss, user: user, srv: srv, busy: 1, last: time.Now()}
	e.timer = time.AfterFunc(time.Hour, func() { p.expire(id, e) })
	e.timer.Stop()
	p.mu.Lock()
	if _, dup := p.m[id]; dup {
		p.mu.Unlock()
		return
	}
	p.m[id] = e
	// Counted until the request's reservation ends too: for a moment one
	// session counts twice, never none.
	p.held[user]++
	if p.watch != nil && user != "" {
		e.stopWatch = p.watch(user, func() { p.revoke(id, e) })
	}
	p.mu.Unlock()
	go func() {
		ss.Wait()
		p.mu.Lock()
		if p.m[id] == e {
			p.drop(id, e)
		}
		p.mu.Unlock()
	}()
}

// revoke closes a session whose token was revoked, busy or not.
func (p *Sessions) revoke(id string, e *sessionEntry) {
	p.mu.Lock()
	if p.m[id] != e {
		p.mu.Unlock()
		return
	}
	p.drop(id, e)
	p.revoked++
	p.mu.Unlock()
	e.ss.Close()
}

// begin marks the session busy for one request; the returned func ends
// it. An unknown id is the SDK's to refuse.
func (p *Sessions) begin(id string) func() {
	p.mu.Lock()
	e := p.m[id]
	if e == nil {
		p.mu.Unlock()
		return func() {}
	}
	e.busy++
	e.timer.Stop()
	p.mu.Unlock()
	return func() { p.done(id, e) }
}

// beginFast is begin for a request the server answers itself (fast.go):
// the session must be one srv's SDK handler holds, initialized, and
// opened by the same token id, or it returns nil and the SDK answers (and
// refuses).
func (p *Sessions) beginFast(id, user string, srv *server) (*mcp.ServerSession, func()) {
	p.mu.Lock()
	e := p.m[id]
	if e == nil || e.srv != srv || (e.user != "" && e.user != user) || e.ss.InitializeParams() == nil {
		p.mu.Unlock()
		return nil, nil
	}
	e.busy++
	e.timer.Stop()
	p.mu.Unlock()
	return e.ss, func() { p.done(id, e) }
}

// done ends a request of the session; the last one starts the idle timer.
func (p *Sessions) done(id string, e *sessionEntry) {
	p.mu.Lock()
	if p.m[id] != e {
		p.mu.Unlock()
		return
	}
	e.busy--
	e.last = time.Now()
	if e.busy == 0 {
		e.timer.Reset(p.idle)
	}
	p.mu.Unlock()
}

// doneNew ends the initialize request that added the session id, if it did.
func (p *Sessions) doneNew(id string) {
	p.mu.Lock()
	e := p.m[id]
	p.mu.Unlock()
	if e != nil {
		p.done(id, e)
	}
}

// remove forgets a session the client deleted.
func (p *Sessions) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[id]; e != nil {
		p.drop(id, e)
	}
}

// drop forgets a session; p.mu is held.
func (p *Sessions) drop(id string, e *sessionEntry) {
	e.timer.Stop()
	if e.stopWatch != nil {
		e.stopWatch()
	}
	delete(p.m, id)
	p.release(e.user)
}

// expire closes a session idle for the whole timeout.
func (p *Sessions) expire(id string, e *sessionEntry) {
	p.mu.Lock()
	if p.m[id] != e || e.busy > 0 || time.Since(e.last) < p.idle {
		p.mu.Unlock()
		return
	}
	p.drop(id, e)
	p.expired++
	p.mu.Unlock()
	e.ss.Close()
}
