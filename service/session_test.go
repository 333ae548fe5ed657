package service

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// fakeClock replaces the session store's clock.
func fakeClock(s *Service) *time.Time {
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s.sessions().now = func() time.Time { return now }
	return &now
}

// A session signs in with a token once and then needs only its id; it
// keeps no secret; ended, unknown and bad-token sessions are refused.
func TestSessionLifecycle(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := storeService(t, fresh(t)(t), Options{})
			secret, tok, err := s.CreateToken(ctx, admin, "ops", []string{"agent:ops"})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.StartSession(ctx, ""); code(err) != CodeUnauthorized {
				t.Errorf("no token: %v, want unauthorized", err)
			}
			if _, _, err := s.StartSession(ctx, "lo_made-up"); code(err) != CodeUnauthorized {
				t.Errorf("a made-up token: %v, want unauthorized", err)
			}
			id, csrf, err := s.StartSession(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			id2, csrf2, err := s.StartSession(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			if len(id) < 40 || len(csrf) < 40 || id == id2 || csrf == csrf2 || id == csrf || strings.Contains(id+csrf, secret) {
				t.Errorf("session ids and CSRF tokens must be long, random and apart from the secret: %q %q %q %q", id, csrf, id2, csrf2)
			}
			p, got, ok := s.Session(ctx, id)
			if !ok || got != csrf || p.TokenID != tok.ID || p.Admin() || !p.CanAgent("ops") || p.CanAgent("dev") {
				t.Fatalf("Session: %+v %q %v", p, got, ok)
			}
			// Nothing kept holds the secret.
			for _, ss := range s.sessions().m {
				if strings.Contains(fmt.Sprintf("%#v", *ss), secret) {
					t.Errorf("a session holds the token's secret: %#v", *ss)
				}
			}
			if _, _, ok := s.Session(ctx, "nope"); ok {
				t.Error("an unknown session id works")
			}
			s.EndSession(id)
			if _, _, ok := s.Session(ctx, id); ok {
				t.Error("an ended session still works")
			}
			if _, _, ok := s.Session(ctx, id2); !ok {
				t.Error("ending one session ended another")
			}
		})
	}
}

// SessionRequest: reads need no CSRF token; anything else needs the
// session's own, or it is refused with code csrf.
func TestSessionRequestCSRF(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{})
	secret, _, _ := s.CreateToken(ctx, admin, "a", []string{"admin"})
	id, csrf, err := s.StartSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := s.StartSession(ctx, secret)
	for _, m := range []string{"GET", "HEAD", "OPTIONS"} {
		if p, _, err := s.SessionRequest(ctx, id, m, ""); err != nil || !p.Admin() {
			t.Errorf("%s without a CSRF token: %+v %v", m, p, err)
		}
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		for _, sent := range []string{"", other, csrf + "x", csrf[:len(csrf)-1]} {
			if _, _, err := s.SessionRequest(ctx, id, m, sent); code(err) != CodeCSRF || !strings.Contains(err.Error(), "reload the page") {
				t.Errorf("%s with CSRF %q: %v, want code csrf saying what to do", m, sent, err)
			}
		}
		if _, _, err := s.SessionRequest(ctx, id, m, csrf); err != nil {
			t.Errorf("%s with the session's CSRF token: %v", m, err)
		}
	}
	if _, _, err := s.SessionRequest(ctx, "gone", "GET", ""); code(err) != CodeUnauthorized || !strings.Contains(err.Error(), "sign in again") {
		t.Errorf("an unknown session: %v", err)
	}
}

// freshStore opens a new SQLite store, closed when the test ends.
func freshStore(t *testing.T) *sqlstore.Store {
	return engines(t)["sqlite"](t)(t)
}

// Idle timeout and absolute lifetime, on a moved clock.
func TestSessionExpiry(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{Sessions: SessionOptions{Idle: time.Hour, Lifetime: 3 * time.Hour}})
	now := fakeClock(s)
	secret, _, _ := s.CreateToken(ctx, admin, "a", []string{"admin"})

	idle, _, _ := s.StartSession(ctx, secret)
	busy, _, _ := s.StartSession(ctx, secret)
	for i := 0; i < 5; i++ { // 2.5 h of use every 30 min
		*now = now.Add(30 * time.Minute)
		if _, _, ok := s.Session(ctx, busy); !ok {
			t.Fatalf("a session used every 30 min ended after %d uses", i)
		}
	}
	if _, _, ok := s.Session(ctx, idle); ok {
		t.Error("a session unused for 2.5 h outlived the 1 h idle timeout")
	}
	*now = now.Add(30 * time.Minute) // 3 h since sign-in
	if _, _, ok := s.Session(ctx, busy); ok {
		t.Error("a busy session outlived the 3 h lifetime")
	}
	if n := len(s.sessions().m); n != 0 {
		t.Errorf("%d expired sessions are still held", n)
	}
}

