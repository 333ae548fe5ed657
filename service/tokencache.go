package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// TokenCacheOptions tune the cache of token lookups that spares every
// token-authenticated request a database query. Zero fields take the
// defaults.
type TokenCacheOptions struct {
	// TTL is how long a lookup is trusted without asking the store again.
	// Creations and revocations reach the cache at once on this instance
	// and through the store's token feed (TokenChanges) from the others,
	// within the feed's delay (PostgreSQL: milliseconds; SQLite: a poll,
	// 200 ms); the TTL bounds the delay should a notification be lost. A
	// token in use is still looked up (and its last use recorded) once per
	// TTL. Default DefaultTokenCacheTTL; negative: no cache, every request
	// asks the store.
	TTL time.Duration
	// Size bounds the tokens remembered (default DefaultTokenCacheSize);
	// past it an arbitrary entry makes room.
	Size int
	// Misses bounds the unknown or revoked secrets remembered, so that a
	// client retrying with a revoked token costs no query per request
	// while made-up secrets cannot grow the cache (default
	// DefaultTokenCacheMisses).
	Misses int
}

// Token cache defaults.
const (
	DefaultTokenCacheTTL    = time.Second
	DefaultTokenCacheSize   = 10_000
	DefaultTokenCacheMisses = 1_000
)

// tokenCache remembers what the store answered for a secret, keyed by the
// secret's sha256 (the cache holds no secret), for TTL.
type tokenCache struct {
	srv store.Server
	ttl time.Duration
	log *slog.Logger
	max struct{ hits, misses int }

	// mu is read-locked for the answers already cached, which is every
	// request but a token's first in TTL: requests then never wait for
	// each other (on a busy machine, a request preempted while holding a
	// mutex made the others queue behind it).
	mu sync.RWMutex
	// gen moves on every invalidation: a lookup that began before one
	// caches nothing, since its answer may predate the change.
	gen uint64
	// changed is closed at the next invalidation (then replaced), for
	// those that act on token changes (WatchToken).
	changed  chan struct{}
	hits     map[[32]byte]cachedToken
	misses   map[[32]byte]time.Time
	inflight map[[32]byte]*tokenLookup

	stop context.CancelFunc
	done chan struct{}
	// listening is closed once the token feed listens (tests wait for it).
	listening chan struct{}
}

type cachedToken struct {
	tok *store.Token
	at  time.Time
}

// tokenLookup is one store query that concurrent requests for the same
// secret wait for, rather than each asking the store.
type tokenLookup struct {
	done chan struct{}
	tok  *store.Token
	err  error
}

func newTokenCache(srv store.Server, opt TokenCacheOptions, log *slog.Logger) *tokenCache {
	c := &tokenCache{srv: srv, ttl: opt.TTL, log: log, done: make(chan struct{}), listening: make(chan struct{})}
	if c.ttl == 0 {
		c.ttl = DefaultTokenCacheTTL
	}
	c.max.hits, c.max.misses = opt.Size, opt.Misses
	if c.max.hits <= 0 {
		c.max.hits = DefaultTokenCacheSize
	}
	if c.max.misses <= 0 {
		c.max.misses = DefaultTokenCacheMisses
	}
	c.changed = make(chan struct{})
	c.hits = map[[32]byte]cachedToken{}
	c.misses = map[[32]byte]time.Time{}
	c.inflight = map[[32]byte]*tokenLookup{}
	if srv == nil || c.ttl < 0 {
		close(c.done)
		c.stop = func() {}
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	// The feed is subscribed in the background, so that New never waits
	// for a database; until it listens, the TTL bounds staleness.
	go func() {
		defer close(c.done)
		ch, err := srv.TokenChanges(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("tokens created or revoked by other instances take effect here within the token cache's TTL only", "ttl", c.ttl, "err", err)
			}
			return
		}
		// Whatever changed before the feed listened is dropped too.
		c.invalidate()
		close(c.listening)
		for range ch {
			c.invalidate()
		}
	}()
	return c
}

