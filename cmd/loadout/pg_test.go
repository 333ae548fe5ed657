package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// freshPostgres returns a URL to a new, empty schema on the test server
// (LOADOUT_TEST_POSTGRES; scripts/pg.sh starts one). Under CI a missing
// server fails the test rather than skipping it.
func freshPostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv("LOADOUT_TEST_POSTGRES")
	if base == "" {
		t.Fatal("LOADOUT_TEST_POSTGRES is not set, and CI must not skip PostgreSQL: start a server with scripts/pg.sh")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [6]byte
	rand.Read(b[:])
	schema := "cli_test_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
