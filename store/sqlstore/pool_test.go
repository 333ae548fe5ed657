package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// engines runs f on a fresh SQLite file and, when LOADOUT_TEST_POSTGRES
// is set, on a fresh PostgreSQL schema. open takes the pool's bound (0:
// the default).
func engines(t *testing.T, f func(t *testing.T, open func(t *testing.T, maxConns int) *sqlstore.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t *testing.T, maxConns int) *sqlstore.Store {
			s, err := sqlite.OpenWith(filepath.Join(t.TempDir(), "x.db"), sqlite.Options{MaxConns: maxConns})
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
			t.Skip("LOADOUT_TEST_POSTGRES is not set; run eval \"$(scripts/pg.sh start)\" to test against PostgreSQL")
		}
		f(t, func(t *testing.T, maxConns int) *sqlstore.Store {
			admin, err := sql.Open("pgx", raw)
			if err != nil {
				t.Fatal(err)
			}
			var b [6]byte
			rand.Read(b[:])
			schema := "loadout_pool_" + hex.EncodeToString(b[:])
			if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); admin.Close() })
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			s, err := postgres.OpenWith(context.Background(), u.String(), postgres.Options{MaxConns: maxConns})
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

// TestGetBetweenWrites: a write that lands between Get's two statements
// (its row, then its files) does not make Get answer one version's row
// with another's files.
func TestGetBetweenWrites(t *testing.T) {
	engines(t, func(t *testing.T, open func(*testing.T, int) *sqlstore.Store) {
		s := open(t, 0)
		ctx := context.Background()
		if _, err := s.Put(ctx, bundle("alpha", "references/a.md"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		s.SetFault(func(stmt string) error {
			if strings.Contains(stmt, "LEFT JOIN skill_files") {
				once.Do(func() {
					if _, err := s.PutFile(ctx, "alpha", "references/b.md", []byte("b\n"), false, 1); err != nil {
						t.Errorf("PutFile between the statements: %v", err)
					}
				})
			}
			return nil
		})
		rec, err := s.Get(ctx, "alpha")
		s.SetFault(nil)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range rec.Files {
			paths = append(paths, f.Path)
		}
		got := fmt.Sprintf("v%d %v", rec.Version, paths)
		if got != "v2 [references/a.md references/b.md]" && got != "v1 [references/a.md]" {
			t.Fatalf("Get across a write answered %s: one version's row with another's files", got)
		}
		if again, err := s.Get(ctx, "alpha"); err != nil || again.Version != 2 || len(again.Files) != 2 {
			t.Fatalf("Get after the write: %+v, %v", again, err)
		}
	})
}
