package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// ConnLimits bound the connections a listener keeps open. Zero means no
// bound.
type ConnLimits struct {
	// Max bounds every open connection together.
	Max int
	// MaxPerIP bounds the connections from one client address. Keep it
	// under Max, so that one client holding its share leaves room for
	// others (a health check, an operator's curl).
	MaxPerIP int
	// Logger says when connections are refused or closed to make room (at
	// most once every 10 s each, with the count since the last line).
	Logger *slog.Logger
}

// LimitListener returns ln holding at most lim's connections.
//
// A connection that arrives over a bound takes the place of one that is
// doing nothing, once the limiter knows which those are (Track): the
// connection of that address (for MaxPerIP) or of any address (for Max)
// that has waited longest without sending a complete request header, or,
// when none has, the one idle the longest between requests. That one is
// closed. Only when every connection is in a request (a handler running,
// a stream open) is the new one closed at once, before anything is read.
//
// Why evict rather than refuse: on loopback, and behind a proxy, every
// client has the same address, so a per-address bound alone lets one
// client that opens connections and sends nothing (or half a request
// line) hold every place until ReadHeaderTimeout, and everyone else is
// refused. With eviction such connections push out only each other: a
// client that sends its request at once is in its handler long before the
// MaxPerIP newer connections it would take to push it out arrive, and a
// connection that completed a request is pushed out only when no
// connection waits for its first one.
//
// The state kept is one entry per open connection and one per address
// with an open connection, so it is bounded by Max.
func LimitListener(ln net.Listener, lim ConnLimits) *ConnLimiter {
	if lim.Logger == nil {
		lim.Logger = slog.Default()
	}
	return &ConnLimiter{Listener: ln, lim: lim, perIP: map[netip.Addr]*ipConns{}}
}

// ConnLimiter is LimitListener's listener.
type ConnLimiter struct {
	net.Listener
	lim ConnLimits

	mu      sync.Mutex
	tracked bool // Track was called: handlers say when a request starts
	open    int
	perIP   map[netip.Addr]*ipConns
	// The connections that may be closed to make room, oldest first:
	// those that have not sent a complete request header yet, and those
	// idle between requests.
	fresh, idle connList

	refusedLog, evictedLog logEvery
	refusals, evictions    int64 // ever, for tests
}

type ipConns struct {
	n           int
	fresh, idle connList
}

// connList is a list of connections, oldest first, linked through the
// connections themselves (connLinks): a request moving its connection
// from idle to busy and back allocates nothing (container/list allocated
// an element per list per move: two per request). A connection is on at
// most one global list (its g links) and one of its address's (ip).
type connList struct{ head, tail *limitConn }

type connLinks struct{ prev, next *limitConn }

// links are c's links of the global lists, or of its address's.
func (c *limitConn) links(perIP bool) *connLinks {
	if perIP {
		return &c.addrLinks
	}
	return &c.allLinks
}

func (q *connList) pushBack(c *limitConn, perIP bool) {
	ln := c.links(perIP)
	ln.prev, ln.next = q.tail, nil
	if q.tail != nil {
		q.tail.links(perIP).next = c
	} else {
		q.head = c
	}
	q.tail = c
}

func (q *connList) remove(c *limitConn, perIP bool) {
	ln := c.links(perIP)
	if ln.prev != nil {
		ln.prev.links(perIP).next = ln.next
	} else {
		q.head = ln.next
	}
	if ln.next != nil {
		ln.next.links(perIP).prev = ln.prev
	} else {
		q.tail = ln.prev
	}
	ln.prev, ln.next = nil, nil
}

// logEvery counts events and says when a line is due (every 10 s).
type logEvery struct {
	n    int
	last time.Time
}

func (e *logEvery) add() (log bool, n int) {
	e.n++
	if now := time.Now(); now.Sub(e.last) >= 10*time.Second {
		n, e.n, e.last = e.n, 0, now
		return true, n
	}
	return false, 0
}

// A connection's state, as far as eviction cares.
type connState uint8

const (
	connFresh connState = iota // no complete request header yet
	connBusy                   // in a request (or hijacked)
	connIdle                   // between requests
	connGone                   // closed or evicted: its place is free
)

type limitConn struct {
	net.Conn
	l  *ConnLimiter
	ip netip.Addr

	// Under l.mu.
	state               connState
	listed              bool // on a fresh or an idle list (state says which)
	allLinks, addrLinks connLinks
}

