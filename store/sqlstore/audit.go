package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/store"
)

// The audit trail (migration 0008): audit_log holds the records, chained
// by store.AuditHash; audit_head holds the last one's seq and hash. Every
// append reads the head locked and moves it in its transaction: on
// PostgreSQL with SELECT … FOR UPDATE, which makes the appends of every
// instance wait their turn; on SQLite under the database's one write lock
// (write transactions begin IMMEDIATE). So the chain never forks.

var _ store.AuditLog = (*Store)(nil)

const auditCols = `seq, at, actor_token, actor, role, action, target, before_digest, after_digest, client, transport, detail, prev_hash, hash`

// AppendAudit adds r at the end of the chain, in a transaction of its own.
func (s *Store) AppendAudit(ctx context.Context, r store.AuditRecord) (store.AuditRecord, error) {
	var out store.AuditRecord
	err := s.quiet(ctx, func(c conn) error {
		var err error
		out, err = c.appendAudit(r)
		return err
	})
	return out, err
}

// appendAudit appends r in c's transaction: the store sets its Seq, Time,
// PrevHash and Hash.
func (c conn) appendAudit(r store.AuditRecord) (store.AuditRecord, error) {
	var seq int64
	var prev string
	found, err := c.one(`SELECT seq, hash FROM audit_head WHERE id = 1`+c.s.d.ForUpdate, nil, &seq, &prev)
	if err != nil {
		return r, err
	}
	if !found {
		return r, internal("the audit head row is missing", nil)
	}
	r.Seq, r.PrevHash = seq+1, prev
	// Times are kept to the microsecond, as the hash covers them.
	r.Time = fromMicros(now())
	r.Hash = store.AuditHash(r)
	if _, err := c.exec(`INSERT INTO audit_log (`+auditCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		r.Seq, r.Time.UnixMicro(), r.ActorToken, r.Actor, r.Role, r.Action, r.Target, r.Before, r.After,
		r.Client, r.Transport, r.Detail, r.PrevHash, r.Hash); err != nil {
		return r, err
	}
	if _, err := c.exec(`UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1`, r.Seq, r.Hash); err != nil {
		return r, err
	}
	return r, nil
}

// auditSlot appends the record ctx carries (store.WithAudit), if any and
// not yet written, in c's transaction. The feed flag is not touched: a
// record is not a change to skills.
func (c conn) auditSlot() (*store.AuditSlot, error) {
	sl := store.AuditFrom(c.ctx)
	if sl == nil || sl.Written {
		return nil, nil
	}
	q := c
	q.wrote = nil
	r, err := q.appendAudit(sl.Record)
	if err != nil {
		return nil, err
	}
	sl.Record = r
	return sl, nil
}

// auditAfter fills the After digest (and Before, when empty) of the
// record ctx carries when it is about the skill being written.
func (c conn) auditAfter(name, before, after string) {
	sl := store.AuditFrom(c.ctx)
	if sl == nil || sl.Written || sl.Record.Target != "skill:"+name {
		return
	}
	sl.Record.After = after
	if sl.Record.Before == "" {
		sl.Record.Before = before
	}
}

func scanAudit(rows *sql.Rows) (store.AuditRecord, error) {
	var r store.AuditRecord
	var at int64
	err := rows.Scan(&r.Seq, &at, &r.ActorToken, &r.Actor, &r.Role, &r.Action, &r.Target, &r.Before, &r.After,
		&r.Client, &r.Transport, &r.Detail, &r.PrevHash, &r.Hash)
	r.Time = fromMicros(at)
	return r, err
}

// MaxAuditList is the most records one ListAudit returns.
const MaxAuditList = 1000

