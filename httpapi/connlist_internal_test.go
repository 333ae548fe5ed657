package httpapi

import (
	"net/netip"
	"testing"
)

// The limiter's lists keep connections oldest first through every move,
// each on its own lists only, and a request moving its connection from
// idle to busy and back allocates nothing.
func TestConnListOrderAndAllocs(t *testing.T) {
	l := &ConnLimiter{perIP: map[netip.Addr]*ipConns{}}
	a, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	l.perIP[a], l.perIP[b] = &ipConns{}, &ipConns{}
	c1 := &limitConn{l: l, ip: a, state: connBusy}
	c2 := &limitConn{l: l, ip: b, state: connBusy}
	c3 := &limitConn{l: l, ip: a, state: connBusy}
	order := func(q *connList, perIP bool) []*limitConn {
		var out []*limitConn
		for c := q.head; c != nil; c = c.links(perIP).next {
			out = append(out, c)
		}
		// Walked back from the tail, the same in reverse.
		i := len(out) - 1
		for c := q.tail; c != nil; c = c.links(perIP).prev {
			if i < 0 || out[i] != c {
				t.Fatalf("the list's back links disagree with its forward ones")
			}
			i--
		}
		return out
	}
	same := func(what string, got []*limitConn, want ...*limitConn) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d connections, want %d", what, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: connection %d is not the one expected", what, i)
			}
		}
	}
	for _, c := range []*limitConn{c1, c2, c3} {
		l.set(c, connIdle)
	}
	same("idle", order(&l.idle, false), c1, c2, c3)
	same("idle of 127.0.0.1", order(&l.perIP[a].idle, true), c1, c3)
	same("idle of 127.0.0.2", order(&l.perIP[b].idle, true), c2)
	if v := victim(&l.fresh, &l.idle); v != c1 {
		t.Fatal("the victim is not the connection idle the longest")
	}
	// c1 takes a request and goes idle again: now the newest.
	l.set(c1, connBusy)
	same("idle, c1 busy", order(&l.idle, false), c2, c3)
	same("idle of 127.0.0.1, c1 busy", order(&l.perIP[a].idle, true), c3)
	l.set(c1, connIdle)
	same("idle, c1 back", order(&l.idle, false), c2, c3, c1)
	same("idle of 127.0.0.1, c1 back", order(&l.perIP[a].idle, true), c3, c1)
	if v := victim(&l.perIP[a].fresh, &l.perIP[a].idle); v != c3 {
		t.Fatal("the victim of 127.0.0.1 is not its connection idle the longest")
	}
	// The middle, the tail, then the last one out.
	l.set(c3, connBusy)
	l.set(c1, connBusy)
	l.set(c2, connBusy)
	same("idle, all busy", order(&l.idle, false))
	same("idle of 127.0.0.1, all busy", order(&l.perIP[a].idle, true))
	if victim(&l.fresh, &l.idle) != nil {
		t.Fatal("a victim while every connection is busy")
	}
	if n := testing.AllocsPerRun(100, func() { l.set(c1, connIdle); l.set(c1, connBusy) }); n != 0 {
		t.Errorf("a request's moves allocate %.0f times, want 0", n)
	}
}
