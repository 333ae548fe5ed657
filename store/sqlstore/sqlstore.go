// Package sqlstore is the one database/sql implementation of store.Store,
// for SQLite and PostgreSQL. What differs between them is in a small
// Dialect table; the schema is created by embedded SQL migrations, one set
// per dialect, run at Open.
//
// Layout: skills holds each skill's SKILL.md and
// metadata, skill_files its current files with their bytes. Every save
// also writes an immutable version: a skill_versions row and one
// skill_version_files row per file, pointing at content-addressed blobs,
// so a version that repeats earlier bytes costs rows, not bytes.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

//go:embed migrations
var migrations embed.FS

// Store is a store.Store over a *sql.DB.
type Store struct {
	db *sql.DB
	d  Dialect
	// Limits are the defaults for writes that name none: PutFile,
	// DeleteFile, Restore, Import, and the zero fields of PutOptions.Limits.
	// Zero fields take skill's defaults. Set it before use.
	Limits skill.Limits
	// Gate, when set, runs after Bundle.Check on every write (Put, PutFile,
	// DeleteFile, Restore, Import): refused findings refuse the write like
	// Check's own refusals (store.Invalid with the findings as Problems),
	// warnings join the write's warnings. cmd sets it to the safety checks
	// with the config's policy. Set it before use.
	Gate func(b *skill.Bundle, doc *skill.Document) (refused, warnings []skill.Diagnostic)

	fault atomic.Pointer[func(stmt string) error]

	feed   feed
	rstmts receiptStmts
	// roll counts the receipts this process writes, for MaintainReceipts
	// (SQLite; see rollup.go).
	roll memRollup
	// stmts are the hot reads (hotQueries), prepared at Open and read
	// without a lock afterwards; see conn.query.
	stmts map[string]*sql.Stmt
	// writer, for SQLite, lets one transaction of this process write at a
	// time (see writeTx); nil for PostgreSQL.
	writer chan struct{}
	// pollDB, when set, is where SQLite's change feeds hold their
	// connections (SetPollDB).
	pollDB *sql.DB
	// decoded caches Get's JSON decoding per skill version.
	decoded decodedCache
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Server = (*Store)(nil)
)

// Open runs the dialect's pending migrations on db and returns the store.
// The store owns db: Close closes it.
func Open(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{db: db, d: d}
	if d.serialWrites {
		s.writer = make(chan struct{}, 1)
	}
	s.feed.init()
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		s.closeStmts()
		return nil, err
	}
	return s, nil
}

// prepare prepares the hot reads and the receipt inserts once, at Open:
// preparing on the pool inside a transaction would need a second
// connection while holding one, which a bounded pool (SetMaxOpenConns)
// may never give.
func (s *Store) prepare(ctx context.Context) error {
	s.stmts = make(map[string]*sql.Stmt, len(hotQueries)+1)
	for _, q := range append(hotQueries[:len(hotQueries):len(hotQueries)], s.getQuery()) {
		st, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlstore: preparing %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	sizes := receiptChunks
	if s.d.arrayReceipts {
		sizes = []int{0}
	}
	for _, n := range sizes {
		if _, _, err := s.receiptStmt(ctx, n); err != nil {
			return fmt.Errorf("sqlstore: preparing the receipt insert: %w", err)
		}
	}
	return nil
}

func (s *Store) closeStmts() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.closeReceiptStmts()
}

// DB returns the underlying database.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the store's dialect.
func (s *Store) Dialect() Dialect { return s.d }

// Close ends every change feed (their channels close) and closes the
// database.
func (s *Store) Close() error {
	s.feed.close()
	s.closeStmts()
	if s.pollDB != nil {
		s.pollDB.Close()
	}
	return s.db.Close()
}

// SetFault installs a hook called before every statement the store runs
// inside a transaction or for Get (and with "COMMIT" before each commit); a non-nil
// error from it fails that statement. It exists for tests that show a
// failure partway through a write leaves the store as it was. nil removes
// the hook.
func (s *Store) SetFault(f func(stmt string) error) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