// Track makes hs tell the limiter which of its connections are in a
// request, so that a connection over a bound replaces one that is not
// rather than being refused (see LimitListener). It sets hs.ConnState and
// hs.ConnContext (calling those already set) and wraps hs.Handler; call
// it before hs.Serve(l). Without it, every connection counts as busy.
func (l *ConnLimiter) Track(hs *http.Server) {
	l.mu.Lock()
	l.tracked = true
	l.mu.Unlock()
	prevState, prevCtx := hs.ConnState, hs.ConnContext
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		if lc, ok := c.(*limitConn); ok && lc.l == l {
			switch s {
			case http.StateIdle:
				l.set(lc, connIdle)
			case http.StateHijacked:
				l.set(lc, connBusy)
			}
		}
		if prevState != nil {
			prevState(c, s)
		}
	}
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		if lc, ok := c.(*limitConn); ok && lc.l == l {
			ctx = context.WithValue(ctx, limitConnKey{}, lc)
		}
		return ctx
	}
	next := hs.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request's header has been read: its connection is busy
		// until the server has written the response (StateIdle).
		if lc, ok := r.Context().Value(limitConnKey{}).(*limitConn); ok {
			l.set(lc, connBusy)
		}
		next.ServeHTTP(w, r)
	})
}

type limitConnKey struct{}

// set moves a connection to state s, keeping the eviction lists in step.
func (l *ConnLimiter) set(c *limitConn, s connState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state == connGone || c.state == s {
		return
	}
	l.unlist(c)
	c.state = s
	l.list(c)
}

// list puts c at the back of its state's lists; l.mu is held.
func (l *ConnLimiter) list(c *limitConn) {
	ipc := l.perIP[c.ip]
	switch c.state {
	case connFresh:
		l.fresh.pushBack(c, false)
		ipc.fresh.pushBack(c, true)
		c.listed = true
	case connIdle:
		l.idle.pushBack(c, false)
		ipc.idle.pushBack(c, true)
		c.listed = true
	}
}

// unlist takes c out of its state's lists; l.mu is held.
func (l *ConnLimiter) unlist(c *limitConn) {
	if !c.listed {
		return
	}
	ipc := l.perIP[c.ip]
	switch c.state {
	case connFresh:
		l.fresh.remove(c, false)
		ipc.fresh.remove(c, true)
	case connIdle:
		l.idle.remove(c, false)
		ipc.idle.remove(c, true)
	}
	c.listed = false
}

// victim is the connection to close for a new one: the oldest that has
// not sent a request header, else the one idle the longest; nil when all
// are busy.
func victim(fresh, idle *connList) *limitConn {
	if fresh.head != nil {
		return fresh.head
	}
	return idle.head
}

func (l *ConnLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		l.mu.Lock()
		over := ""
		var evict *limitConn
		ipc := l.perIP[ip]
		switch {
		case l.lim.MaxPerIP > 0 && ip.IsValid() && ipc != nil && ipc.n >= l.lim.MaxPerIP:
			// Evicting one of this address's frees a global place too.
			over = "maxConnsPerIP"
			evict = victim(&ipc.fresh, &ipc.idle)
		case l.lim.Max > 0 && l.open >= l.lim.Max:
			over = "maxConns"
			evict = victim(&l.fresh, &l.idle)
		}
		if over != "" && evict == nil {
			l.refusals++
			log, n := l.refusedLog.add()
			open, fromIP := l.open, 0
			if ipc != nil {
				fromIP = ipc.n
			}
			l.mu.Unlock()
			c.Close()
			if log {
				l.lim.Logger.Warn("connections refused: over a connection limit, every connection in a request (see --max-conns and --max-conns-per-ip)",
					"limit", over, "refused", n, "open", open, "client", ip.String(), "client_open", fromIP,
					"max_conns", l.lim.Max, "max_conns_per_ip", l.lim.MaxPerIP)
			}
			continue
		}
		var log bool
		var n int
		if evict != nil {
			l.releaseLocked(evict)
			l.evictions++
			log, n = l.evictedLog.add()
		}
		if ipc = l.perIP[ip]; ipc == nil {
			ipc = &ipConns{}
			l.perIP[ip] = ipc
		}
		l.open++
		ipc.n++
		lc := &limitConn{Conn: c, l: l, ip: ip, state: connBusy}
		if l.tracked {
			lc.state = connFresh
			l.list(lc)
		}
		open := l.open
		l.mu.Unlock()
		if evict != nil {
			evict.Conn.Close()
			if log {
				l.lim.Logger.Warn("connections closed to make room: over a connection limit, the one waiting longest for a request was closed (see --max-conns and --max-conns-per-ip)",
					"limit", over, "closed", n, "open", open, "client", ip.String(), "closed_client", evict.ip.String(),
					"max_conns", l.lim.Max, "max_conns_per_ip", l.lim.MaxPerIP)
			}
		}
		return lc, nil
	}
}

// releaseLocked frees c's place; l.mu is held.
func (l *ConnLimiter) releaseLocked(c *limitConn) {
	if c.state == connGone {
		return
	}
	l.unlist(c)
	c.state = connGone
	l.open--
	if ipc := l.perIP[c.ip]; ipc != nil {
		if ipc.n--; ipc.n <= 0 {
			delete(l.perIP, c.ip)
		}
	}
}

// Stats reports the open connections, the client addresses holding them,
// and the connections refused and closed to make room so far.
func (l *ConnLimiter) Stats() (open, clients int, refused, evicted int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, len(l.perIP), l.refusals, l.evictions
}

// remoteIP is the connection's client address, or the zero Addr (one
// shared bucket) when it has none (a Unix socket).
func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}