func (c *tokenCache) close() {
	c.stop()
	<-c.done
}

// invalidate forgets every answer, at once. Lookups in flight are
// forgotten too: a request from now on starts its own rather than wait
// for an answer that may predate the change.
func (c *tokenCache) invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.hits)
	clear(c.misses)
	clear(c.inflight)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// changes returns a channel closed at the next invalidation.
func (c *tokenCache) changes() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// size returns how many answers are cached (tests).
func (c *tokenCache) size() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.hits), len(c.misses)
}

// lookup is store.Server.TokenBySecret through the cache.
func (c *tokenCache) lookup(ctx context.Context, secret string) (*store.Token, error) {
	if c.ttl < 0 {
		return c.srv.TokenBySecret(ctx, secret)
	}
	key := secretKey(secret)
	now := time.Now()
	c.mu.RLock()
	tok, err, ok := c.cached(key, now)
	c.mu.RUnlock()
	if ok {
		return tok, err
	}
	// Not cached (or expired): asked again under the write lock, which
	// an invalidation may have passed meanwhile.
	c.mu.Lock()
	if tok, err, ok := c.cached(key, now); ok {
		c.mu.Unlock()
		return tok, err
	}
	if l := c.inflight[key]; l != nil {
		c.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if isContextErr(l.err) && ctx.Err() == nil {
			// The request that asked gave up; this one has not.
			return c.srv.TokenBySecret(ctx, secret)
		}
		return l.tok, l.err
	}
	gen := c.gen
	l := &tokenLookup{done: make(chan struct{})}
	c.inflight[key] = l
	c.mu.Unlock()

	l.tok, l.err = c.srv.TokenBySecret(ctx, secret)
	notFound := l.err != nil && store.ErrorCode(l.err) == store.NotFound
	if notFound {
		l.err = errUnknownToken
	}

	c.mu.Lock()
	if c.inflight[key] == l {
		delete(c.inflight, key)
	}
	// An answer that may predate a change is returned to the requests
	// that asked before it, never cached.
	if c.gen == gen {
		switch {
		case l.err == nil:
			makeRoom(c.hits, c.max.hits)
			c.hits[key] = cachedToken{tok: l.tok, at: now}
		case notFound:
			makeRoom(c.misses, c.max.misses)
			c.misses[key] = now
		}
	}
	c.mu.Unlock()
	close(l.done)
	return l.tok, l.err
}

// makeRoom deletes an arbitrary entry of m when it holds max.
func makeRoom[V any](m map[[32]byte]V, max int) {
	if len(m) < max {
		return
	}
	for k := range m {
		delete(m, k)
		return
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// cached is the answer kept for key, if one is and is younger than the
// TTL at now (ok); c.mu is held, read or write.
func (c *tokenCache) cached(key [sha256.Size]byte, now time.Time) (tok *store.Token, err error, ok bool) {
	if e, hit := c.hits[key]; hit && now.Sub(e.at) < c.ttl {
		return e.tok, nil, true
	}
	if at, miss := c.misses[key]; miss && now.Sub(at) < c.ttl {
		return nil, errUnknownToken, true
	}
	return nil, nil, false
}

// errUnknownToken is the store's not_found for a secret, as the cache
// answers it.
var errUnknownToken = &store.Error{Code: store.NotFound, Field: "token", Message: "no such token (or it was revoked)"}

// secretKey is the cache's key for a secret: its SHA-256. A secret of up
// to 128 bytes (every token loadout makes) is copied on the stack, not
// the heap: a []byte conversion allocates past 32 bytes, once per
// request.
func secretKey(secret string) [sha256.Size]byte {
	var buf [128]byte
	if len(secret) <= len(buf) {
		n := copy(buf[:], secret)
		return sha256.Sum256(buf[:n])
	}
	return sha256.Sum256([]byte(secret))
}
