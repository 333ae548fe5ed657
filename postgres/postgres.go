// Package postgres opens the skill store on PostgreSQL, through pgx's
// database/sql driver. Several instances may open one database at once:
// migrations run under a transaction-scoped advisory lock.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/loadout/loadout/store/sqlstore"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Options size the connection pool. The zero value takes the defaults.
type Options struct {
	// MaxConns bounds the pool: at most this many connections to the
	// server, all kept open while idle, so a burst of requests neither
	// opens connections (a round trip, authentication and a backend
	// process each) nor exceeds what the server allows (max_connections,
	// shared by every instance). Requests past it wait for a free
	// connection. 0: DefaultMaxConns.
	MaxConns int
	// MaxIdleTime closes a connection left idle this long. 0:
	// DefaultMaxIdleTime.
	MaxIdleTime time.Duration
}

// DefaultMaxConns is the pool's default bound. The change feed LISTENs on
// one more connection of its own.
const DefaultMaxConns = 16

// DefaultMaxIdleTime is how long an idle connection is kept.
const DefaultMaxIdleTime = 5 * time.Minute

// Open opens the store with the default Options; see OpenWith.
func Open(ctx context.Context, url string) (*sqlstore.Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith connects to the database at url (a postgres:// URL or a
// key=value DSN), checks the connection and brings the schema up to date.
// Tables go in the first schema of the connection's search_path. The pool
// holds at most o.MaxConns connections (see Options). The store's change
// feed (Changes) LISTENs on a connection of its own to the same URL.
func OpenWith(ctx context.Context, url string, o Options) (*sqlstore.Store, error) {
	if o.MaxConns < 0 || o.MaxIdleTime < 0 {
		return nil, fmt.Errorf("postgres: the pool's MaxConns (%d) and MaxIdleTime (%s) must not be negative: give 0 for the defaults", o.MaxConns, o.MaxIdleTime)
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxIdleTime == 0 {
		o.MaxIdleTime = DefaultMaxIdleTime
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(o.MaxIdleTime)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := sqlstore.Open(ctx, db, sqlstore.Postgres)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s.SetListener(listener(url))
	return s, nil
}
