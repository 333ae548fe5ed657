// Package sqlite opens the skill store on a SQLite file, through the pure-Go
// driver modernc.org/sqlite (no cgo). It is loadout's default store.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/loadout/loadout/store/sqlstore"
)

// BusyTimeout is how long a connection waits for another writer.
const BusyTimeout = 10 * time.Second

// Options size the connection pool. The zero value takes the defaults.
type Options struct {
	// MaxConns bounds the pool: at most this many connections are open,
	// and all of them are kept open while idle (so a burst of requests
	// never opens and closes connections: opening one parses the schema).
	// One of them at a time writes (SQLite has one write lock; the store
	// lets one write transaction in at a time), the others read. 0:
	// DefaultMaxConns.
	MaxConns int
	// MaxIdleTime closes a connection left idle this long. 0:
	// DefaultMaxIdleTime.
	MaxIdleTime time.Duration
}

// DefaultMaxConns is the pool's default bound: twice GOMAXPROCS readers
// (the driver is pure Go, so more than the cores cannot run at once; twice
// covers the ones parked between statements) and the one writer.
func DefaultMaxConns() int { return 2*runtime.GOMAXPROCS(0) + 1 }

// DefaultMaxIdleTime is how long an idle connection is kept.
const DefaultMaxIdleTime = 5 * time.Minute

// Open opens the store with the default Options; see OpenWith.
func Open(path string) (*sqlstore.Store, error) { return OpenWith(path, Options{}) }

// OpenWith opens (creating if need be) the store in the SQLite file at path
// and brings its schema up to date. The file is put in WAL mode;
// connections enforce foreign keys, wait up to BusyTimeout for a busy
// database, and begin write transactions IMMEDIATE, so a transaction never
// has to upgrade a read lock (which SQLite may refuse, busy timeout or not).
// Several processes may open one file at once. The pool holds at most
// o.MaxConns connections (see Options); the change feeds poll on
// connections of their own, outside it.
func OpenWith(path string, o Options) (*sqlstore.Store, error) {
	if o.MaxConns < 0 || o.MaxIdleTime < 0 {
		return nil, fmt.Errorf("sqlite: %s: the pool's MaxConns (%d) and MaxIdleTime (%s) must not be negative: give 0 for the defaults", path, o.MaxConns, o.MaxIdleTime)
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns()
	}
	if o.MaxIdleTime == 0 {
		o.MaxIdleTime = DefaultMaxIdleTime
	}
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(o.MaxIdleTime)
	// Switching a new file to WAL takes an exclusive lock, and SQLite
	// answers a connection that arrives meanwhile with SQLITE_BUSY without
	// waiting, so the set-up is retried until BusyTimeout.
	deadline := time.Now().Add(BusyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var s *sqlstore.Store
		_, err = db.Exec("PRAGMA journal_mode = WAL")
		if err == nil {
			s, err = sqlstore.Open(context.Background(), db, sqlstore.SQLite)
		}
		if err == nil {
			poll, err := sql.Open("sqlite", DSN(path))
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("sqlite: %s: %w", path, err)
			}
			poll.SetMaxIdleConns(0)
			s.SetPollDB(poll)
			return s, nil
		}
		if !busy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, fmt.Errorf("sqlite: %s: %w", path, err)
		}
		time.Sleep(wait)
	}
}

func busy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// DSN is the driver's connection string for path, with loadout's
// per-connection settings.
func DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