func (s *Store) injected(stmt string) error {
	if f := s.fault.Load(); f != nil {
		return (*f)(stmt)
	}
	return nil
}

// migrate applies the migrations not yet recorded in schema_migrations, in
// one transaction that first takes the dialect's migration lock.
func (s *Store) migrate(ctx context.Context) error {
	dir := s.d.migrations
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return fmt.Errorf("sqlstore: migrations for %s: %w", s.d.Name, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if s.d.MigrationLock != "" {
		if _, err := tx.ExecContext(ctx, s.d.MigrationLock); err != nil {
			return fmt.Errorf("sqlstore: migration lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`); err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("sqlstore: migrate: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("sqlstore: migration %s: the name must start with a number", name)
		}
		if applied[v] {
			continue
		}
		text, err := fs.ReadFile(migrations, path.Join(dir, name))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(text)); err != nil {
			return fmt.Errorf("sqlstore: migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			v, name, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("sqlstore: migration %s: %w", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: migrate: commit: %w", err)
	}
	return nil
}

// conn runs statements inside one transaction.
type conn struct {
	ctx context.Context
	s   *Store
	tx  *sql.Tx
	// wrote, when not nil, is set by every exec: the transaction changed
	// what the change feed covers.
	wrote *bool
}

func (c conn) exec(q string, args ...any) (sql.Result, error) {
	if err := c.s.injected(q); err != nil {
		return nil, err
	}
	if c.wrote != nil {
		*c.wrote = true
	}
	return c.tx.ExecContext(c.ctx, q, args...)
}

// query runs q in the transaction: through its prepared statement when q
// is one of hotQueries (the statement is prepared once per connection and
// kept with it), else parsed anew.
func (c conn) query(q string, args ...any) (*sql.Rows, error) {
	if err := c.s.injected(q); err != nil {
		return nil, err
	}
	if st := c.s.stmts[q]; st != nil {
		return c.tx.StmtContext(c.ctx, st).QueryContext(c.ctx, args...)
	}
	return c.tx.QueryContext(c.ctx, q, args...)
}

// one scans the first row of q into dest; found is false when there is none.
func (c conn) one(q string, args []any, dest ...any) (found bool, err error) {
	rows, err := c.query(q, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	return true, rows.Close()
}

// write runs fn in a read-write transaction and commits it, or rolls it
// back if fn or the commit fails. It is for writes to skills, files and
// overrides: when fn wrote anything, the transaction also tells the other
// instances (Dialect.changed), and after the commit this instance's change
// feeds get a send.
func (s *Store) write(ctx context.Context, fn func(c conn) error) error {
	return s.writeTx(ctx, kindSkills, fn)
}

// writeTokens is write for creating and revoking tokens: it tells the
// token feeds (Dialect.tokensChanged, TokenChanges).
func (s *Store) writeTokens(ctx context.Context, fn func(c conn) error) error {
	return s.writeTx(ctx, kindTokens, fn)
}

// quiet is write for what no feed covers: receipts, a token's last use
// and the collection of unused blobs.
func (s *Store) quiet(ctx context.Context, fn func(c conn) error) error {
	return s.writeTx(ctx, quietKind, fn)
}

func (s *Store) writeTx(ctx context.Context, k kind, fn func(c conn) error) (err error) {
	ctx, end := startOp(ctx)
	defer func() { end(err) }()
	if s.writer != nil {
		select {
		case s.writer <- struct{}{}:
			defer func() { <-s.writer }()
		case <-ctx.Done():
			return internal("waiting for the write lock", ctx.Err())
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return internal("begin", err)
	}
	c := conn{ctx: ctx, s: s, tx: tx}
	if k != quietKind {
		c.wrote = new(bool)
	}
	if err := fn(c); err != nil {
		tx.Rollback()
		return asStoreError(err)
	}
	// The write's audit record (store.WithAudit), in its transaction: a
	// write is never committed without its record, nor a record without
	// its write.
	var slot *store.AuditSlot
	if k != quietKind {
		if slot, err = c.auditSlot(); err != nil {
			tx.Rollback()
			return internal("appending the audit record", err)
		}
	}
	changed := c.wrote != nil && *c.wrote
	var seq int64
	if changed {
		stmt := s.d.changed
		if k == kindTokens {
			stmt = s.d.tokensChanged
		}
		if k == kindBlocks {
			stmt = s.d.blocksChanged
		}
		if s.d.changedCounts {
			_, err = c.one(stmt, []any{s.feed.instance}, &seq)
		} else {
			_, err = c.exec(stmt, s.feed.instance)
		}
		if err != nil {
			tx.Rollback()
			return internal("announcing the change", err)
		}
	}
	// Only the skills counter is followed by ChangesByOthers, so only its
	// values are remembered as this instance's own.
	local := int64(0)
	if k == kindSkills {
		local = seq
	}
	if local > 0 {
		s.feed.committing(local)
	}
	if err := s.injected("COMMIT"); err != nil {
		tx.Rollback()
		s.feed.abandoned(local)
		return internal("commit", err)
	}
	if err := tx.Commit(); err != nil {
		s.feed.abandoned(local)
		return internal("commit", err)
	}
	if slot != nil {
		slot.Written = true
	}
	if changed {
		s.feed.committed(k, seq)
	}
	return nil
}

// read runs fn in a read-only transaction that sees one snapshot.
func (s *Store) read(ctx context.Context, fn func(c conn) error) (err error) {
	ctx, end := startOp(ctx)
	defer func() { end(err) }()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return internal("begin", err)
	}
	defer tx.Rollback()
	if err := fn(conn{ctx: ctx, s: s, tx: tx}); err != nil {
		return asStoreError(err)
	}
	if err := tx.Commit(); err != nil {
		return internal("commit", err)
	}
	return nil
}

func internal(op string, err error) *store.Error {
	return &store.Error{Code: store.Internal, Message: "store: " + op, Err: err}
}

func asStoreError(err error) error {
	var e *store.Error
	if errors.As(err, &e) {
		return err
	}
	return internal("database", err)
}

func notFound(name string) *store.Error {
	return &store.Error{Code: store.NotFound, Field: "name", Message: fmt.Sprintf("no stored skill is named %q", name)}
}

func conflict(name string, current, ifVersion int) *store.Error {
	var msg string
	switch {
	case current == 0:
		msg = fmt.Sprintf("skill %q does not exist (any more); the edit started from version %d", name, ifVersion)
	case ifVersion == 0:
		msg = fmt.Sprintf("skill %q already exists (version %d); give ifVersion to update it", name, current)
	default:
		msg = fmt.Sprintf("skill %q is at version %d, but the edit started from version %d: reload it and apply the edit again", name, current, ifVersion)
	}
	return &store.Error{Code: store.Conflict, Field: "ifVersion", Current: current, Message: msg}
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func now() int64 { return time.Now().UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// placeholders returns "$from, $from+1, …" for n parameters.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(from + i))
	}
	return b.String()
}

// insertRows inserts rows with multi-row VALUES, in batches that stay
// under every engine's parameter limit.
func (c conn) insertRows(prefix string, rows [][]any, suffix string) error {
	if len(rows) == 0 {
		return nil
	}
	ncols := len(rows[0])
	per := max(1, 900/ncols)
	for i := 0; i < len(rows); i += per {
		chunk := rows[i:min(i+per, len(rows))]
		var b strings.Builder
		args := make([]any, 0, len(chunk)*ncols)
		b.WriteString(prefix)
		b.WriteString(" VALUES ")
		for j, r := range chunk {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			b.WriteString(placeholders(len(args)+1, ncols))
			b.WriteByte(')')
			args = append(args, r...)
		}
		b.WriteString(suffix)
		if _, err := c.exec(b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

func sortFiles(fs []skill.BundleFile) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
}
