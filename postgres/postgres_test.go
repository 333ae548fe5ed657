package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/storetest"
)

// The tests run against a real server: LOADOUT_TEST_POSTGRES is its URL
// (scripts/pg.sh starts a throwaway one). Without it they skip, except
// under CI, where skipping would hide the PostgreSQL half of the store.
func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("LOADOUT_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("LOADOUT_TEST_POSTGRES is not set, and CI must not skip the PostgreSQL tests: start a server with scripts/pg.sh")
		}
		t.Skip("LOADOUT_TEST_POSTGRES is not set; run eval \"$(scripts/pg.sh start)\" to test against PostgreSQL")
	}
	return u
}

var (
	adminOnce sync.Once
	admin     *sql.DB
	adminErr  error
)

func adminDB(t testing.TB) *sql.DB {
	t.Helper()
	u := serverURL(t)
	adminOnce.Do(func() {
		admin, adminErr = sql.Open("pgx", u)
		if adminErr == nil {
			adminErr = admin.Ping()
		}
	})
	if adminErr != nil {
		t.Fatalf("connecting to LOADOUT_TEST_POSTGRES: %v", adminErr)
	}
	return admin
}

func randomName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// withParam returns the server URL with one query parameter set.
func withParam(t testing.TB, raw, key, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("LOADOUT_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// freshSchema makes a schema, dropped afterwards, and returns the URL of
// the server with it as the search_path.
func freshSchema(t testing.TB) string {
	t.Helper()
	db := adminDB(t)
	schema := randomName("loadout_test_")
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	return withParam(t, serverURL(t), "search_path", schema)
}

// open gives each test a fresh schema, dropped afterwards.
func open(t *testing.T) store.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	serverURL(t)
	storetest.Run(t, open)
}

// Each instance is another postgres.Open of one schema, as another
// process would be.
func TestServer(t *testing.T) {
	serverURL(t)
	storetest.RunServer(t, func(t *testing.T) func(t *testing.T) store.Store {
		u := freshSchema(t)
		return func(t *testing.T) store.Store {
			t.Helper()
			s, err := postgres.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// migrations is how many migrations store/sqlstore/migrations/postgres holds.
var migrations = storetest.MigrationCount("../store/sqlstore/migrations/postgres")

// Several instances starting at once on a fresh database all succeed: the
// migrations run under an advisory lock, once.
func TestConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	db := adminDB(t)
	for round := range 3 {
		name := randomName("loadout_race_")
		if _, err := db.Exec(`CREATE DATABASE ` + name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`) })
		u, _ := url.Parse(serverURL(t))
		u.Path = "/" + name
		const n = 4
		stores := make([]store.Store, n)
		errs := make([]error, n)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				stores[i], errs[i] = postgres.Open(ctx, u.String())
			}()
		}
		start.Done()
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, instance %d: %v", round, i, err)
			}
		}
		var applied int
		if err := stores[0].(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil || applied != migrations {
			t.Errorf("round %d: schema_migrations has %d rows (%v)", round, applied, err)
		}
		// Every instance works on the one schema.
		b := &skill.Bundle{Content: []byte("---\nname: shared\ndescription: Seen by all.\n---\n")}
		if _, err := stores[1].Put(ctx, b, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, s := range stores {
			if _, err := s.Get(ctx, "shared"); err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
			s.Close()
		}
	}
}

// Binary bytes are BYTEA, and the JSON columns keep the frontmatter's key
// order as written.
func TestColumnTypes(t *testing.T) {
	s := open(t).(interface{ DB() *sql.DB })
	rows, err := s.DB().Query(`SELECT table_name, column_name, data_type FROM information_schema.columns
WHERE table_schema = current_schema() AND column_name IN ('content', 'data', 'frontmatter', 'is_binary')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]string{"content": "bytea", "data": "bytea", "frontmatter": "json", "is_binary": "boolean"}
	seen := 0
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			t.Fatal(err)
		}
		seen++
		if typ != want[col] {
			t.Errorf("%s.%s is %s, want %s", table, col, typ, want[col])
		}
	}
	if seen < 5 {
		t.Errorf("found %d columns", seen)
	}
}

// The change feed's connection comes back after the server drops it, and
// says so with a send; it hears only its own schema.
func TestChangesReconnectAndSchemas(t *testing.T) {
	ctx := context.Background()
	db := adminDB(t)
	app := randomName("loadout_listen_")
	u := withParam(t, freshSchema(t), "application_name", app)
	a, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	other := open(t) // another schema of the same database
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := a.Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no change", what)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-ch:
			t.Fatalf("%s: the feed fired", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	put := func(s store.Store, name string) {
		t.Helper()
		if _, err := s.Put(ctx, &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: A skill.\n---\n")}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(other, "elsewhere")
	quiet("a write to another schema")

	var n int
	if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminated %d listeners (%v)", n, err)
	}
	wait("the reconnection")
	put(b, "after")
	wait("a write after the reconnection")

	// Close ends the feed.
	a.Close()
	select {
	case _, ok := <-ch:
		if ok {
			if _, ok := <-ch; ok {
				t.Fatal("the channel is open after Close")
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel is open after Close")
	}
}

func BenchmarkAddReceipts(b *testing.B) {
	storetest.BenchAddReceipts(b, func(tb testing.TB) store.Store {
		s, err := postgres.Open(context.Background(), freshSchema(tb))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	})
}

// A schema made by the migrations before drafts and review (0001-0007)
// opened by this code: every skill is published at its old current
// version and nothing else changes.
func TestMigrateFromOldSchema(t *testing.T) {
	u := freshSchema(t)
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	storetest.OldSchema(t, db, "../store/sqlstore/migrations/postgres")
	db.Close()
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckMigrated(t, s)
}
