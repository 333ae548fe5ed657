// Package sqlite opens the skill store on a SQLite file, through the pure-Go
// driver modernc.org/sqlite (no cgo). It is loadout's default store.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/loadout/loadout/store/sqlstore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// BusyTimeoutMillis is how long a connection waits for another writer.
const BusyTimeoutMillis = 10_000

// Open opens (creating if need be) the store in the SQLite file at path
// and brings its schema up to date. Connections use WAL, enforce foreign
// keys, wait BusyTimeoutMillis for a busy database, and begin write
// transactions IMMEDIATE, so a transaction never has to upgrade a read lock
// (which SQLite may refuse, busy timeout or not).
func Open(path string) (*sqlstore.Store, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	s, err := sqlstore.Open(context.Background(), db, sqlstore.SQLite)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return s, nil
}

// DSN is the driver's connection string for path, with loadout's settings.
func DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMillis))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
