// Package postgres opens the skill store on PostgreSQL, through pgx's
// database/sql driver. Several instances may open one database at once:
// migrations run under a transaction-scoped advisory lock.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loadout/loadout/store/sqlstore"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Open connects to the database at url (a postgres:// URL or a key=value
// DSN), checks the connection and brings the schema up to date. Tables go
// in the first schema of the connection's search_path. The store's change
// feed (Changes) LISTENs on a connection of its own to the same URL. The store's change
// feed (Changes) LISTENs on a connection of its own to the same URL.
func Open(ctx context.Context, url string) (*sqlstore.Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
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
