package service

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/pgtest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// These tests run services over real stores: SQLite files, and the
// PostgreSQL of LOADOUT_TEST_POSTGRES (scripts/pg.sh) when it is set.

// engines returns, per engine, a function that makes a fresh database and
// returns a function opening another instance of it (closed by Cleanup).
func engines(t testing.TB) map[string]func(t testing.TB) func(t testing.TB) *sqlstore.Store {
	m := map[string]func(t testing.TB) func(t testing.TB) *sqlstore.Store{
		"sqlite": func(t testing.TB) func(t testing.TB) *sqlstore.Store {
			path := filepath.Join(t.TempDir(), "shared.db")
			return func(t testing.TB) *sqlstore.Store {
				s, err := sqlite.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
	}
	u := os.Getenv("LOADOUT_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("LOADOUT_TEST_POSTGRES is not set, and CI must not skip the PostgreSQL tests: start a server with scripts/pg.sh")
		}
		t.Log("LOADOUT_TEST_POSTGRES is not set: SQLite only")
		return m
	}
	m["postgres"] = func(t testing.TB) func(t testing.TB) *sqlstore.Store {
		schemaURL := freshSchema(t, u)
		return func(t testing.TB) *sqlstore.Store {
			s, err := postgres.Open(context.Background(), schemaURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	return m
}

// freshSchema makes a schema, dropped afterwards, and returns the URL with
// it as the search_path.
func freshSchema(t testing.TB, raw string) string { return pgtest.Schema(t, raw, "loadout_svc_") }

// storeService is a service over st with two folder skills, for agents
// "ops" and "dev".
func storeService(t testing.TB, st *sqlstore.Store, opt Options) *Service {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"deploy", "lint"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: Does "+name+".\n---\nDo "+name+".\n")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt.Store, opt.Server, opt.RequireTokens = st, st, true
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := New(cat, opt)
	t.Cleanup(func() { s.Close() })
	if opt.TokenCache.TTL >= 0 {
		select {
		case <-s.auth.listening:
		case <-testutil.After(t):
			t.Fatal("the token feed is not listening")
		}
	}
	return s
}

// countingServer counts the token lookups that reach the store.
type countingServer struct {
	store.Server
	lookups atomic.Int64
}

func (c *countingServer) TokenBySecret(ctx context.Context, secret string) (*store.Token, error) {
	c.lookups.Add(1)
	return c.Server.TokenBySecret(ctx, secret)
}

var admin = Principal{Open: true}

// refusedWithin polls Authenticate until it refuses secret, or fails the
// test after a generous deadline.
func refusedWithin(t *testing.T, s *Service, secret, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.Authenticate(context.Background(), secret)
		if code(err) == CodeUnauthorized {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the token still authenticates after 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A token lookup reaches the store once per TTL, not once per request.
func TestTokenCacheSavesLookups(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			cs := &countingServer{Server: st}
			cat, _ := catalog.New(context.Background(), nil, catalog.Options{})
			s := New(cat, Options{Store: st, Server: cs, RequireTokens: true, TokenCache: TokenCacheOptions{TTL: time.Hour},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			defer s.Close()
			secret, tok, err := st.CreateToken(context.Background(), "ci", []string{"agent:ops"})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 250 {
						p, err := s.Authenticate(context.Background(), secret)
						if err != nil || p.TokenID != tok.ID || !p.CanAgent("ops") || p.Admin() {
							t.Errorf("authenticate: %+v %v", p, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			// Concurrent first requests wait for one lookup; the feed may
			// also drop the cache once when it starts listening.
			if n := cs.lookups.Load(); n > 3 {
				t.Errorf("2,000 requests made %d token lookups, want 1 (at most 3)", n)
			}
			// Unknown secrets: remembered too, so that a client retrying a
			// revoked token costs nothing, up to the bound.
			before := cs.lookups.Load()
			for range 100 {
				if _, err := s.Authenticate(context.Background(), "lo_revoked-or-made-up"); code(err) != CodeUnauthorized {
					t.Fatalf("unknown token: %v", err)
				}
			}
			if n := cs.lookups.Load() - before; n > 3 {
				t.Errorf("100 requests with one unknown token made %d lookups", n)
			}
		})
	}
}

// Made-up secrets cannot grow the cache past its bounds, nor can many
// tokens.
func TestTokenCacheBounded(t *testing.T) {
	st := engines(t)["sqlite"](t)(t)
	s := storeService(t, st, Options{TokenCache: TokenCacheOptions{TTL: time.Hour, Size: 10, Misses: 100}})
	ctx := context.Background()
	for i := range 5000 {
		if _, err := s.Authenticate(ctx, fmt.Sprintf("lo_made-up-%d", i)); code(err) != CodeUnauthorized {
			t.Fatalf("made-up token: %v", err)
		}
	}
	var secrets []string
	for i := range 30 {
		secret, _, err := s.CreateToken(ctx, admin, fmt.Sprint(i), []string{"admin"})
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, secret)
	}
	for _, secret := range secrets {
		if _, err := s.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := s.auth.size(); hits > 10 || misses > 100 {
		t.Errorf("cache holds %d tokens (bound 10) and %d unknown secrets (bound 100)", hits, misses)
	}
	// Every token still authenticates, evicted or not.
	for _, secret := range secrets {
		if _, err := s.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
}

// Two services over one database: a token revoked through one is refused
// by it at once and by the other promptly, through the store's token feed
// (the TTL is an hour, so only the feed can tell it). So is a token
// revoked by a third process (loadout token revoke), and a token created
// elsewhere works at once.
func TestTokenRevokeAcrossInstances(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			open := fresh(t)
			ctx := context.Background()
			long := Options{TokenCache: TokenCacheOptions{TTL: time.Hour}}
			a, b := storeService(t, open(t), long), storeService(t, open(t), long)
			cli := open(t) // as 'loadout token' would

			secret, tok, err := a.CreateToken(ctx, admin, "rev", []string{"agent:ops"})
			if err != nil {
				t.Fatal(err)
			}
			other, otherTok, err := cli.CreateToken(ctx, "cli", []string{"agent:dev"})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*Service{a, b} {
				for _, sec := range []string{secret, other} {
					if _, err := s.Authenticate(ctx, sec); err != nil {
						t.Fatalf("a token just created: %v", err)
					}
				}
			}
			if err := a.RevokeToken(ctx, admin, tok.ID); err != nil {
				t.Fatal(err)
			}
			// At once on the instance that revoked it.
			if _, err := a.Authenticate(ctx, secret); code(err) != CodeUnauthorized {
				t.Fatalf("right after revoking, on the same instance: %v", err)
			}
			refusedWithin(t, b, secret, "revoked on A, on B")
			if _, err := b.Authenticate(ctx, other); err != nil {
				t.Errorf("the other token, on B: %v", err)
			}

			// Revoked by another process.
			if err := cli.RevokeToken(ctx, otherTok.ID); err != nil {
				t.Fatal(err)
			}
			refusedWithin(t, a, other, "revoked by the CLI, on A")
			refusedWithin(t, b, other, "revoked by the CLI, on B")
		})
	}
}

// The TTL is the safety net: a revocation no feed reports (written to the
// database directly) takes effect within it, and not before.
func TestTokenCacheTTL(t *testing.T) {
	st := engines(t)["sqlite"](t)(t)
	ctx := context.Background()
	secret, tok, err := st.CreateToken(ctx, "", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	revokeQuietly := func(id string) {
		if _, err := st.DB().ExecContext(ctx, `UPDATE tokens SET revoked = 1 WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	long := storeService(t, st, Options{TokenCache: TokenCacheOptions{TTL: time.Hour}})
	if _, err := long.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	revokeQuietly(tok.ID)
	if _, err := long.Authenticate(ctx, secret); err != nil {
		t.Errorf("with an hour's TTL and no notification, the cached answer stands: %v", err)
	}

	secret2, tok2, err := st.CreateToken(ctx, "", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	short := storeService(t, st, Options{TokenCache: TokenCacheOptions{TTL: 200 * time.Millisecond}})
	if _, err := short.Authenticate(ctx, secret2); err != nil {
		t.Fatal(err)
	}
	revokeQuietly(tok2.ID)
	refusedWithin(t, short, secret2, "revoked without a notification, TTL 200 ms")

	// No cache: every request asks.
	secret3, tok3, _ := st.CreateToken(ctx, "", []string{"admin"})
	none := storeService(t, st, Options{TokenCache: TokenCacheOptions{TTL: -1}})
	if _, err := none.Authenticate(ctx, secret3); err != nil {
		t.Fatal(err)
	}
	revokeQuietly(tok3.ID)
	if _, err := none.Authenticate(ctx, secret3); code(err) != CodeUnauthorized {
		t.Errorf("without a cache: %v", err)
	}
}

// The service keeps the store's receipts within their bound, off the
// request path, and usage counts every receipt recorded.
func TestReceiptRetention(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			const maxRows = 1000
			s := storeService(t, st, Options{Receipts: store.Retention{MaxRows: maxRows}})
			ctx := context.Background()
			const loads = 12000
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range loads / 4 {
						name := []string{"deploy", "lint", "made-up"}[(g+i)%3]
						s.Load(ctx, admin, []string{"ops", "dev"}[g%2], name, TransportHTTP)
					}
				}()
			}
			wg.Wait()
			us, err := s.Usage(ctx, admin, store.UsageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var total int64
			for _, u := range us {
				got[u.Agent+"/"+u.Skill+"/"+u.Outcome] += u.Count
				total += u.Count
			}
			if total != loads || got["ops//not_found"] != loads/2/3 || got["dev/deploy/ok"] != loads/2/3 {
				t.Errorf("usage counts %d loads, want %d: %v", total, loads, got)
			}
			// Once the maintenance under way is done, fewer than a tenth
			// of maxRows receipts are left beyond the bound.
			s.rcpt.maintMu.Lock()
			s.rcpt.maintMu.Unlock()
			var n int64
			if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM receipts`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > maxRows+maxRows/10 {
				t.Errorf("%d raw receipts after %d loads; the bound is %d (+%d)", n, loads, maxRows, maxRows/10)
			}
			if rs, err := s.Receipts(ctx, admin, store.ReceiptQuery{Limit: 10000}); err != nil || int64(len(rs)) != n {
				t.Errorf("listing: %d receipts, %v", len(rs), err)
			}
		})
	}
}

// The service bounds the store's raw receipts by their size too: receipts
// at the caps on names and paths (about 1.7 KB each as estimated) start
// maintenance by bytes long before a tenth of MaxRows, and the raw
// receipts left stay near MaxBytes, while usage still counts every one.
func TestReceiptRetentionByBytes(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			const maxBytes = 400 << 10
			s := storeService(t, st, Options{Receipts: store.Retention{MaxBytes: maxBytes}})
			ctx := context.Background()
			const reads = 3000
			long := strings.Repeat("p", MaxReceiptPath)
			for i := range reads {
				// Distinct paths: no two merge.
				s.ReadFile(ctx, admin, "ops", "deploy", fmt.Sprintf("%d/%s", i, long), catalog.ReadOptions{}, TransportHTTP)
			}
			s.rcpt.flush()
			us, err := s.Usage(ctx, admin, store.UsageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, u := range us {
				total += u.Count
			}
			if total != reads {
				t.Errorf("usage counts %d reads, want %d", total, reads)
			}
			s.rcpt.maintMu.Lock()
			s.rcpt.maintMu.Unlock()
			rs, err := st.Receipts(ctx, store.ReceiptQuery{Limit: 10000})
			if err != nil {
				t.Fatal(err)
			}
			var bytes int64
			for i := range rs {
				bytes += store.ReceiptBytes(&rs[i])
			}
			// Within MaxBytes after a maintenance, plus what was written
			// since it began (under a tenth), plus one rollup chunk's
			// rounding (its rows go whole).
			if bytes > maxBytes+maxBytes/5 || len(rs) == reads {
				t.Errorf("%d raw receipts of %d bytes after %d reads at the caps; MaxBytes is %d", len(rs), bytes, reads, maxBytes)
			}
			t.Logf("%d raw receipts of %d bytes (MaxBytes %d)", len(rs), bytes, maxBytes)
		})
	}
}

// fullStore is a SQLite store whose file may not grow: the next write that
// needs a page fails as a full disk would (SQLITE_FULL, "database or disk
// is full").
func fullStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "full.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := st.DB().QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", sqlite.DSN(path)+fmt.Sprintf("&_pragma=max_page_count(%d)", pages))
	if err != nil {
		t.Fatal(err)
	}
	st, err = sqlstore.Open(context.Background(), db, sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// An internal error keeps its cause for the log (Error, errors.Is/As),
// while its Message, what clients see, stays generic.
func TestInternalErrorKeepsCause(t *testing.T) {
	st := fullStore(t)
	s := storeService(t, st, Options{})
	big := strings.Repeat("A line that fills pages of the database file.\n", 2000)
	_, err := s.Put(context.Background(), admin, &skill.Bundle{Content: []byte("---\nname: big\ndescription: Big.\n---\n" + big)}, 0, "api", "")
	e := AsError(err)
	if e == nil || e.Code != CodeInternal {
		t.Fatalf("writing to a full database: %v", err)
	}
	if !strings.Contains(e.Error(), "database or disk is full") {
		t.Errorf("the error lost its cause: %q", e.Error())
	}
	if strings.Contains(e.Message, "full") || strings.Contains(e.Message, "sqlite") {
		t.Errorf("the message clients see names the cause: %q", e.Message)
	}
	var driver interface{ Code() int }
	if !errors.As(err, &driver) {
		t.Errorf("the driver's error is not in the chain: %#v", err)
	}
	// An error of unknown kind is internal, and keeps its text for the
	// log only.
	plain := AsError(fmt.Errorf("open /srv/secret/path: %w", os.ErrPermission))
	if plain.Code != CodeInternal || strings.Contains(plain.Message, "/srv/secret") || !strings.Contains(plain.Error(), "/srv/secret") {
		t.Errorf("plain error: message %q, error %q", plain.Message, plain.Error())
	}
}

// BenchmarkAuthenticate is a token-authenticated request's lookup, with
// the cache (the default TTL) and without (every request asks the store,
// as before the cache), on each engine.
func BenchmarkAuthenticate(b *testing.B) {
	for engine, fresh := range engines(b) {
		for _, c := range []struct {
			name string
			ttl  time.Duration
		}{{"cached", 0}, {"uncached", -1}} {
			b.Run(engine+"/"+c.name, func(b *testing.B) {
				st := fresh(b)(b)
				s := storeService(b, st, Options{TokenCache: TokenCacheOptions{TTL: c.ttl}})
				secret, _, err := st.CreateToken(context.Background(), "bench", []string{"agent:ops"})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						if _, err := s.Authenticate(ctx, secret); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
