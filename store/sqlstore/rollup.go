package sqlstore

import (
	"database/sql"
	"strings"
	"sync"

	"github.com/loadout/loadout/store"
)

// Counting receipts as they are written (SQLite only).
//
// MaintainReceipts counts raw receipts into the daily counts by reading
// them back and upserting one daily row per distinct key of each chunk.
// Under loads spread over a large catalog nearly every receipt of a chunk
// has its own key, and that rollup cost about as much as writing the
// receipts (5.6 µs a receipt at 10,000 skills). But this process already
// had every receipt it wrote in hand: counted in memory as they are
// appended, a stretch of 100,000 receipts over 10,000 skills is 10,000
// upserts, not 100,000, and no read.
//
// The raw receipts stay the record; the memory is only a shortcut, taken
// when it is known to be exact. A span is a run of ids (from, to] that
// this process appended with no other writer's receipt between them
// (SQLite hands out ids serially, so an insert's ids are consecutive, and
// the next insert's first id says whether anyone wrote in between).
// MaintainReceipts applies a span in one transaction with the mark
// (receipt_rollup.last_id), and only when the mark is exactly at the
// span's start: the rows below it (another writer's, say) are rolled up
// from the table first, as before. A span the mark has passed (another process rolled those rows
// up) is dropped; so is every span of a process that stops or crashes:
// its rows are still in the table, above the mark, and the next rollup
// counts them there. So the daily counts are the same whichever way a
// receipt is counted, which TestMemoryRollupMatchesTable checks.
//
// PostgreSQL hands out ids before transactions commit, in any order, and
// several instances share one table, so it always rolls up from the
// table.

// Bounds of what the memory holds.
const (
	// maxSpanKeys is the number of daily-count rows one span may hold:
	// applying a span is one transaction, and this keeps it to tens of
	// milliseconds, like a RollupChunk of the table.
	maxSpanKeys = 20_000
	// maxRollKeys is the number of daily-count rows all spans may hold
	// together (about 100 bytes each). Past it, receipts are left to the
	// table's rollup until maintenance applies the spans.
	maxRollKeys = 100_000
)

type rollKey struct {
	day                          int64
	agent, skill, action, outcom string
}

type rollSpan struct {
	from, to    int64 // the receipts with from < id <= to
	counts      map[rollKey]int64
	bytes       int64 // store.ReceiptBytes of the span's rows
	rows, loads int64
}

type memRollup struct {
	mu    sync.Mutex
	spans []*rollSpan // in id order, each starting where the last ends
	keys  int         // over every span
}

// added counts receipts rs, just written with ids first..last (last is
// first+len(rs)-1), into the spans.
func (m *memRollup) added(rs []store.Receipt, first, last int64, t int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// A new span starts where another writer's receipts came between
	// (maintenance rolls those up from the table), or where the last is
	// full.
	var cur *rollSpan
	if n := len(m.spans); n > 0 && m.spans[n-1].to == first-1 && len(m.spans[n-1].counts) < maxSpanKeys {
		cur = m.spans[n-1]
	}
	if m.keys+len(rs) > maxRollKeys {
		return
	}
	if cur == nil {
		cur = &rollSpan{from: first - 1, to: first - 1, counts: map[rollKey]int64{}}
		m.spans = append(m.spans, cur)
	}
	for i := range rs {
		r := &rs[i]
		us := t
		if !r.Time.IsZero() {
			us = r.Time.UnixMicro()
		}
		k := rollKey{day: us / microsPerDay, agent: r.Agent, action: r.Action, outcom: r.Outcome}
		if r.Source != "" { // rolledSkill: a name that matched no skill counts as ""
			k.skill = r.Skill
		}
		n, held := max(r.Count, 1), len(cur.counts)
		cur.counts[k] += n
		m.keys += len(cur.counts) - held
		cur.loads += n
		cur.rows++
		cur.bytes += store.ReceiptBytes(r)
	}
	cur.to = last
}

// count says how many spans there are.
func (m *memRollup) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.spans)
}

// pop removes and returns the oldest span, nil when there is none. The
// next receipts written start a new span where it ended.
func (m *memRollup) pop() *rollSpan {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.spans) == 0 {
		return nil
	}
	sp := m.spans[0]
	m.spans = m.spans[1:]
	m.keys -= len(sp.counts)
	return sp
}

// spanStart is where the oldest span starts, or -1 when there is none.
func (m *memRollup) spanStart() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.spans) == 0 {
		return -1
	}
	return m.spans[0].from
}

// applySpan writes sp's counts and moves the mark to its end, in c's
// transaction, when the mark is at its start; it says whether it did, and
// whether any receipt is above the span (more to roll up).
func (s *Store) applySpan(c conn, sp *rollSpan) (applied, more bool, err error) {
	var mark int64
	if _, err := c.one(`SELECT last_id FROM receipt_rollup WHERE id = 1`, nil, &mark); err != nil {
		return false, false, err
	}
	if mark != sp.from {
		return false, true, nil
	}
	const per = 64 // rows per statement, as receiptChunks
	keys := make([]rollKey, 0, len(sp.counts))
	for k := range sp.counts {
		keys = append(keys, k)
	}
	args := make([]any, 0, per*6)
	for i := 0; i < len(keys); i += per {
		chunk := keys[i:min(i+per, len(keys))]
		var q strings.Builder
		q.WriteString(`INSERT INTO receipt_daily (day, agent, skill, action, outcome, count) VALUES `)
		args = args[:0]
		for j, k := range chunk {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteByte('(')
			q.WriteString(s.d.bulkParams(j*6+1, 6))
			q.WriteByte(')')
			args = append(args, k.day, k.agent, k.skill, k.action, k.outcom, sp.counts[k])
		}
		q.WriteString(` ON CONFLICT (day, agent, skill, action, outcome) DO UPDATE SET count = receipt_daily.count + excluded.count`)
		if _, err := c.exec(q.String(), args...); err != nil {
			return false, false, err
		}
	}
	if _, err := c.exec(`INSERT INTO receipt_bytes (last_id, bytes) VALUES ($1, $2)`, sp.to, sp.bytes); err != nil {
		return false, false, err
	}
	if _, err := c.exec(`UPDATE receipt_rollup SET last_id = $1 WHERE id = 1`, sp.to); err != nil {
		return false, false, err
	}
	var top sql.NullInt64
	if _, err := c.one(`SELECT max(id) FROM receipts`, nil, &top); err != nil {
		return false, false, err
	}
	return true, top.Int64 > sp.to, nil
}
