package sqlstore

import (
	"errors"
)

// Dialect is everything that differs between the engines. The queries
// themselves are one text for both: SQLite (modernc.org/sqlite) binds $1,
// $2… by number as PostgreSQL does, and both speak INSERT … ON CONFLICT …
// DO UPDATE with excluded.
type Dialect struct {
	Name string
	// ForUpdate is appended to a SELECT of a row the transaction is about
	// to change. SQLite needs none: its write transactions begin IMMEDIATE
	// and so hold the database's one write lock from the start.
	ForUpdate string
	// MigrationLock is the first statement of the migration transaction,
	// so that several processes may start on one database at once. SQLite
	// needs none (the IMMEDIATE transaction is the lock).
	MigrationLock string
	// migrations is the folder of this dialect's embedded *.sql files.
	migrations string
	// uniqueViolation reports whether err is a unique-constraint failure.
	uniqueViolation func(error) bool
}

// The two dialects.
var (
	SQLite = Dialect{
		Name:            "sqlite",
		migrations:      "migrations/sqlite",
		uniqueViolation: sqliteUnique,
	}
	Postgres = Dialect{
		Name:      "postgres",
		ForUpdate: " FOR UPDATE",
		// The key is arbitrary but fixed: "loadout" in ASCII, 0x6c6f61646f7574.
		MigrationLock:   "SELECT pg_advisory_xact_lock(30521761572287860)",
		migrations:      "migrations/postgres",
		uniqueViolation: postgresUnique,
	}
)

// The drivers' error types are matched by method, so this package needs
// neither driver.

func sqliteUnique(err error) bool {
	var e interface{ Code() int }
	if !errors.As(err, &e) {
		return false
	}
	// SQLITE_CONSTRAINT_PRIMARYKEY (1555) and SQLITE_CONSTRAINT_UNIQUE (2067).
	return e.Code() == 1555 || e.Code() == 2067
}

func postgresUnique(err error) bool {
	var e interface{ SQLState() string }
	return errors.As(err, &e) && e.SQLState() == "23505"
}
