// Package pgtest gives tests a PostgreSQL schema of their own on the
// server LOADOUT_TEST_POSTGRES names. Only tests import it.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Schema creates a schema named prefix and random hex on the server at
// raw, drops it when the test ends, and returns raw with the schema as its
// search_path: a store opened on it sees only this test's tables.
func Schema(t testing.TB, raw, prefix string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("LOADOUT_TEST_POSTGRES: %v", err)
	}
	db, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := prefix + hex.EncodeToString(b[:])
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		db.Close()
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
