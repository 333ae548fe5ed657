package sqlstore

import (
	"errors"
	"strings"
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
	// refusedData reports whether err is the database refusing the values
	// a statement wrote (a value it cannot store, a constraint), which
	// writing them again cannot cure, as against the database being
	// unreachable, busy or shutting down, which may pass.
	refusedData func(error) bool
	// maxParams is the most parameters one statement may bind.
	maxParams int
	// changed is run in every write transaction that changed skills,
	// files or overrides, just before the commit, with the store's
	// instance id as $1: it tells other instances (see Changes). For
	// PostgreSQL a NOTIFY, delivered at commit; for SQLite a counter
	// that the pollers read when the database's data_version moves.
	changed string
	// changedCounts says changed returns the new counter value.
	changedCounts bool
	// tokensChanged is changed for the transactions that create or revoke
	// a token: it tells the token feeds (TokenChanges), not the skill
	// ones.
	tokensChanged string
	// blocksChanged is changed for the transactions that add or remove a
	// block of the kill switch (BlockChanges).
	blocksChanged string
	// lockReceipts, when not empty, begins the transactions that roll
	// receipts up or prune them. PostgreSQL hands out receipt ids before
	// their transactions commit, in any order: a lock that waits for the
	// inserts in flight (and holds new ones off) makes every id at or
	// below the highest visible one final, so the rollup's mark never
	// passes a receipt it has not counted. It also keeps two instances
	// from maintaining at once. SQLite needs none: its writes are serial.
	lockReceipts string
	// arrayReceipts says receipts are inserted with one statement taking
	// a column of values per parameter (PostgreSQL's unnest), whatever the
	// batch size; otherwise with prepared multi-row statements.
	arrayReceipts bool
	// memRollup: the receipts a process writes are counted as it writes
	// them, for MaintainReceipts (rollup.go). Only where ids are handed
	// out in the order transactions commit (SQLite).
	memRollup bool
	// anonymousParams says bulkParams writes "?" rather than "$N". SQLite
	// looks every named parameter ("$N" is one) up in a list, both when it
	// prepares a statement and when it binds one, which makes a statement
	// of thousands of them quadratic: 1,000 rows/s for receipts.
	anonymousParams bool
	// serialWrites says the engine writes one transaction at a time
	// (SQLite's one write lock): the store lets one of its write
	// transactions in at a time, so the others wait in the process,
	// without a pooled connection, instead of in the database's busy
	// handler holding one.
	serialWrites bool
	// filesJSON aggregates a skill's skill_files rows (as f) into one JSON
	// text, an array of [path, size, content type, binary 0/1, executable
	// 0/1], so that Get reads a skill and its files in one statement.
	filesJSON string
}

// bulkParams returns n parameters numbered from from, for statements
// of many rows, where every parameter is used once and in order.
func (d Dialect) bulkParams(from, n int) string {
	if !d.anonymousParams {
		return placeholders(from, n)
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// The two dialects.
var (
	SQLite = Dialect{
		Name:            "sqlite",
		migrations:      "migrations/sqlite",
		uniqueViolation: sqliteUnique,
		refusedData:     sqliteRefusedData,
		maxParams:       32766, // SQLITE_MAX_VARIABLE_NUMBER since 3.32
		changed:         `UPDATE change_seq SET n = n + 1, instance = $1 WHERE id = 1 RETURNING n`,
		changedCounts:   true,
		tokensChanged:   `UPDATE change_seq SET tokens = tokens + 1, instance = $1 WHERE id = 1 RETURNING tokens`,
		blocksChanged:   `UPDATE change_seq SET blocks = blocks + 1, instance = $1 WHERE id = 1 RETURNING blocks`,
		anonymousParams: true,
		serialWrites:    true,
		memRollup:       true,
		filesJSON:       `json_group_array(json_array(f.relative_path, f.size, f.content_type, f.is_binary, f.executable))`,
	}
	Postgres = Dialect{
		Name:      "postgres",
		ForUpdate: " FOR UPDATE",
		// The key is arbitrary but fixed: "loadout" in ASCII, 0x6c6f61646f7574.
		MigrationLock:   "SELECT pg_advisory_xact_lock(30521761572287860)",
		migrations:      "migrations/postgres",
		uniqueViolation: postgresUnique,
		refusedData:     postgresRefusedData,
		maxParams:       65535, // the wire protocol's 16-bit count
		changed:         `SELECT pg_notify('` + NotifyChannel + `', current_schema() || ' ' || $1)`,
		tokensChanged:   `SELECT pg_notify('` + NotifyChannel + `', current_schema() || ' ' || $1 || ' ` + ChangeTokens + `')`,
		blocksChanged:   `SELECT pg_notify('` + NotifyChannel + `', current_schema() || ' ' || $1 || ' ` + ChangeBlocks + `')`,
		lockReceipts:    `LOCK TABLE receipts IN SHARE ROW EXCLUSIVE MODE`,
		arrayReceipts:   true,
		filesJSON:       `json_agg(json_build_array(f.relative_path, f.size, f.content_type, f.is_binary::int, f.executable::int))::text`,
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

// sqliteRefusedData: SQLITE_TOOBIG (18), SQLITE_CONSTRAINT (19, with its
// extended codes, a trigger's RAISE(ABORT) among them), SQLITE_MISMATCH
// (20) and SQLITE_RANGE (25).
func sqliteRefusedData(err error) bool {
	var e interface{ Code() int }
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case 18, 19, 20, 25:
		return true
	}
	return false
}

// postgresRefusedData: the SQLSTATE classes 22 (data exception: a NUL
// byte or invalid UTF-8 in text is 22021), 23 (integrity constraint
// violation) and 54 (program limit exceeded: a value too large for an
// index row).
func postgresRefusedData(err error) bool {
	var e interface{ SQLState() string }
	if !errors.As(err, &e) {
		return false
	}
	switch c := e.SQLState(); {
	case strings.HasPrefix(c, "22"), strings.HasPrefix(c, "23"), strings.HasPrefix(c, "54"):
		return true
	}
	return false
}
