package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// Receipt limits.
const (
	DefaultReceiptLimit = 100
	MaxReceiptLimit     = 10000
	DefaultUsageLimit   = 1000
	MaxUsageLimit       = 100000
)

// Receipt maintenance, in rows per transaction: small enough that no
// transaction holds the database's write lock (SQLite) or the receipts
// table's lock (PostgreSQL) for more than some tens of milliseconds.
const (
	// RollupChunk is how many receipts one rollup transaction counts.
	RollupChunk = 5000
	// PruneBatch is how many raw receipts one transaction deletes.
	PruneBatch = 5000
)

const receiptCols = `time, agent, skill, action, path, source, plugin, trust, digest, transport, outcome, token, code, origin, count`

const receiptNcols = 15

// receiptBytesSQL is store.ReceiptBytes of a receipts row, in SQL (the
// same in both engines; so is migration 0007).
const receiptBytesSQL = `128 + (octet_length(agent) + octet_length(skill) + octet_length(action) + octet_length(path)
  + octet_length(source) + octet_length(plugin) + octet_length(trust) + octet_length(digest) + octet_length(transport)
  + octet_length(outcome) + octet_length(token) + octet_length(code) + octet_length(origin)) * 5 / 4`

// microsPerDay turns a receipt's time (Unix microseconds) into its UTC day
// (days since 1970-01-01), the key of the daily counts.
const microsPerDay = 86_400_000_000

// receiptStmts are the prepared statements that insert receipts, made once
// per store and reused by every batch, so a batch costs no parsing: on
// SQLite, multi-row INSERTs of fixed sizes (a batch is cut into as few of
// them as it takes); on PostgreSQL one INSERT … SELECT FROM unnest of one
// array per column, whatever the batch size.
type receiptStmts struct {
	mu     sync.Mutex
	bySize map[int]preparedInsert
}

type preparedInsert struct {
	st *sql.Stmt
	q  string
}

// receiptChunks are the rows per statement SQLite batches are cut into,
// largest first: 64 rows bind 768 parameters, past which a bigger
// statement saves nothing measurable.
var receiptChunks = []int{64, 8, 1}

// receiptArrayInsert is PostgreSQL's insert of a whole batch.
var receiptArrayInsert = `INSERT INTO receipts (` + receiptCols + `) SELECT * FROM unnest($1::bigint[], ` +
	`$2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[])`

func (s *Store) receiptInsert(rows int) string {
	if s.d.arrayReceipts {
		return receiptArrayInsert
	}
	if rows < 0 {
		return receiptSharedInsert(-rows)
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO receipts (` + receiptCols + `) VALUES `)
	for j := range rows {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		b.WriteString(s.d.bulkParams(j*receiptNcols+1, receiptNcols))
		b.WriteByte(')')
	}
	return b.String()
}

// receiptSharedInsert is SQLite's insert of rows receipts that share
// every field but their time, skill, digest and count (sharesFields): the
// shared ones are bound once (?1 to ?11), the others per row. Under loads
// spread over many skills no two receipts of a flush merge, and binding
// each of a row's 15 values (a C copy of every text, a conversion by
// database/sql) was about a third of writing it; a server's receipts are
// mostly one agent's loads with one token, which share the rest.
func receiptSharedInsert(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO receipts (` + receiptCols + `) SELECT column1, ?1, column2, ?2, ?3, ?4, ?5, ?6, column3, ?7, ?8, ?9, ?10, ?11, column4 FROM (VALUES `)
	for j := range rows {
		if j > 0 {
			b.WriteString(", ")
		}
		// Unnumbered parameters take the numbers after the largest
		// before them: 12 on, in order.
		b.WriteString("(?, ?, ?, ?)")
	}
	b.WriteByte(')')
	return b.String()
}

// sharesFields says whether every receipt of rs has rs[0]'s fields but
// its time, skill, digest and count (receiptSharedInsert).
func sharesFields(rs []store.Receipt) bool {
	a := &rs[0]
	for i := 1; i < len(rs); i++ {
		r := &rs[i]
		if r.Agent != a.Agent || r.Action != a.Action || r.Path != a.Path || r.Source != a.Source || r.Plugin != a.Plugin ||
			r.Trust != a.Trust || r.Transport != a.Transport || r.Outcome != a.Outcome || r.Token != a.Token || r.Code != a.Code || r.Origin != a.Origin {
			return false
		}
	}
	return true
}

