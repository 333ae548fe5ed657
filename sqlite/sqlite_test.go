package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/storetest"
)

func open(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) { storetest.Run(t, open) }

// Each instance is another sqlite.Open of one file, as another process
// would be.
func TestServer(t *testing.T) {
	storetest.RunServer(t, func(t *testing.T) func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "shared.db")
		return func(t *testing.T) store.Store {
			t.Helper()
			s, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// One SQL text serves both engines because modernc.org/sqlite binds $1, $2
// by number, as PostgreSQL does, including a number used twice.
func TestNumberedParameters(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got string
	if err := s.DB().QueryRow(`SELECT $2 || '-' || $1 || '-' || $2`, "a", "b").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "b-a-b" {
		t.Errorf("got %q, want b-a-b", got)
	}
}

// migrations is how many migrations store/sqlstore/migrations/sqlite holds.
var migrations = storetest.MigrationCount("../store/sqlstore/migrations/sqlite")

func TestPragmas(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "10000"} {
		var got string
		if err := s.DB().QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", pragma, got, want)
		}
	}
}

// Bytes are stored as BLOBs, never as text.
func TestBlobColumns(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := &skill.Bundle{Content: []byte("---\nname: img\ndescription: An image.\n---\n"),
		Files: []skill.BundleFile{{Path: "a.png", Data: []byte("\x89PNG\r\n\x1a\n\x00")}, {Path: "b.md", Data: []byte("text")}}}
	if _, err := s.Put(ctx, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT DISTINCT typeof(content) FROM skill_files`,
		`SELECT DISTINCT typeof(content) FROM skills`,
		`SELECT DISTINCT typeof(data) FROM blobs`,
	} {
		rows, err := s.DB().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var typ string
			rows.Scan(&typ)
			if typ != "blob" {
				t.Errorf("%s: %s", q, typ)
			}
		}
		rows.Close()
	}
	var bin bool
	if err := s.DB().QueryRow(`SELECT is_binary FROM skill_files WHERE relative_path = 'a.png'`).Scan(&bin); err != nil || !bin {
		t.Errorf("a.png flagged binary: %v %v", bin, err)
	}
}

// Reopening keeps the data and runs no migration twice; several processes
// may open one file at once.
func TestReopenAndConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlite.Open(path)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("---\nname: keep\ndescription: Kept.\n---\n")
	if _, err := s.Put(ctx, &skill.Bundle{Content: content}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Get(ctx, "keep")
	if err != nil || !bytes.Equal(rec.Content, content) {
		t.Fatalf("after reopening: %v %v", rec, err)
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != migrations {
		t.Errorf("schema_migrations rows: %d %v", n, err)
	}
}

// Versions share blobs; deleting a skill removes the blobs only it held.
func TestBlobsSharedAndCollected(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	blobs := func() int {
		t.Helper()
		var n int
		if err := s.DB().QueryRow(`SELECT count(*) FROM blobs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	shared := skill.BundleFile{Path: "shared.md", Data: []byte("the same bytes")}
	one := &skill.Bundle{Content: []byte("---\nname: one\ndescription: One.\n---\n"), Files: []skill.BundleFile{shared, {Path: "own.md", Data: []byte("one's own")}}}
	two := &skill.Bundle{Content: []byte("---\nname: two\ndescription: Two.\n---\n"), Files: []skill.BundleFile{shared}}
	if _, err := s.Put(ctx, one, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, two, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := blobs(); n != 5 { // two SKILL.md, shared, own
		t.Logf("blobs: %d", n)
	}
	before := blobs()
	// A new version that repeats bytes adds only what is new.
	if _, err := s.PutFile(ctx, "one", "extra.md", []byte("the same bytes"), false, 1); err != nil {
		t.Fatal(err)
	}
	if n := blobs(); n != before {
		t.Errorf("a version repeating bytes added %d blobs", n-before)
	}
	if err := s.Delete(ctx, "one", -1); err != nil {
		t.Fatal(err)
	}
	if n := blobs(); n != 2 { // two's SKILL.md and the shared file
		t.Errorf("after deleting one: %d blobs, want 2", n)
	}
	if data, err := s.ReadFile(ctx, "two", 0, "shared.md"); err != nil || string(data) != "the same bytes" {
		t.Errorf("two's shared file: %q %v", data, err)
	}
}

func BenchmarkMaintainReceipts(b *testing.B) {
	storetest.BenchMaintainReceipts(b, func(tb testing.TB) store.Store {
		s, err := sqlite.Open(filepath.Join(tb.TempDir(), "bench.db"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	})
}

func BenchmarkAddReceipts(b *testing.B) {
	storetest.BenchAddReceipts(b, func(tb testing.TB) store.Store {
		s, err := sqlite.Open(filepath.Join(tb.TempDir(), "bench.db"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	})
}

// A database made by the schema before drafts and review (migrations
// 0001-0007, as today's releases leave it) opened by this code: every
// skill is published at its old current version and nothing else changes.
func TestMigrateFromOldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.OldSchema(t, db, "../store/sqlstore/migrations/sqlite")
	db.Close()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckMigrated(t, s)
}