// ListAudit returns records newest first. Each filter has its index
// (actor, action, target: with seq; time), so a first page is read from
// an index whatever the trail's size.
func (s *Store) ListAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditRecord, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxAuditList)
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Actor != "" {
		where = append(where, "actor = "+arg(q.Actor))
	}
	if q.Token != "" {
		where = append(where, "actor_token = "+arg(q.Token))
	}
	if q.Action != "" {
		where = append(where, "action = "+arg(q.Action))
	}
	if q.Target != "" {
		where = append(where, "target = "+arg(q.Target))
	}
	if q.Before > 0 {
		where = append(where, "seq < "+arg(q.Before))
	}
	text := `SELECT ` + auditCols + ` FROM audit_log`
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY seq DESC LIMIT " + arg(limit)
	out := []store.AuditRecord{}
	err := s.read(ctx, func(c conn) error {
		if !q.Since.IsZero() {
			// Records are appended in time order (under the head's lock),
			// so "since" is also a seq bound: the first record at or
			// after it, read from the time index, gives the lowest seq,
			// and a filter's index (action, seq…) is then read only down
			// to it instead of to its end. The time is still checked.
			var from int64
			found, err := c.one(`SELECT seq FROM audit_log WHERE at >= $1 ORDER BY at LIMIT 1`, []any{q.Since.UnixMicro()}, &from)
			if err != nil || !found {
				return err
			}
			text = strings.Replace(text, " ORDER BY", " "+sinceClause(len(where) == 0, from, q.Since.UnixMicro())+" ORDER BY", 1)
		}
		rows, err := c.query(text, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanAudit(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// sinceClause is ListAudit's since filter: numbers only, so it is
// written into the statement (its parameters are numbered already).
func sinceClause(first bool, fromSeq, at int64) string {
	w := "AND"
	if first {
		w = "WHERE"
	}
	return fmt.Sprintf("%s seq >= %d AND at >= %d", w, fromSeq, at)
}

// pruneTarget is the target of a prune record: "audit:FIRST-LAST".
func pruneTarget(first, last int64) string {
	return fmt.Sprintf("audit:%d-%d", first, last)
}

// PruneAction is the action of the record a prune appends.
const PruneAction = "audit.prune"

// VerifyAudit checks, in one read transaction and streaming the rows in
// seq order (a row at a time in memory):
//   - each record's hash is store.AuditHash of its fields (else it was
//     edited);
//   - each record's seq is the one before's plus one, and its prev_hash
//     that record's hash (else records were deleted, reordered or
//     replaced);
//   - the first record is seq 1, or an audit.prune record in the chain
//     names the records before it and the last one's hash (else the
//     oldest records were deleted);
//   - the head names the last record (else the newest were deleted).
//
// The first record that fails is reported, with why.
func (s *Store) VerifyAudit(ctx context.Context) (store.AuditVerify, error) {
	var v store.AuditVerify
	err := s.read(ctx, func(c conn) error {
		v = store.AuditVerify{}
		var headSeq int64
		var headHash string
		if _, err := c.one(`SELECT seq, hash FROM audit_head WHERE id = 1`, nil, &headSeq, &headHash); err != nil {
			return err
		}
		// The prunes' anchors: the last pruned seq -> its hash. Few rows,
		// read through the action index.
		anchors := map[int64]string{}
		prows, err := c.query(`SELECT target, before_digest FROM audit_log WHERE action = $1`, PruneAction)
		if err != nil {
			return err
		}
		for prows.Next() {
			var target, h string
			if err := prows.Scan(&target, &h); err != nil {
				prows.Close()
				return err
			}
			if _, rng, ok := strings.Cut(target, ":"); ok {
				if _, last, ok := strings.Cut(rng, "-"); ok {
					if n, err := strconv.ParseInt(last, 10, 64); err == nil {
						anchors[n] = h
					}
				}
			}
		}
		prows.Close()
		if err := prows.Err(); err != nil {
			return err
		}
		rows, err := c.query(`SELECT ` + auditCols + ` FROM audit_log ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		bad := func(seq int64, format string, a ...any) error {
			v.BadSeq, v.Reason = seq, fmt.Sprintf(format, a...)
			return nil
		}
		// The rows are read as raw bytes into buffers reused from row to
		// row, and hashed by a reused hasher: nothing is kept or
		// allocated per record, so memory stays flat at any length.
		var (
			seq, at  int64
			f        [10]sql.RawBytes
			prev, hv sql.RawBytes
			last     int64
			lastHash []byte
			hasher   store.AuditHasher
		)
		dest := []any{&seq, &at}
		for i := range f {
			dest = append(dest, &f[i])
		}
		dest = append(dest, &prev, &hv)
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			switch {
			case v.Records == 0 && seq != 1:
				h, ok := anchors[seq-1]
				if !ok {
					return bad(seq, "the chain starts at seq %d: records 1 to %d are missing (deleted) and no %s record accounts for them", seq, seq-1, PruneAction)
				}
				if h != string(prev) {
					return bad(seq, "its prev_hash %s is not the hash %s that the %s record gives for seq %d (the first records were replaced)", short(string(prev)), short(h), PruneAction, seq-1)
				}
			case v.Records == 0 && len(prev) != 0:
				return bad(seq, "seq 1 has a prev_hash (%s): the first record's is empty (the record was replaced)", short(string(prev)))
			case v.Records > 0 && seq != last+1:
				return bad(seq, "it follows seq %d: records %d to %d are missing (deleted)", last, last+1, seq-1)
			case v.Records > 0 && !bytes.Equal(prev, lastHash):
				return bad(seq, "its prev_hash %s is not seq %d's hash %s: seq %d was edited and its hash recomputed, or the two were reordered", short(string(prev)), last, short(string(lastHash)), last)
			}
			fields := [10][]byte{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]}
			if h := hasher.SumBytes(prev, seq, at, fields); !bytes.Equal(h, hv) {
				return bad(seq, "its hash %s does not match its fields (their hash is %s): the record was edited or moved", short(string(hv)), short(string(h)))
			}
			if v.Records == 0 {
				v.First = seq
			}
			v.Records++
			last, lastHash = seq, append(lastHash[:0], hv...)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		v.Last, v.Head = last, string(lastHash)
		if headSeq != last || headHash != v.Head {
			if headSeq > last {
				return bad(last+1, "the head names seq %d (hash %s) but the chain ends at seq %d: records %d to %d are missing (deleted)", headSeq, short(headHash), last, last+1, headSeq)
			}
			return bad(last, "the chain ends at seq %d (hash %s) but the head names seq %d (hash %s): the head or the last records were changed", last, short(v.Head), headSeq, short(headHash))
		}
		v.OK = true
		return nil
	})
	return v, err
}

// short is a hash's first 12 characters, for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return `""`
	}
	return h
}

// auditPage is how many records ExportAudit reads per transaction.
const auditPage = 5000

// ExportAudit calls fn with every record in seq order. It reads pages of
// auditPage records, each in a short transaction, so a slow reader holds
// no transaction open (the trail is append-only, so the pages join up).
func (s *Store) ExportAudit(ctx context.Context, fn func(store.AuditRecord) error) error {
	after := int64(0)
	page := make([]store.AuditRecord, 0, auditPage)
	for {
		page = page[:0]
		err := s.read(ctx, func(c conn) error {
			rows, err := c.query(`SELECT `+auditCols+` FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2`, after, auditPage)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				r, err := scanAudit(rows)
				if err != nil {
					return err
				}
				page = append(page, r)
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < auditPage {
			return nil
		}
		after = page[len(page)-1].Seq
	}
}

// PruneAudit deletes the records older than before and appends the
// record that names them, in one transaction holding the head.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (store.AuditPrune, error) {
	var p store.AuditPrune
	err := s.quiet(ctx, func(c conn) error {
		p = store.AuditPrune{}
		var seq int64
		var head string
		if _, err := c.one(`SELECT seq, hash FROM audit_head WHERE id = 1`+c.s.d.ForUpdate, nil, &seq, &head); err != nil {
			return err
		}
		var first, last sql.NullInt64
		if _, err := c.one(`SELECT min(seq), max(seq) FROM audit_log WHERE at < $1`, []any{before.UnixMicro()}, &first, &last); err != nil {
			return err
		}
		if !last.Valid {
			return nil
		}
		// Records are appended in time order, so those older than before
		// are the first ones; the range is taken from the chain's start,
		// whatever a clock did.
		var lowest int64
		if _, err := c.one(`SELECT min(seq) FROM audit_log`, nil, &lowest); err != nil {
			return err
		}
		if _, err := c.one(`SELECT hash FROM audit_log WHERE seq = $1`, []any{last.Int64}, &p.LastHash); err != nil {
			return err
		}
		res, err := c.exec(`DELETE FROM audit_log WHERE seq <= $1`, last.Int64)
		if err != nil {
			return err
		}
		p.Deleted, _ = res.RowsAffected()
		p.First, p.Last = lowest, last.Int64
		_, err = c.appendAudit(store.AuditRecord{Actor: "loadout", Action: PruneAction, Target: pruneTarget(p.First, p.Last),
			Before: p.LastHash, Transport: "server",
			Detail: fmt.Sprintf("pruned %d records older than %s (audit.keepDays)", p.Deleted, before.UTC().Format(time.RFC3339))})
		return err
	})
	return p, err
}

// AddAuditChain appends records in bulk, chained, with the times they
// carry: for benchmarks and tests that need a long trail fast. It is not
// a way in for writes (they go through AppendAudit).
func (s *Store) AddAuditChain(ctx context.Context, rs []store.AuditRecord) error {
	return s.quiet(ctx, func(c conn) error {
		var seq int64
		var prev string
		if _, err := c.one(`SELECT seq, hash FROM audit_head WHERE id = 1`+c.s.d.ForUpdate, nil, &seq, &prev); err != nil {
			return err
		}
		// Multi-row inserts with bulkParams: SQLite binds "?" in
		// constant time, "$N" by a lookup in a list.
		const ncols, per = 14, 64
		args := make([]any, 0, per*ncols)
		for i := 0; i < len(rs); i += per {
			chunk := rs[i:min(i+per, len(rs))]
			args = args[:0]
			var q strings.Builder
			q.WriteString(`INSERT INTO audit_log (` + auditCols + `) VALUES `)
			for j := range chunk {
				r := &chunk[j]
				seq++
				r.Seq, r.PrevHash = seq, prev
				r.Time = fromMicros(r.Time.UnixMicro())
				r.Hash = store.AuditHash(*r)
				prev = r.Hash
				if j > 0 {
					q.WriteString(", ")
				}
				q.WriteByte('(')
				q.WriteString(c.s.d.bulkParams(j*ncols+1, ncols))
				q.WriteByte(')')
				args = append(args, r.Seq, r.Time.UnixMicro(), r.ActorToken, r.Actor, r.Role, r.Action, r.Target, r.Before, r.After,
					r.Client, r.Transport, r.Detail, r.PrevHash, r.Hash)
			}
			if _, err := c.exec(q.String(), args...); err != nil {
				return err
			}
		}
		_, err := c.exec(`UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1`, seq, prev)
		return err
	})
}