// receiptStmt returns the prepared insert of size rows (0 for the array
// insert, -size for receiptSharedInsert's), preparing it the first time.
func (s *Store) receiptStmt(ctx context.Context, rows int) (*sql.Stmt, string, error) {
	s.rstmts.mu.Lock()
	defer s.rstmts.mu.Unlock()
	if p, ok := s.rstmts.bySize[rows]; ok {
		return p.st, p.q, nil
	}
	q := s.receiptInsert(rows)
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, q, err
	}
	if s.rstmts.bySize == nil {
		s.rstmts.bySize = map[int]preparedInsert{}
	}
	s.rstmts.bySize[rows] = preparedInsert{st, q}
	return st, q, nil
}

func (s *Store) closeReceiptStmts() {
	s.rstmts.mu.Lock()
	defer s.rstmts.mu.Unlock()
	for _, p := range s.rstmts.bySize {
		p.st.Close()
	}
	s.rstmts.bySize = nil
}

// execStmt runs a prepared statement inside the transaction.
func (c conn) execStmt(st *sql.Stmt, q string, args ...any) error {
	if err := c.s.injected(q); err != nil {
		return err
	}
	if c.wrote != nil {
		*c.wrote = true
	}
	_, err := c.tx.StmtContext(c.ctx, st).ExecContext(c.ctx, args...)
	return err
}

// AddReceipts appends receipts in one transaction, through prepared
// statements (see receiptStmts). A zero Time is now. Receipts are only
// appended here: MaintainReceipts counts them into the daily counts later,
// many at a time, which costs far less than counting each batch.
//
// When the database refuses the values themselves (PostgreSQL refuses a
// NUL byte or invalid UTF-8 in text; a constraint), the error has code
// store.Invalid: writing the same receipts again would fail again. Any
// other failure (the database unreachable, busy, closing) is
// store.Internal, and may pass.
func (s *Store) AddReceipts(ctx context.Context, rs []store.Receipt) error {
	if len(rs) == 0 {
		return nil
	}
	err := s.addReceipts(ctx, rs)
	if err != nil && s.d.refusedData(err) {
		return &store.Error{Code: store.Invalid, Message: "store: the database refused the receipts' values", Err: err}
	}
	return err
}

