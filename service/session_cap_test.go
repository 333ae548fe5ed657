package service

import (
	"context"
	"testing"
	"time"
)

// TestSessionPerToken: one token's sign-ins replace only that token's own
// sessions, at its per-token cap (and not before: the cap itself is
// kept); at the global cap a token without a session of its own is
// refused, and no other token's session is touched.
func TestSessionPerToken(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{Sessions: SessionOptions{Max: 5, PerToken: 2}})
	now := fakeClock(s)
	mk := func(name, scope string) string {
		secret, _, err := s.CreateToken(ctx, admin, name, []string{scope})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	a, b, c, d := mk("admin", "admin"), mk("coder", "agent:ops"), mk("dev", "agent:dev"), mk("late", "agent:ops")
	start := func(secret string) string {
		t.Helper()
		*now = now.Add(time.Second)
		id, _, err := s.StartSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	alive := func(id string) bool {
		_, _, ok := s.Session(ctx, id)
		return ok
	}
	adminSess := start(a)
	b1, b2 := start(b), start(b)
	if !alive(b1) || !alive(b2) || !alive(adminSess) {
		t.Fatal("a session was ended at exactly the per-token cap")
	}
	// Signing in again and again with one token: only its own go.
	for range 1000 {
		start(b)
	}
	if !alive(adminSess) {
		t.Fatal("another token's sign-ins ended the admin's session")
	}
	if alive(b1) || alive(b2) {
		t.Error("the token's own oldest sessions were kept past its cap")
	}
	if n := len(s.sessions().m); n != 3 {
		t.Errorf("%d sessions held, want 3 (1 admin, 2 coder)", n)
	}
	// The global cap: 5 held, the fifth token has none to replace.
	c1, c2 := start(c), start(c)
	if _, _, err := s.StartSession(ctx, d); code(err) != CodeTooManySessions {
		t.Fatalf("a sign-in past the global cap without a session of its own: %v, want %s", err, CodeTooManySessions)
	}
	for _, id := range []string{adminSess, c1, c2} {
		if !alive(id) {
			t.Error("a sign-in refused at the global cap ended a session")
		}
	}
	// A token under its own cap with a session replaces its own.
	admin2 := start(a)
	if alive(adminSess) || !alive(admin2) || !alive(c1) || !alive(c2) {
		t.Error("at the global cap, the admin's new session did not replace its own old one alone")
	}
	if n := len(s.sessions().m); n != 5 {
		t.Errorf("%d sessions held, want 5", n)
	}
	// The defaults.
	if o := (SessionOptions{}).WithDefaults(); o.PerToken != DefaultSessionPerToken || o.Max != DefaultSessionMax {
		t.Errorf("defaults: %+v", o)
	}
}

// TestWatchTokenRevoked: a watch on a token is told within a second of
// its revocation, through this service or directly in the store (another
// instance, seen by the token feed); watches of other tokens and stopped
// watches are not.
func TestWatchTokenRevoked(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st := fresh(t)(t)
			s := storeService(t, st, Options{})
			_, ta, _ := s.CreateToken(ctx, admin, "a", []string{"agent:ops"})
			_, tb, _ := s.CreateToken(ctx, admin, "b", []string{"agent:ops"})
			_, tc, _ := s.CreateToken(ctx, admin, "c", []string{"agent:ops"})
			goneA, goneB, goneStopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
			defer s.WatchToken(ta.ID, func() { close(goneA) })()
			defer s.WatchToken(tb.ID, func() { close(goneB) })()
			stop := s.WatchToken(tc.ID, func() { close(goneStopped) })
			stop()
			if err := s.RevokeToken(ctx, admin, ta.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-goneA:
			case <-time.After(time.Second):
				t.Fatal("a watch was not told of its token's revocation within a second")
			}
			// Another instance revokes: the store's feed tells this one.
			if err := st.RevokeToken(ctx, tc.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-goneStopped:
				t.Error("a stopped watch was told")
			case <-goneB:
				t.Error("a watch was told of another token's revocation")
			case <-time.After(1500 * time.Millisecond):
			}
			if err := st.RevokeToken(ctx, tb.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-goneB:
			case <-time.After(time.Second):
				t.Fatal("a token revoked in the store (another instance) did not end its watch within a second")
			}
		})
	}
}
