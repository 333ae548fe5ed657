package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/pgtest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// engines runs f on a fresh SQLite file and, when LOADOUT_TEST_POSTGRES
// is set, on a fresh PostgreSQL schema. open opens a store on that
// database (each call another, on the same data; closed by Cleanup) and
// takes the pool's bound (0: the default).
func engines(t *testing.T, f func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.db")
		f(t, func(t *testing.T, maxConns int) *sqlstore.Store {
			s, err := sqlite.OpenWith(path, sqlite.Options{MaxConns: maxConns})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		raw := os.Getenv("LOADOUT_TEST_POSTGRES")
		if raw == "" {
			testutil.Unavailable(t, "LOADOUT_TEST_POSTGRES is not set; run eval \"$(scripts/pg.sh start)\" to test against PostgreSQL")
		}
		u := pgtest.Schema(t, raw, "loadout_pool_")
		f(t, func(t *testing.T, maxConns int) *sqlstore.Store {
			s, err := postgres.OpenWith(context.Background(), u, postgres.Options{MaxConns: maxConns})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

func bundle(name string, files ...string) *skill.Bundle {
	b := &skill.Bundle{Content: []byte(fmt.Sprintf("---\nname: %s\ndescription: The %s skill for the pool tests.\n---\nBody of %s.\n", name, name, name))}
	for _, f := range files {
		b.Files = append(b.Files, skill.BundleFile{Path: f, Data: []byte("# " + f + "\n")})
	}
	return b
}

// TestPoolKeepsConnections: 64 concurrent reads neither open more
// connections than the bound nor close any for want of an idle slot (the
// pool kept 2 idle connections, so every burst opened and closed
// connections, a third of the admin route's CPU).
func TestPoolKeepsConnections(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		if _, err := s.Put(ctx, bundle("alpha", "references/a.md"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		bound := s.DB().Stats().MaxOpenConnections
		want := sqlite.DefaultMaxConns()
		if s.Dialect().Name == "postgres" {
			want = postgres.DefaultMaxConns
		}
		if bound != want {
			t.Fatalf("pool bound %d, want %d", bound, want)
		}
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 20 {
					if _, err := s.Get(ctx, "alpha"); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Get(ctx, "missing"); store.ErrorCode(err) != store.NotFound {
						t.Errorf("Get of a missing skill: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		st := s.DB().Stats()
		if st.OpenConnections > bound || st.MaxIdleClosed != 0 {
			t.Errorf("after 64 concurrent readers: %d connections open (bound %d), %d closed for want of an idle slot (want 0)",
				st.OpenConnections, bound, st.MaxIdleClosed)
		}
	})
}

// TestTinyPool: with a pool of one connection, a change feed, concurrent
// writers, receipts and reads all still get through: the feed polls on a
// connection of its own (SQLite), statements are prepared at Open rather
// than on a second connection inside a transaction, and SQLite's writers
// wait for their turn without holding a connection.
func TestTinyPool(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		feed, err := s.Changes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = feed
		var wg sync.WaitGroup
		var done atomic.Int64
		for i := range 8 {
			wg.Go(func() {
				name := fmt.Sprintf("skill-%d", i)
				if _, err := s.Put(ctx, bundle(name, "references/a.md"), store.PutOptions{}); err != nil {
					t.Errorf("Put %s: %v", name, err)
					return
				}
				if err := s.AddReceipts(ctx, []store.Receipt{{Agent: "a", Skill: name, Action: "load", Outcome: "ok"}}); err != nil {
					t.Errorf("AddReceipts: %v", err)
					return
				}
				if _, err := s.Get(ctx, name); err != nil {
					t.Errorf("Get %s: %v", name, err)
					return
				}
				if _, err := s.ReadFile(ctx, name, 0, "references/a.md"); err != nil {
					t.Errorf("ReadFile %s: %v", name, err)
					return
				}
				done.Add(1)
			})
		}
		wg.Wait()
		if done.Load() != 8 {
			t.Fatalf("%d of 8 workers got through a pool of one connection", done.Load())
		}
	})
}

// TestGetOneStatement: Get reads a skill and its files in one statement,
// so without a transaction and without a second statement a write could
// land before; its manifest is the one the skill was saved with.
func TestGetOneStatement(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		b := bundle("alpha", "references/a.md", "scripts/run.sh")
		b.Files = append(b.Files, skill.BundleFile{Path: "assets/logo.png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00")},
			skill.BundleFile{Path: "bin/tool", Data: []byte("#!/bin/sh\n"), Executable: true})
		if _, err := s.Put(ctx, b, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutFile(ctx, "alpha", "references/b.md", []byte("b\n"), false, 1); err != nil {
			t.Fatal(err)
		}
		var stmts []string
		var mu sync.Mutex
		s.SetFault(func(stmt string) error {
			mu.Lock()
			stmts = append(stmts, stmt)
			mu.Unlock()
			return nil
		})
		rec, err := s.Get(ctx, "alpha")
		_, missing := s.Get(ctx, "missing")
		s.SetFault(nil)
		if err != nil {
			t.Fatal(err)
		}
		if store.ErrorCode(missing) != store.NotFound {
			t.Fatalf("Get of a missing skill: %v", missing)
		}
		if len(stmts) != 2 {
			t.Fatalf("two Gets ran %d statements, want one each: %q", len(stmts), stmts)
		}
		var got []string
		for _, f := range rec.Files {
			got = append(got, fmt.Sprintf("%s %d %s bin=%v exe=%v script=%v", f.Path, f.Size, f.ContentType, f.Binary, f.Executable, f.Script))
		}
		b2, _, err := s.Bundle(ctx, "alpha", 0)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, f := range b2.Manifest() {
			want = append(want, fmt.Sprintf("%s %d %s bin=%v exe=%v script=%v", f.Path, f.Size, f.ContentType, f.Binary, f.Executable, f.Script))
		}
		if rec.Version != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("Get: version %d, files\n%s\nwant version 2, files\n%s", rec.Version, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