func (s *Store) addReceipts(ctx context.Context, rs []store.Receipt) error {
	t := now()
	micros := func(r *store.Receipt) int64 {
		if r.Time.IsZero() {
			return t
		}
		return r.Time.UnixMicro()
	}
	var last int64 // the id of the last receipt inserted (memRollup)
	err := s.quiet(ctx, func(c conn) error {
		if s.d.arrayReceipts {
			st, q, err := s.receiptStmt(ctx, 0)
			if err != nil {
				return err
			}
			// One statement per 10,000 receipts keeps each one's arrays
			// to a few megabytes.
			for i := 0; i < len(rs); i += 10000 {
				chunk := rs[i:min(i+10000, len(rs))]
				times := make([]int64, len(chunk))
				counts := make([]int64, len(chunk))
				cols := make([][]string, receiptNcols-2)
				for k := range cols {
					cols[k] = make([]string, len(chunk))
				}
				for j := range chunk {
					r := &chunk[j]
					times[j] = micros(r)
					counts[j] = max(r.Count, 1)
					for k, v := range [...]string{r.Agent, r.Skill, r.Action, r.Path, r.Source, r.Plugin, r.Trust, r.Digest, r.Transport, r.Outcome, r.Token, r.Code, r.Origin} {
						cols[k][j] = v
					}
				}
				args := make([]any, 0, receiptNcols)
				args = append(args, times)
				for _, col := range cols {
					args = append(args, col)
				}
				args = append(args, counts)
				if err := c.execStmt(st, q, args...); err != nil {
					return err
				}
			}
			return nil
		}
		args := make([]any, 0, min(len(rs), receiptChunks[0])*receiptNcols)
		for i := 0; i < len(rs); {
			size := receiptChunks[len(receiptChunks)-1]
			for _, n := range receiptChunks {
				if len(rs)-i >= n {
					size = n
					break
				}
			}
			shared := size > 1 && sharesFields(rs[i:i+size])
			key := size
			if shared {
				key = -size
			}
			st, q, err := s.receiptStmt(ctx, key)
			if err != nil {
				return err
			}
			args = args[:0]
			if shared {
				a := &rs[i]
				args = append(args, a.Agent, a.Action, a.Path, a.Source, a.Plugin, a.Trust, a.Transport, a.Outcome, a.Token, a.Code, a.Origin)
				for j := i; j < i+size; j++ {
					r := &rs[j]
					args = append(args, micros(r), r.Skill, r.Digest, max(r.Count, 1))
				}
			} else {
				for j := i; j < i+size; j++ {
					r := &rs[j]
					args = append(args, micros(r), r.Agent, r.Skill, r.Action, r.Path, r.Source, r.Plugin, r.Trust, r.Digest, r.Transport, r.Outcome, r.Token, r.Code, r.Origin, max(r.Count, 1))
				}
			}
			if err := c.execStmt(st, q, args...); err != nil {
				return err
			}
			i += size
		}
		if s.d.memRollup {
			if _, err := c.one(`SELECT last_insert_rowid()`, nil, &last); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && s.d.memRollup {
		// Committed: these are rows last-len(rs)+1 .. last (SQLite hands
		// out the ids of one transaction consecutively).
		s.roll.added(rs, last-int64(len(rs))+1, last, t)
	}
	return err
}

// Receipts lists receipts, newest first (by time, then by id), filtered
// by agent, skill and a time they are not older than. Limit defaults to
// DefaultReceiptLimit and is at most MaxReceiptLimit. Only the raw
// receipts still kept are listed (see MaintainReceipts); Usage counts
// further back.
func (s *Store) Receipts(ctx context.Context, q store.ReceiptQuery) ([]store.Receipt, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultReceiptLimit
	}
	limit = min(limit, MaxReceiptLimit)
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Agent != "" {
		add("agent = $%d", q.Agent)
	}
	if q.Skill != "" {
		add("skill = $%d", q.Skill)
	}
	if !q.Since.IsZero() {
		add("time >= $%d", q.Since.UnixMicro())
	}
	text := `SELECT id, ` + receiptCols + ` FROM receipts`
	if len(where) > 0 {
		text += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	text += fmt.Sprintf(` ORDER BY time DESC, id DESC LIMIT $%d`, len(args))
	out := []store.Receipt{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(text, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r store.Receipt
			var us int64
			if err := rows.Scan(&r.ID, &us, &r.Agent, &r.Skill, &r.Action, &r.Path, &r.Source, &r.Plugin, &r.Trust,
				&r.Digest, &r.Transport, &r.Outcome, &r.Token, &r.Code, &r.Origin, &r.Count); err != nil {
				return err
			}
			r.Time = fromMicros(us)
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rolledSkill is the skill a receipt counts under: its name, or "" when
// the name matched no skill (the receipt has no source), so that made-up
// names cannot add rows to the daily counts.
const rolledSkill = `CASE WHEN source = '' THEN '' ELSE skill END`

// Usage counts loads and reads (the sum of the receipts' Count) per agent, skill, action and outcome (and day,
// when q.Daily), from Since's UTC day on: the daily counts, plus the raw
// receipts not yet counted into them, read in one snapshot, so the answer
// is exact whenever MaintainReceipts last ran. Summed rows come most
// used first; daily ones newest day first.
func (s *Store) Usage(ctx context.Context, q store.UsageQuery) ([]store.Usage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultUsageLimit
	}
	limit = min(limit, MaxUsageLimit)
	var sinceDay int64
	if !q.Since.IsZero() {
		sinceDay = floorDiv(q.Since.UnixMicro(), microsPerDay)
	}
	args := []any{sinceDay, sinceDay * microsPerDay}
	var rolled, raw []string
	if q.Agent != "" {
		args = append(args, q.Agent)
		rolled = append(rolled, fmt.Sprintf("agent = $%d", len(args)))
		raw = append(raw, fmt.Sprintf("agent = $%d", len(args)))
	}
	if q.Skill != "" {
		args = append(args, q.Skill)
		rolled = append(rolled, fmt.Sprintf("skill = $%d", len(args)))
		raw = append(raw, fmt.Sprintf("%s = $%d", rolledSkill, len(args)))
	}
	and := func(conds []string) string {
		if len(conds) == 0 {
			return ""
		}
		return " AND " + strings.Join(conds, " AND ")
	}
	keys := "agent, skill, action, outcome"
	order := "n DESC, agent, skill, action, outcome"
	if q.Daily {
		keys = "day, " + keys
		order = "day DESC, " + order
	}
	args = append(args, limit)
	text := `SELECT ` + keys + `, CAST(sum(count) AS BIGINT) AS n FROM (
  SELECT day, agent, skill, action, outcome, count FROM receipt_daily WHERE day >= $1` + and(rolled) + `
  UNION ALL
  SELECT time / ` + fmt.Sprint(microsPerDay) + ` AS day, agent, ` + rolledSkill + ` AS skill, action, outcome, count
  FROM receipts WHERE id > (SELECT last_id FROM receipt_rollup WHERE id = 1) AND time >= $2` + and(raw) + `
) u GROUP BY ` + keys + ` ORDER BY ` + order + fmt.Sprintf(` LIMIT $%d`, len(args))
	out := []store.Usage{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(text, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u store.Usage
			var day int64
			dest := []any{&u.Agent, &u.Skill, &u.Action, &u.Outcome, &u.Count}
			if q.Daily {
				dest = append([]any{&day}, dest...)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if q.Daily {
				u.Day = time.Unix(day*86400, 0).UTC()
			}
			out = append(out, u)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// maintainTx is quiet with the receipts lock of the dialect taken first.
func (s *Store) maintainTx(ctx context.Context, fn func(c conn) error) error {
	return s.quiet(ctx, func(c conn) error {
		if s.d.lockReceipts != "" {
			if _, err := c.exec(s.d.lockReceipts); err != nil {
				return err
			}
		}
		return fn(c)
	})
}

// MaintainReceipts keeps receipts within r (zero fields: the defaults):
//
//  1. it counts the receipts not yet counted into the daily counts
//     (receipt_daily), summing their Count, RollupChunk rows per
//     transaction, moving the
//     mark (receipt_rollup.last_id) in the same transaction, so that no
//     receipt is counted twice or missed;
//     It also records the chunk's estimated size (store.ReceiptBytes) in
//     receipt_bytes;
//  2. it deletes raw receipts beyond r.MaxRows rows (the oldest ids first),
//     the oldest chunks while those kept sum past r.MaxBytes, and the
//     receipts older than r.KeepDays, PruneBatch per transaction, never
//     one past the mark;
//  3. it deletes daily counts older than r.UsageDays, a day per
//     transaction.
//
// After it returns, at most r.MaxRows raw receipts of at most r.MaxBytes
// are left, plus what was added meanwhile. It stops between transactions when ctx ends.
func (s *Store) MaintainReceipts(ctx context.Context, r store.Retention) (store.MaintainResult, error) {
	r = r.WithDefaults()
	var res store.MaintainResult
	// tx runs one maintenance transaction, then waits as r.Duty asks.
	tx := func(fn func(c conn) error) error {
		start := time.Now()
		if err := s.maintainTx(ctx, fn); err != nil {
			return err
		}
		if r.Duty > 0 && r.Duty < 1 {
			wait := time.Duration(float64(time.Since(start)) * (1 - r.Duty) / r.Duty)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		return nil
	}
	// 1. Roll up: from the table, and the spans this process counted as
	// it wrote (rollup.go) when the mark reaches them.
	var mark int64
	// The spans there are now are applied; those begun meanwhile wait
	// for the next maintenance, so this one ends under a steady load.
	applyLeft := 0
	if s.d.memRollup {
		applyLeft = s.roll.count()
		if err := s.read(ctx, func(c conn) error {
			_, err := c.one(`SELECT last_id FROM receipt_rollup WHERE id = 1`, nil, &mark)
			return err
		}); err != nil {
			return res, err
		}
	}
	for {
		// limit: the table's rows are rolled up to the oldest span's
		// start, no further; -1 when there is no span.
		limit := int64(-1)
		if s.d.memRollup {
			limit = s.roll.spanStart()
		}
		if limit >= 0 && mark >= limit {
			if applyLeft == 0 {
				break
			}
			applyLeft--
			sp := s.roll.pop()
			var applied, more bool
			if err := tx(func(c conn) (err error) {
				applied, more, err = s.applySpan(c, sp)
				return err
			}); err != nil {
				return res, err
			}
			res.Transactions++
			if applied {
				res.RolledUp += sp.loads
				mark = sp.to
			}
			if !more {
				break
			}
			// A span the mark has passed was rolled up from the table
			// by another process: it is dropped, and the table's
			// rollup goes on from the mark.
			continue
		}
		var n, loads int64 // rows and the loads they stand for
		err := tx(func(c conn) error {
			if _, err := c.one(`SELECT last_id FROM receipt_rollup WHERE id = 1`, nil, &mark); err != nil {
				return err
			}
			if limit >= 0 && mark >= limit {
				return nil // the next turn applies the span
			}
			// The chunk ends at an id that exists: ids above the highest
			// one visible may still be handed out.
			var upper sql.NullInt64
			top := int64(1<<63 - 1)
			if limit >= 0 {
				top = limit
			}
			found, err := c.one(`SELECT id FROM receipts WHERE id > $1 AND id <= $2 ORDER BY id LIMIT 1 OFFSET $3`, []any{mark, top, RollupChunk - 1}, &upper)
			if err != nil {
				return err
			}
			if !found {
				if _, err := c.one(`SELECT max(id) FROM receipts WHERE id > $1 AND id <= $2`, []any{mark, top}, &upper); err != nil {
					return err
				}
			}
			if !upper.Valid {
				if limit >= 0 {
					// No row between the mark and the span: ids are
					// handed out above the highest one, so none will be.
					mark = limit
					_, err := c.exec(`UPDATE receipt_rollup SET last_id = $1 WHERE id = 1`, limit)
					return err
				}
				return nil
			}
			if _, err := c.exec(`INSERT INTO receipt_daily (day, agent, skill, action, outcome, count)
SELECT time / `+fmt.Sprint(microsPerDay)+`, agent, `+rolledSkill+`, action, outcome, sum(count)
FROM receipts WHERE id > $1 AND id <= $2
GROUP BY time / `+fmt.Sprint(microsPerDay)+`, agent, `+rolledSkill+`, action, outcome
ON CONFLICT (day, agent, skill, action, outcome) DO UPDATE SET count = receipt_daily.count + excluded.count`, mark, upper.Int64); err != nil {
				return err
			}
			var bytes int64
			if _, err := c.one(`SELECT count(*), CAST(coalesce(sum(count), 0) AS BIGINT), CAST(coalesce(sum(`+receiptBytesSQL+`), 0) AS BIGINT)
FROM receipts WHERE id > $1 AND id <= $2`, []any{mark, upper.Int64}, &n, &loads, &bytes); err != nil {
				return err
			}
			if _, err := c.exec(`INSERT INTO receipt_bytes (last_id, bytes) VALUES ($1, $2)`, upper.Int64, bytes); err != nil {
				return err
			}
			if _, err := c.exec(`UPDATE receipt_rollup SET last_id = $1 WHERE id = 1`, upper.Int64); err != nil {
				return err
			}
			mark = upper.Int64
			return nil
		})
		if err != nil {
			return res, err
		}
		res.Transactions++
		res.RolledUp += loads
		if n < RollupChunk && limit < 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return res, internal("maintaining receipts", err)
		}
	}

	// 2. Prune raw receipts: by count, then by age.
	deleteWhile := func(stmt string, args ...any) error {
		for {
			var n int64
			err := tx(func(c conn) error {
				done, err := c.exec(stmt, args...)
				if err != nil {
					return err
				}
				n, err = done.RowsAffected()
				return err
			})
			if err != nil {
				return err
			}
			res.Transactions++
			res.Pruned += n
			if n < PruneBatch {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return internal("maintaining receipts", err)
			}
		}
	}
	var maxID sql.NullInt64
	if err := s.read(ctx, func(c conn) error {
		_, err := c.one(`SELECT max(id) FROM receipts`, nil, &maxID)
		return err
	}); err != nil {
		return res, err
	}
	if maxID.Valid && maxID.Int64-r.MaxRows > 0 {
		cut := min(maxID.Int64-r.MaxRows, mark)
		if err := deleteWhile(`DELETE FROM receipts WHERE id IN (SELECT id FROM receipts WHERE id <= $1 ORDER BY id LIMIT $2)`, cut, PruneBatch); err != nil {
			return res, err
		}
	}
	// By size: keep the newest chunks that fit in MaxBytes.
	var chunks []struct{ last, bytes int64 }
	if err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT last_id, bytes FROM receipt_bytes ORDER BY last_id DESC`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ch struct{ last, bytes int64 }
			if err := rows.Scan(&ch.last, &ch.bytes); err != nil {
				return err
			}
			chunks = append(chunks, ch)
		}
		return rows.Err()
	}); err != nil {
		return res, err
	}
	var kept int64
	for i, ch := range chunks {
		if kept+ch.bytes <= r.MaxBytes {
			kept += ch.bytes
			continue
		}
		// This chunk does not fit whole: keep its newest rows that fit
		// (read row by row: a chunk may be larger than MaxBytes), delete
		// the rest and everything older, and note what is left of it.
		var first int64 // the chunk's rows are above first
		if i+1 < len(chunks) {
			first = chunks[i+1].last
		}
		cut, left := ch.last, int64(0)
		if err := s.read(ctx, func(c conn) error {
			rows, err := c.query(`SELECT id, `+receiptBytesSQL+` FROM receipts WHERE id > $1 AND id <= $2 ORDER BY id DESC`, first, ch.last)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, b int64
				if err := rows.Scan(&id, &b); err != nil {
					return err
				}
				if kept+left+b > r.MaxBytes {
					cut = id
					return nil
				}
				left += b
			}
			cut = first // every row of it fits: only the older chunks go
			return rows.Err()
		}); err != nil {
			return res, err
		}
		if cut > 0 {
			if err := deleteWhile(`DELETE FROM receipts WHERE id IN (SELECT id FROM receipts WHERE id <= $1 ORDER BY id LIMIT $2)`, min(cut, mark), PruneBatch); err != nil {
				return res, err
			}
		}
		if err := tx(func(c conn) error {
			_, err := c.exec(`UPDATE receipt_bytes SET bytes = $1 WHERE last_id = $2`, left, ch.last)
			return err
		}); err != nil {
			return res, err
		}
		res.Transactions++
		break
	}
	old := time.Now().Add(-time.Duration(r.KeepDays) * 24 * time.Hour).UnixMicro()
	if err := deleteWhile(`DELETE FROM receipts WHERE id IN (SELECT id FROM receipts WHERE time < $1 AND id <= $2 ORDER BY time LIMIT $3)`, old, mark, PruneBatch); err != nil {
		return res, err
	}

	// 3. Prune the daily counts.
	oldDay := floorDiv(time.Now().UnixMicro(), microsPerDay) - int64(r.UsageDays)
	for {
		var n int64
		err := tx(func(c conn) error {
			done, err := c.exec(`DELETE FROM receipt_daily WHERE day = (SELECT min(day) FROM receipt_daily) AND day < $1`, oldDay)
			if err != nil {
				return err
			}
			n, err = done.RowsAffected()
			return err
		})
		if err != nil {
			return res, err
		}
		res.Transactions++
		res.PrunedDays += n
		if n == 0 {
			break
		}
	}

	// Forget the sizes of chunks no receipt is left of.
	if err := tx(func(c conn) error {
		_, err := c.exec(`DELETE FROM receipt_bytes WHERE last_id < coalesce((SELECT min(id) FROM receipts), $1)`, mark+1)
		return err
	}); err != nil {
		return res, err
	}
	res.Transactions++

	if err := s.read(ctx, func(c conn) error {
		var lo, hi sql.NullInt64
		if _, err := c.one(`SELECT min(id), max(id) FROM receipts`, nil, &lo, &hi); err != nil {
			return err
		}
		if lo.Valid {
			res.Remaining = hi.Int64 - lo.Int64 + 1
		}
		_, err := c.one(`SELECT CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM receipt_bytes`, nil, &res.Bytes)
		return err
	}); err != nil {
		return res, err
	}
	return res, nil
}
