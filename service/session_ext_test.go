package service

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// A session signed in through an identity provider: checked by its
// Check once Every has passed (not against the live tokens), its scopes
// replaced by the check's, ended (and audited) when the check says the
// person holds no role, kept but refused while the check cannot tell;
// capped per person like a token's; signed out with an audit record.
func TestExternalSession(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := storeService(t, st, Options{Sessions: SessionOptions{PerToken: 2}})
	ctx := context.Background()
	now := fakeClock(s)

	var calls int
	var answer struct {
		scopes []string
		ok     bool
		err    error
	}
	es := ExternalSession{
		Principal: Principal{TokenID: "oidc:u1", Name: "alice@corp.test", Scopes: []string{"admin"}},
		Every:     time.Minute, Method: "oidc",
		Check: func(context.Context) ([]string, bool, error) {
			calls++
			return answer.scopes, answer.ok, answer.err
		},
	}
	if _, _, err := s.StartExternalSession(ctx, ExternalSession{Principal: Principal{TokenID: "oidc:x"}}); code(err) != CodeUnauthorized {
		t.Errorf("an external session without scopes: %v", err)
	}
	id, csrf, err := s.StartExternalSession(ctx, es)
	if err != nil {
		t.Fatal(err)
	}
	// Not a token: the live tokens (none exist) do not end it.
	p, got, ok := s.Session(ctx, id)
	if !ok || got != csrf || !p.Admin() || p.Name != "alice@corp.test" || calls != 0 {
		t.Fatalf("a fresh external session: %+v %v, %d checks", p, ok, calls)
	}
	// Before Every: no check; at Every: checked, scopes replaced.
	*now = now.Add(59 * time.Second)
	s.Session(ctx, id)
	if calls != 0 {
		t.Errorf("checked before Every: %d", calls)
	}
	*now = now.Add(time.Second)
	answer.scopes, answer.ok = []string{"viewer"}, true
	p, _, ok = s.Session(ctx, id)
	if !ok || calls != 1 || p.Admin() || !slices.Equal(p.Scopes, []string{"viewer"}) {
		t.Fatalf("after the check: %+v %v, %d checks", p, ok, calls)
	}
	if p, _, _ := s.Session(ctx, id); calls != 1 || !slices.Equal(p.Scopes, []string{"viewer"}) {
		t.Errorf("the checked scopes are kept until the next check: %+v, %d checks", p, calls)
	}
	// The provider cannot tell: refused, kept, asked again next time.
	*now = now.Add(time.Minute)
	answer.err = errors.New("provider down")
	if _, _, ok := s.Session(ctx, id); ok || calls != 2 {
		t.Errorf("a failed check: ok %v, %d checks", ok, calls)
	}
	answer.err = nil
	if _, _, ok := s.Session(ctx, id); !ok || calls != 3 {
		t.Errorf("after the provider came back: ok %v, %d checks", ok, calls)
	}
	// No role any more: ended, for good.
	*now = now.Add(time.Minute)
	answer.scopes, answer.ok = nil, false
	if _, _, ok := s.Session(ctx, id); ok {
		t.Error("a session whose person lost every role still works")
	}
	answer.scopes, answer.ok = []string{"admin"}, true
	if _, _, ok := s.Session(ctx, id); ok {
		t.Error("an ended session came back")
	}
	// Per person: a third sign-in replaces the least recently used.
	es.Check = nil
	a, _, _ := s.StartExternalSession(ctx, es)
	*now = now.Add(time.Second)
	b, _, _ := s.StartExternalSession(ctx, es)
	*now = now.Add(time.Second)
	c, _, _ := s.StartExternalSession(ctx, es)
	if _, _, ok := s.Session(ctx, a); ok {
		t.Error("the person's oldest session survived a third sign-in")
	}
	for _, x := range []string{b, c} {
		if _, _, ok := s.Session(ctx, x); !ok {
			t.Error("a newer session of the person ended")
		}
	}
	// A nil Check is never asked; the session still ends at its idle limit.
	*now = now.Add(DefaultSessionIdle)
	if _, _, ok := s.Session(ctx, c); ok {
		t.Error("an external session outlived the idle limit")
	}
	s.SignOut(ctx, es.Principal, b)
	if _, _, ok := s.Session(ctx, b); ok {
		t.Error("signed out, still works")
	}
	rs, err := st.ListAudit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, r := range rs {
		if r.ActorToken != "oidc:u1" {
			t.Errorf("record %+v: actor token", r)
		}
		actions = append(actions, r.Action+":"+r.Detail)
	}
	want := []string{"signout:oidc", "signin:oidc", "signin:oidc", "signin:oidc", "signout:oidc: the claims no longer map to a role", "signin:oidc"}
	if !slices.Equal(actions, want) {
		t.Errorf("audit = %q\nwant %q", actions, want)
	}
}

// BenchmarkExternalSession: a request of a signed-in person between
// re-checks (the common case), against a token session's.
func BenchmarkExternalSession(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "x.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	s := storeService(b, st, Options{})
	ctx := context.Background()
	id, _, err := s.StartExternalSession(ctx, ExternalSession{Principal: Principal{TokenID: "oidc:u1", Name: "a", Scopes: []string{"viewer"}}, Every: time.Hour,
		Check: func(context.Context) ([]string, bool, error) { return []string{"viewer"}, true, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := s.Session(ctx, id); !ok {
			b.Fatal("refused")
		}
	}
}
