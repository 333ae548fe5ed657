package service

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store"
)

// gatedServer holds the first token lookup after it has read the store,
// until gate is closed: a lookup that read a token just before it was
// revoked, and answers late.
type gatedServer struct {
	store.Server
	calls   atomic.Int64
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedServer) TokenBySecret(ctx context.Context, secret string) (*store.Token, error) {
	tok, err := g.Server.TokenBySecret(ctx, secret)
	if g.calls.Add(1) == 1 {
		close(g.entered)
		<-g.gate
	}
	return tok, err
}

// TestTokenLookupRacingRevocation: a lookup that began before a
// revocation answers only the request that asked; a request that comes
// after the revocation does not wait for it (nor take its answer), and
// its answer is never cached.
func TestTokenLookupRacingRevocation(t *testing.T) {
	st := engines(t)["sqlite"](t)(t)
	ctx := context.Background()
	secret, tok, err := st.CreateToken(ctx, "ci", []string{"agent:ops"})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedServer{Server: st, entered: make(chan struct{}), gate: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(g.gate)
		}
	}
	defer release()
	c := newTokenCache(g, TokenCacheOptions{TTL: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer c.close()
	select {
	case <-c.listening:
	case <-testutil.After(t):
		t.Fatal("the token feed is not listening")
	}
	type answer struct {
		tok *store.Token
		err error
	}
	first := make(chan answer, 1)
	go func() {
		tok, err := c.lookup(ctx, secret)
		first <- answer{tok, err}
	}()
	<-g.entered // the first lookup has read the token, still live
	if err := st.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	c.invalidate() // as RevokeToken does, before it returns

	second := make(chan answer, 1)
	go func() {
		tok, err := c.lookup(ctx, secret)
		second <- answer{tok, err}
	}()
	select {
	case a := <-second:
		if store.ErrorCode(a.err) != store.NotFound {
			t.Errorf("a lookup after the revocation answered %+v, %v: want not found", a.tok, a.err)
		}
	case <-testutil.After(t):
		t.Fatal("a lookup after the revocation waits for one that began before it")
	}
	release()
	if a := <-first; a.err != nil || a.tok == nil {
		t.Fatalf("the lookup that asked first: %+v %v", a.tok, a.err)
	}
	// The late answer (live) was not cached over the newer one.
	for range 3 {
		if got, err := c.lookup(ctx, secret); store.ErrorCode(err) != store.NotFound {
			t.Fatalf("after the late answer came in, the revoked token resolves: %+v %v", got, err)
		}
	}
	// The late one, one after the revocation, then cached (the feed,
	// seeing the revocation, may drop the cache once more).
	if n := g.calls.Load(); n < 2 || n > 3 {
		t.Errorf("%d store lookups, want 2 (at most 3)", n)
	}
}
