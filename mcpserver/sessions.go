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

// CodeTooManySessions is the error code (HTTP 503) of a new session
// refused because every session is busy and there are Max of them.
const CodeTooManySessions = "too_many_sessions"

// Sessions bounds the MCP sessions of every HTTPHandler that shares it
// (Options.Sessions): at most Max open at once, and none left idle longer
// than Idle. A session is busy while a request of it is in flight (an
// open GET stream included) and idle otherwise.
//
// When a new session would pass Max, the session idle the longest is
// closed to make room: its client gets 404 on its next request, which
// tells an MCP client to start a new session. When every session is busy,
// the new one is refused with 503 too_many_sessions. Any client can so
// push out another's idle session, but never one that is working, and
// the number of sessions (and the memory they hold) stays bounded.
type Sessions struct {
	max  int
	idle time.Duration
	log  *slog.Logger

	mu      sync.Mutex
	m       map[string]*sessionEntry
	pending int // new-session requests in flight

	evicted, expired int64
}

type sessionEntry struct {
	ss *mcp.ServerSession
	// user is the token id that opened the session ("" for none): as the
	// SDK does, only requests with the same token may use the session.
	user  string
	busy  int
	last  time.Time
	timer *time.Timer
}

// NewSessions returns a bound on sessions; max <= 0 and idle <= 0 take
// the defaults.
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
	return &Sessions{max: max, idle: idle, log: logger, m: map[string]*sessionEntry{}}
}

// Stats reports the open sessions, and how many were closed to make room
// or for being idle.
func (p *Sessions) Stats() (open int, evicted, expired int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m), p.evicted, p.expired
}

// reserve admits a request that may open a session: true when there is
// room, or an idle session to close for it (add closes it once the new
// session exists, so a request that opens none closes none); false when
// every session is busy.
func (p *Sessions) reserve() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m)+p.pending >= p.max && p.oldestIdle() == "" {
		return false
	}
	p.pending++
	return true
}

func (p *Sessions) unreserve() {
	p.mu.Lock()
	p.pending--
	p.mu.Unlock()
}

// oldestIdle returns the id of the session idle the longest, or "".
func (p *Sessions) oldestIdle() string {
	var oldID string
	var old *sessionEntry
	for id, e := range p.m {
		if e.busy == 0 && (old == nil || e.last.Before(old.last)) {
			oldID, old = id, e
		}
	}
	return oldID
}

// add records a session that has just been initialized (by the token id
// user), and closes the session idle the longest if that makes one too
// many. The entry goes when the SDK closes the session, whatever closed it.
func (p *Sessions) add(ss *mcp.ServerSession, user string) {
	id := ss.ID()
	if id == "" {
		return
	}
	// Busy until the initialize request ends (doneNew starts the timer).
	e := &sessionEntry{ss: ss, user: user, busy: 1, last: time.Now()}
	e.timer = time.AfterFunc(time.Hour, func() { p.expire(id, e) })
	e.timer.Stop()
	p.mu.Lock()
	if _, dup := p.m[id]; dup {
		p.mu.Unlock()
		return
	}
	p.m[id] = e
	closing := p.trimLocked()
	p.mu.Unlock()
	closeAll(closing)
	go func() {
		ss.Wait()
		p.mu.Lock()
		if p.m[id] == e {
			p.drop(id, e)
		}
		p.mu.Unlock()
	}()
}

// trimLocked drops the sessions idle the longest while there are more
// than max, and returns them for the caller to close once it has released
// the lock. New sessions opened at the same moment can pass the bound when
// none was idle, until one is.
func (p *Sessions) trimLocked() (closing []*mcp.ServerSession) {
	for len(p.m) > p.max {
		oldID := p.oldestIdle()
		if oldID == "" {
			return closing
		}
		old := p.m[oldID]
		p.drop(oldID, old)
		p.evicted++
		if p.evicted == 1 || p.evicted%1000 == 0 {
			p.log.Warn("mcp: too many sessions: closed the one idle the longest (see --mcp-sessions)", "max", p.max, "idle_for", time.Since(old.last).Round(time.Second), "evicted", p.evicted)
		}
		closing = append(closing, old.ss)
	}
	return closing
}

func closeAll(ss []*mcp.ServerSession) {
	for _, s := range ss {
		s.Close()
	}
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
// the session must be one the SDK holds, initialized, and opened by the
// same token id, or it returns nil and the SDK answers (and refuses).
func (p *Sessions) beginFast(id, user string) (*mcp.ServerSession, func()) {
	p.mu.Lock()
	e := p.m[id]
	if e == nil || (e.user != "" && e.user != user) || e.ss.InitializeParams() == nil {
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
	var closing []*mcp.ServerSession
	if e.busy == 0 {
		e.timer.Reset(p.idle)
		closing = p.trimLocked()
	}
	p.mu.Unlock()
	closeAll(closing)
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

func (p *Sessions) drop(id string, e *sessionEntry) {
	e.timer.Stop()
	delete(p.m, id)
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
