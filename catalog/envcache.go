package catalog

import (
	"sync"
	"weak"
)

// DefaultEnvelopeCache is the default bound of Options.EnvelopeCache:
// 64 MiB, about 18,000 envelopes of 3.6 KB. At 32 MiB, the 10,000
// envelopes of bench/cmd/gentree's tree with findings (36 MB) did not
// fit, and loads spread over every skill missed at nearly every load (a
// round-robin is the worst case of CLOCK, as of LRU): each rendered its
// envelope again, 3.6 KB of garbage, and the HTTP route then compared
// its whole text with the one its encoded body was made from. The HTTP
// route keeps the text of every envelope it encoded (httpapi's load
// cache), so over HTTP the larger bound holds no more in memory.
const DefaultEnvelopeCache = 64 << 20

// envCache bounds the envelopes that loads keep rendered. An entry whose
// body cannot change (an inline entry, or a skill whose body is kept)
// renders its envelope once and serves it until the cache needs the room:
// past the bound, the envelopes not loaded since the clock hand last
// passed them are dropped (the CLOCK approximation of least recently
// used), and rendered again on their next load. Without a bound, loading
// every skill of a large catalog once would keep an envelope per skill
// per agent for as long as the catalog lives.
type envCache struct {
	max int64 // <= 0: no envelope is kept

	mu    sync.Mutex
	bytes int64
	ring  []envSlot
	hand  int
}

type envSlot struct {
	e weak.Pointer[Entry]
	n int64
}

// envOf is the entry's kept envelope, if any.
func envOf(e *Entry) (string, bool) {
	p := e.env.Load()
	if p == nil {
		return "", false
	}
	if !e.envUsed.Load() {
		e.envUsed.Store(true)
	}
	return *p, true
}

// keep keeps env as e's envelope, making room for it.
func (c *envCache) keep(e *Entry, env string) {
	n := int64(len(env))
	if c == nil || n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !e.env.CompareAndSwap(nil, &env) {
		return // another load kept it first
	}
	c.ring = append(c.ring, envSlot{e: weak.Make(e), n: n})
	c.bytes += n
	// Each pass of the hand clears the marks it meets, so a sweep ends
	// within two turns of the ring.
	for c.bytes > c.max && len(c.ring) > 0 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		s := c.ring[c.hand]
		old := s.e.Value()
		if old != nil && old != e && old.envUsed.Load() {
			old.envUsed.Store(false)
			c.hand++
			continue
		}
		if old == e {
			c.hand++
			if len(c.ring) == 1 {
				break
			}
			continue
		}
		if old != nil {
			old.env.Store(nil)
		}
		c.bytes -= s.n
		last := len(c.ring) - 1
		c.ring[c.hand] = c.ring[last]
		c.ring[last] = envSlot{}
		c.ring = c.ring[:last]
	}
}