// At Max sessions, a new one evicts the least recently used.
func TestSessionMax(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{Sessions: SessionOptions{Max: 3}})
	now := fakeClock(s)
	secret, _, _ := s.CreateToken(ctx, admin, "a", []string{"admin"})
	var ids []string
	for i := 0; i < 3; i++ {
		*now = now.Add(time.Minute)
		id, _, err := s.StartSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	*now = now.Add(time.Minute)
	s.Session(ctx, ids[0]) // the first is now the most recently used
	for i := 0; i < 10; i++ {
		*now = now.Add(time.Minute)
		if _, _, err := s.StartSession(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if n := len(s.sessions().m); n > 3 {
			t.Fatalf("%d sessions held, Max is 3", n)
		}
		if i == 0 {
			if _, _, ok := s.Session(ctx, ids[1]); ok {
				t.Error("the least recently used session was not the one evicted")
			}
			if _, _, ok := s.Session(ctx, ids[0]); !ok {
				t.Error("a recently used session was evicted")
			}
		}
	}
}

// countingTokens counts the token listings that reach the store.
type countingTokens struct {
	store.Server
	lists atomic.Int64
}

func (c *countingTokens) Tokens(ctx context.Context) ([]store.Token, error) {
	c.lists.Add(1)
	return c.Server.Tokens(ctx)
}

// Revoking a token ends its sessions: at once when revoked through this
// service, and by another process (the CLI, another instance) as soon as
// the token feed says so, even with a long recheck interval. Checking
// costs one token listing per change or interval, not one per request.
func TestSessionRevoked(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			open := fresh(t)
			st := open(t)
			cnt := &countingTokens{Server: st}
			s := storeService(t, st, Options{Sessions: SessionOptions{Recheck: time.Hour}})
			s.opt.Server = cnt
			cli := open(t)

			secret, tok, _ := s.CreateToken(ctx, admin, "a", []string{"admin"})
			other, otherTok, _ := cli.CreateToken(ctx, "cli", []string{"agent:dev"})
			id, _, err := s.StartSession(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			oid, _, err := s.StartSession(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			before := cnt.lists.Load()
			for i := 0; i < 100; i++ {
				if _, _, ok := s.Session(ctx, id); !ok {
					t.Fatal("a live session refused")
				}
			}
			// One listing for the checks, and one more when the feed's
			// event for the CLI's token (another store handle) arrives
			// during the loop: one per change, not one per request.
			if n := cnt.lists.Load() - before; n > 2 {
				t.Errorf("100 session checks listed the tokens %d times, want at most 2", n)
			}

			if err := s.RevokeToken(ctx, admin, tok.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := s.Session(ctx, id); ok {
				t.Error("a session of a token revoked through this service still works")
			}
			if _, _, ok := s.Session(ctx, oid); !ok {
				t.Error("revoking one token ended another token's session")
			}
			if err := cli.RevokeToken(ctx, otherTok.ID); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, _, ok := s.Session(ctx, oid); !ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a session of a token revoked by another process still works after 10 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// A link token cannot sign in (it works only in its URL).
func TestSessionRefusesLinkToken(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{})
	secret, _, err := s.CreateToken(ctx, admin, "link", []string{"index:ops"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.StartSession(ctx, secret); code(err) != CodeUnauthorized || !strings.Contains(err.Error(), "link token") {
		t.Errorf("a link token signed in: %v", err)
	}
}

// BenchmarkSession: what a session check costs a UI or API request
// (a map lookup; the live tokens are re-read once per Recheck).
func BenchmarkSession(b *testing.B) {
	ctx := context.Background()
	st := engines(b)["sqlite"](b)(b)
	s := storeService(b, st, Options{})
	secret, _, _ := s.CreateToken(ctx, admin, "a", []string{"admin"})
	id, _, err := s.StartSession(ctx, secret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := s.Session(ctx, id); !ok {
			b.Fatal("session refused")
		}
	}
}
