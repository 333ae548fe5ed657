package httpapi

import (
	"log/slog"
	"net"
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
	// Logger says when connections are refused (at most once every 10 s,
	// with the count since the last line).
	Logger *slog.Logger
}

// LimitListener returns ln holding at most lim's connections. A new
// connection over a bound is closed at once, before anything is read:
// the client sees the connection close, and the server spends no file
// descriptor on it for longer than the accept. Closing a connection
// frees its place.
//
// The state kept per client is one counter per address with an open
// connection, so it is bounded by Max.
func LimitListener(ln net.Listener, lim ConnLimits) net.Listener {
	if lim.Max <= 0 && lim.MaxPerIP <= 0 {
		return ln
	}
	if lim.Logger == nil {
		lim.Logger = slog.Default()
	}
	return &limitListener{Listener: ln, lim: lim, perIP: map[netip.Addr]int{}}
}

type limitListener struct {
	net.Listener
	lim ConnLimits

	mu       sync.Mutex
	open     int
	perIP    map[netip.Addr]int
	refused  int // since the last log line
	lastLog  time.Time
	refusals int64 // ever, for tests
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		l.mu.Lock()
		over := ""
		switch {
		case l.lim.Max > 0 && l.open >= l.lim.Max:
			over = "maxConns"
		case l.lim.MaxPerIP > 0 && ip.IsValid() && l.perIP[ip] >= l.lim.MaxPerIP:
			over = "maxConnsPerIP"
		}
		if over != "" {
			l.refusals++
			l.refused++
			var log bool
			var n int
			if now := time.Now(); now.Sub(l.lastLog) >= 10*time.Second {
				log, n, l.refused, l.lastLog = true, l.refused, 0, now
			}
			open, fromIP := l.open, l.perIP[ip]
			l.mu.Unlock()
			c.Close()
			if log {
				l.lim.Logger.Warn("connections refused: over a connection limit (see --max-conns and --max-conns-per-ip)",
					"limit", over, "refused", n, "open", open, "client", ip.String(), "client_open", fromIP,
					"max_conns", l.lim.Max, "max_conns_per_ip", l.lim.MaxPerIP)
			}
			continue
		}
		l.open++
		if ip.IsValid() {
			l.perIP[ip]++
		}
		l.mu.Unlock()
		return &limitConn{Conn: c, l: l, ip: ip}, nil
	}
}

func (l *limitListener) release(ip netip.Addr) {
	l.mu.Lock()
	l.open--
	if ip.IsValid() {
		if n := l.perIP[ip] - 1; n > 0 {
			l.perIP[ip] = n
		} else {
			delete(l.perIP, ip)
		}
	}
	l.mu.Unlock()
}

// Stats reports the open connections, the client addresses holding them
// and the connections refused so far.
func (l *limitListener) Stats() (open, clients int, refused int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, len(l.perIP), l.refusals
}

func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	ip   netip.Addr
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.ip) })
	return err
}
