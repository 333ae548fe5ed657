package service

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/store"
)

// receiptLog batches receipts so that recording one never costs a
// request a database write: they are written every 50 ms or 1,000 at a
// time. Every text of a receipt is made safe first (ReceiptText). While
// the store takes writes, receipts are never dropped: when 64k are
// pending, requests wait.
//
// When the store fails a write, no receipt is retried for ever and the
// pending bound holds:
//
//   - if the database refused the values (store.Invalid: PostgreSQL
//     refusing a NUL byte, a constraint), the batch is written again in
//     halves, down to single rows, once; a row refused on its own is
//     dropped, and one log line per flush names how many and the first;
//   - any other failure (the database down, busy, closing) keeps the batch
//     pending and tries again after a pause that doubles up to
//     receiptRetryMax. While it fails, requests do not wait for room: a
//     receipt that finds maxPending pending is dropped and counted, and
//     the next log line says how many were;
//   - on close, pending receipts get closeBudget to be written; what is
//     left then is logged as lost.
//
// A flush merges the receipts it writes that are identical in every field
// but Time (the same agent, skill, action, path, source, plugin, trust,
// digest, transport, outcome, token, code and origin) into one row whose
// Count is how many there were and whose Time is the first one's. The
// merge window is one flush: at most receiptEvery (50 ms), less when
// receiptBatch receipts start one sooner. Nothing is lost: every load is
// counted (usage sums Count), only the times after the first of a merged
// row are. On a server loading the same skill thousands of times a
// second, that turns thousands of rows a second into a few per flush.
//
// It also keeps the store's receipts within their retention (see
// store.Server.MaintainReceipts), off the request path: a maintenance
// starts in the background once a tenth of MaxRows rows, or of MaxBytes
// bytes, were written since the last one began, and every maintainEvery
// (for the window by age). Should maintenance fall behind by a fifth of
// either, the next flush waits for one. So the raw receipts never exceed
// MaxRows + MaxRows/5 rows, nor MaxBytes + MaxBytes/5 bytes, plus one
// flush (at most maxPending rows), and just after a maintenance they are
// within MaxRows and MaxBytes.
type receiptLog struct {
	srv  store.Server
	log  *slog.Logger
	ret  store.Retention
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	room    *sync.Cond // signalled when pending drains
	pending []store.Receipt
	// spare is the buffer of the last batch written, emptied, which the
	// next flush gives to pending: the two alternate, so queueing a
	// receipt allocates nothing once they have grown (before, pending
	// started empty after every flush and grew by doubling: a tenth of
	// the bytes a cached load allocated).
	spare []store.Receipt
	// merging maps a receipt's mergeKey to the last row made with it in
	// the batch being merged, and mergeNext a row to the one made before
	// it with the same key, -1 for none (under flushMu); kept between
	// flushes, cleared.
	merging   map[mergeKey]int
	mergeNext []int
	ring      []store.Receipt // without a store: the last 10,000 rows (merged as in a flush), in memory (kept: up to twice that, trimmed in one copy)
	flushMu   sync.Mutex
	closed    bool
	// failing says the last write to the store failed for a reason other
	// than the values (under mu): add does not wait for room meanwhile.
	failing bool
	// retryAt is when the loop tries the store again after a failure,
	// and backoff the pause before it (under flushMu).
	retryAt time.Time
	backoff time.Duration
	// ctx is cancelled closeBudget after close begins: no write outlives it.
	ctx    context.Context
	cancel context.CancelFunc

	// added counts every receipt queued (ReceiptsAdded).
	added atomic.Uint64
	// lost counts the loads and reads whose receipts were dropped: refused
	// by the store, past the pending bound while it failed, or left at
	// exit (ReceiptsLost); lostLogged is how many a log line has reported.
	lost       atomic.Uint64
	lostLogged atomic.Uint64
	// writeErrors counts the writes to the store that failed: a batch
	// kept to try again, or rows the store refused (ReceiptWriteErrors).
	writeErrors atomic.Uint64
	// written and writtenBytes count the receipt rows written since the
	// last maintenance began, and their size (store.ReceiptBytes), under mu.
	written, writtenBytes int64
	// maintMu is held by the one maintenance running.
	maintMu    sync.Mutex
	maintCtx   context.Context
	maintStop  context.CancelFunc
	maintGroup sync.WaitGroup
}

const (
	// receiptBatch pending receipts start a flush before the next tick.
	// A transaction's own cost (begin, commit, the WAL write) was half of
	// a 250-receipt flush on SQLite; at 1,000 it is a fifth, and one
	// flush holds SQLite's writer for about 5 ms.
	receiptBatch = 1000
	receiptEvery = 50 * time.Millisecond
	receiptRing  = 10_000
	maxPending   = 64 << 10
	// receiptRetryMax is the longest pause before the store is tried
	// again after a failed write (the first is receiptEvery, doubled
	// each time).
	receiptRetryMax = 5 * time.Second
	// receiptWriteTimeout bounds one write to the store, of at most
	// receiptWriteRows rows (a flush of more is written in pieces).
	receiptWriteTimeout = 10 * time.Second
	receiptWriteRows    = 8192
	// closeBudget is how long close lets pending receipts be written:
	// shutdown ends within it whatever the store does.
	closeBudget = 3 * time.Second
	// maintainEvery is how often receipts are maintained whatever the
	// load, so that the window by age holds on a quiet server.
	maintainEvery = time.Minute
)

func newReceiptLog(srv store.Server, log *slog.Logger, ret store.Retention) *receiptLog {
	ret = ret.WithDefaults()
	if ret.Duty == 0 {
		ret.Duty = maintainDuty
	}
	r := &receiptLog{srv: srv, log: log, ret: ret, stop: make(chan struct{}), done: make(chan struct{})}
	r.room = sync.NewCond(&r.mu)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.maintCtx, r.maintStop = context.WithCancel(r.ctx)
	if srv != nil {
		// Work off what an earlier run (or an older version) left.
		r.maintainAsync()
	}
	go r.loop()
	return r
}

// maintainDuty is the share of its time a server's receipt maintenance
// spends in transactions: it works in short transactions with pauses, so
// that it never holds the database or a core for long while requests are
// served (one 20,000-receipt transaction took about 60 ms of a core).
const maintainDuty = 0.25

// lag is how far maintenance is behind, in triggers: a maintenance
// starts once a tenth of MaxRows rows, or of MaxBytes bytes, were written
// since the last one began (lag 1). mu is held.
func (r *receiptLog) lag() float64 {
	return max(float64(r.written)/float64(max(1, r.ret.MaxRows/10)), float64(r.writtenBytes)/float64(max(1, r.ret.MaxBytes/10)))
}

// maintainAsync starts a maintenance in the background, unless one runs;
// that one goes on while enough receipts were written meanwhile, so that
// once writes stop, fewer than maintainTrigger receipts are left
// unmaintained.
func (r *receiptLog) maintainAsync() {
	if !r.maintMu.TryLock() {
		return
	}
	r.maintGroup.Add(1)
	go func() {
		defer r.maintGroup.Done()
		defer r.maintMu.Unlock()
		for {
			r.maintain()
			r.mu.Lock()
			again := r.lag() >= 1
			r.mu.Unlock()
			if !again || r.maintCtx.Err() != nil {
				return
			}
		}
	}()
}

// maintain runs one maintenance; maintMu is held.
func (r *receiptLog) maintain() {
	if r.maintCtx.Err() != nil {
		return
	}
	r.mu.Lock()
	r.written, r.writtenBytes = 0, 0
	r.mu.Unlock()
	start := time.Now()
	res, err := r.srv.MaintainReceipts(r.maintCtx, r.ret)
	if err != nil {
		if r.maintCtx.Err() == nil {
			r.log.Error("maintaining receipts failed; it is retried", "err", err, "rolled_up", res.RolledUp, "pruned", res.Pruned)
		}
		return
	}
	if res.RolledUp > 0 || res.Pruned > 0 || res.PrunedDays > 0 {
		r.log.Debug("receipts maintained", "rolled_up", res.RolledUp, "pruned", res.Pruned, "pruned_days", res.PrunedDays,
			"kept_at_most", res.Remaining, "transactions", res.Transactions, "took", time.Since(start).Round(time.Millisecond))
	}
}

// add queues a receipt, its text made safe (safeReceipt). It waits only
// when maxPending receipts are pending and the store takes writes; while
// the store fails (or after close), a receipt past the bound is dropped
// and counted instead.
func (r *receiptLog) add(rc store.Receipt) {
	safeReceipt(&rc)
	r.mu.Lock()
	for len(r.pending) >= maxPending && !r.closed && !r.failing {
		r.room.Wait()
	}
	if len(r.pending) >= maxPending {
		r.mu.Unlock()
		r.lost.Add(uint64(max(rc.Count, 1)))
		return
	}
	r.pending = append(r.pending, rc)
	n := len(r.pending)
	r.added.Add(1)
	r.mu.Unlock()
	if n == receiptBatch {
		go r.flushDue()
	}
}

func (r *receiptLog) loop() {
	defer close(r.done)
	t := time.NewTicker(receiptEvery)
	defer t.Stop()
	m := time.NewTicker(maintainEvery)
	defer m.Stop()
	for {
		select {
		case <-t.C:
			r.flushDue()
		case <-m.C:
			if r.srv != nil {
				r.maintainAsync()
			}
		case <-r.stop:
			if err := r.flush(); err != nil {
				r.mu.Lock()
				left := countOf(r.pending)
				r.pending = nil
				r.mu.Unlock()
				r.lost.Add(uint64(left))
			}
			r.reportLost("receipts could not be written before exit", nil)
			return
		}
	}
}

// flushDue flushes unless the store failed and its pause is not over.
func (r *receiptLog) flushDue() {
	r.flushMu.Lock()
	wait := time.Now().Before(r.retryAt)
	r.flushMu.Unlock()
	if !wait {
		r.flush()
	}
}

// flush writes everything pending. Whatever add has returned for is
// included, so a receipt is visible as soon as its request ends. It
// returns the error of a write that failed for a reason other than the
// values; the receipts it could not write stay pending.
func (r *receiptLog) flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	if len(batch) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.pending, r.spare = r.spare[:0], nil
	r.room.Broadcast()
	r.mu.Unlock()
	batch = r.merge(batch)
	// Once written (or copied to the ring), the batch's buffer is the
	// next spare; cleared, so it holds no strings.
	defer func() {
		if cap(batch) > maxPending {
			return
		}
		clear(batch)
		r.mu.Lock()
		if r.spare == nil {
			r.spare = batch[:0]
		}
		r.mu.Unlock()
	}()
	if r.srv == nil {
		r.mu.Lock()
		// The ring holds up to twice receiptRing rows and is cut back to
		// the newest receiptRing, in place, when it passes that: the rows
		// are copied once per receiptRing added, not on every flush (it
		// was 2.6 MB copied and allocated a flush once full); the readers
		// see the newest receiptRing (kept).
		r.ring = append(r.ring, batch...)
		if len(r.ring) > 2*receiptRing {
			n := copy(r.ring, r.ring[len(r.ring)-receiptRing:]) // not overlapping
			clear(r.ring[n:])
			r.ring = r.ring[:n]
		}
		r.mu.Unlock()
		return nil
	}
	keep, err := r.write(batch)
	r.mu.Lock()
	wasFailing := r.failing
	r.failing = err != nil
	if err != nil {
		r.writeErrors.Add(1)
	}
	if err == nil {
		r.backoff, r.retryAt = 0, time.Time{}
		r.mu.Unlock()
		if wasFailing {
			r.log.Info("writing receipts works again")
		}
		return nil
	}
	// Keep what could not be written, before what came meanwhile, within
	// the pending bound: past it, the newest are dropped and counted.
	all := append(append(make([]store.Receipt, 0, len(keep)+len(r.pending)), keep...), r.pending...)
	if len(all) > maxPending {
		r.lost.Add(uint64(countOf(all[maxPending:])))
		clear(all[maxPending:])
		all = all[:maxPending]
	}
	r.pending = all
	r.room.Broadcast() // waiting adds stop waiting while the store fails
	r.mu.Unlock()
	r.backoff = min(max(2*r.backoff, receiptEvery), receiptRetryMax)
	r.retryAt = time.Now().Add(r.backoff)
	r.reportLost("writing receipts failed; they are kept and tried again", err, "pending", len(all), "retry_in", r.backoff)
	return err
}

// write writes rows (merged) to the store and returns those it could not
// write for a reason other than their values, with that error. When the
// database refuses the values, it writes the rows again in halves, down
// to single rows, and drops a row refused on its own.
func (r *receiptLog) write(rows []store.Receipt) (keep []store.Receipt, err error) {
	var dropped []store.Receipt
	var dropErr error
	// A stack of parts, the next on top: the rows in pieces of at most
	// receiptWriteRows, so that a slow store still makes progress within
	// receiptWriteTimeout a piece.
	var todo [][]store.Receipt
	for end := len(rows); end > 0; end -= receiptWriteRows {
		todo = append(todo, rows[max(0, end-receiptWriteRows):end])
	}
	for len(todo) > 0 {
		part := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if err != nil {
			keep = append(keep, part...)
			continue
		}
		ctx, cancel := context.WithTimeout(r.ctx, receiptWriteTimeout)
		e := r.srv.AddReceipts(ctx, part)
		cancel()
		switch {
		case e == nil:
			r.wrote(part)
		case store.ErrorCode(e) != store.Invalid:
			err = e
			keep = append(keep, part...)
		case len(part) == 1:
			dropped = append(dropped, part[0])
			dropErr = e
		default:
			h := len(part) / 2
			todo = append(todo, part[h:], part[:h]) // the first half next
		}
	}
	if len(dropped) > 0 {
		r.writeErrors.Add(1)
		n := countOf(dropped)
		r.lost.Add(uint64(n))
		r.lostLogged.Add(uint64(n))
		d := dropped[0]
		r.log.Error("the store refused receipts; they are dropped", "rows", len(dropped), "loads_and_reads", n, "err", dropErr,
			"first_agent", d.Agent, "first_skill", d.Skill, "first_action", d.Action, "first_path", d.Path, "first_outcome", d.Outcome)
	}
	return keep, err
}

// countOf is how many loads and reads rows stand for.
func countOf(rows []store.Receipt) int64 {
	var n int64
	for _, rc := range rows {
		n += max(rc.Count, 1)
	}
	return n
}

// reportLost logs msg with err when err is not nil, or when receipts
// were lost since the last line said so; either way with that number.
func (r *receiptLog) reportLost(msg string, err error, args ...any) {
	lost := r.lost.Load()
	since := lost - r.lostLogged.Swap(lost)
	if err == nil && since == 0 {
		return
	}
	args = append(args, "lost", since, "lost_total", lost)
	if err != nil {
		args = append(args, "err", err)
	}
	r.log.Error(msg, args...)
}

// merge merges the receipts of batch identical in every field but Time
// into one (see receiptLog), in place, keeping their order of first
// appearance; it returns the merged rows. flushMu is held.
//
// The map is keyed by the skill, action and path only, and the rows that
// share them are chained (mergeNext) and compared whole: hashing all of a
// receipt's thirteen texts for every receipt was a quarter of a flush's
// own work under loads spread over many skills, where nothing merges.
func (r *receiptLog) merge(batch []store.Receipt) []store.Receipt {
	if r.merging == nil {
		r.merging = make(map[mergeKey]int)
	}
	defer func() {
		// Clearing costs the map's capacity: one grown by a burst of
		// distinct receipts is dropped rather than cleared every flush.
		if len(r.merging) > 2*receiptBatch {
			r.merging, r.mergeNext = nil, nil
		} else {
			clear(r.merging)
			r.mergeNext = r.mergeNext[:0]
		}
	}()
	out := batch[:0]
	next := r.mergeNext[:0]
	// prev is the last receipt's key and row: a run of identical
	// receipts (one skill loaded over and over) merges without hashing.
	var prev store.Receipt
	prevRow := -1
	for i := range batch {
		rc := batch[i]
		n := max(rc.Count, 1)
		k := rc
		k.Time, k.Count, k.ID = time.Time{}, 0, 0
		j := -1
		if prevRow >= 0 && k == prev {
			j = prevRow
		} else {
			mk := mergeKey{rc.Skill, rc.Action, rc.Path}
			head, ok := r.merging[mk]
			for c := head; ok && c >= 0; c = next[c] {
				o := out[c]
				o.Time, o.Count, o.ID = time.Time{}, 0, 0
				if o == k {
					j = c
					break
				}
			}
			if j < 0 {
				// A new row, first in its key's chain.
				j = len(out)
				if !ok {
					head = -1
				}
				r.merging[mk] = j
				next = append(next, head)
				rc.Count = n
				out = append(out, rc)
				prev, prevRow = k, j
				continue
			}
		}
		prev, prevRow = k, j
		m := &out[j]
		m.Count += n
		if rc.Time.Before(m.Time) {
			m.Time = rc.Time
		}
	}
	r.mergeNext = next
	clear(batch[len(out):])
	return out
}

// mergeKey is what merge hashes: the fields that tell apart the receipts
// of one agent's loads and reads.
type mergeKey struct{ skill, action, path string }

// wrote counts rows written, and starts a maintenance when enough were
// (lag); when maintenance lags by twice that, it runs one here, holding
// further flushes (flushMu is held) until the store is back in bounds.
func (r *receiptLog) wrote(rows []store.Receipt) {
	var bytes int64
	for i := range rows {
		bytes += store.ReceiptBytes(&rows[i])
	}
	r.mu.Lock()
	r.written += int64(len(rows))
	r.writtenBytes += bytes
	lag := r.lag()
	r.mu.Unlock()
	switch {
	case lag >= 2:
		r.maintMu.Lock()
		r.mu.Lock()
		still := r.lag() >= 2
		r.mu.Unlock()
		if still {
			r.maintain()
		}
		r.maintMu.Unlock()
	case lag >= 1:
		r.maintainAsync()
	}
}

// kept is the newest receiptRing rows of the ring; mu is held.
func (r *receiptLog) kept() []store.Receipt {
	return r.ring[max(0, len(r.ring)-receiptRing):]
}

func (r *receiptLog) memory(q store.ReceiptQuery) []store.Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	out := []store.Receipt{}
	ring := r.kept()
	for i := len(ring) - 1; i >= 0 && len(out) < limit; i-- {
		rc := ring[i]
		if (q.Agent == "" || rc.Agent == q.Agent) && (q.Skill == "" || rc.Skill == q.Skill) && !rc.Time.Before(q.Since) {
			out = append(out, rc)
		}
	}
	return out
}

// usage is Usage over the receipts kept in memory.
func (r *receiptLog) usage(q store.UsageQuery) []store.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	type key struct {
		day                           time.Time
		agent, skill, action, outcome string
	}
	since := q.Since.UTC().Truncate(24 * time.Hour)
	counts := map[key]int64{}
	for _, rc := range r.kept() {
		skill := rc.Skill
		if rc.Source == "" {
			skill = ""
		}
		if (q.Agent != "" && rc.Agent != q.Agent) || (q.Skill != "" && skill != q.Skill) || rc.Time.Before(since) {
			continue
		}
		k := key{agent: rc.Agent, skill: skill, action: rc.Action, outcome: rc.Outcome}
		if q.Daily {
			k.day = rc.Time.UTC().Truncate(24 * time.Hour)
		}
		counts[k] += max(rc.Count, 1)
	}
	out := []store.Usage{}
	for k, n := range counts {
		out = append(out, store.Usage{Day: k.day, Agent: k.agent, Skill: k.skill, Action: k.action, Outcome: k.outcome, Count: n})
	}
	slices.SortFunc(out, func(a, b store.Usage) int {
		if c := b.Day.Compare(a.Day); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Skill, b.Skill), cmp.Compare(a.Action, b.Action), cmp.Compare(a.Outcome, b.Outcome))
	})
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	return out[:min(len(out), limit)]
}

// close writes what is pending and stops. It returns within closeBudget
// (and a statement's own cancellation) whatever the store does.
func (r *receiptLog) close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.room.Broadcast()
	r.mu.Unlock()
	// Maintenance can wait for the next start; receipts get the budget.
	r.maintStop()
	stop := time.AfterFunc(closeBudget, r.cancel)
	defer stop.Stop()
	close(r.stop)
	<-r.done
	r.maintGroup.Wait()
	r.cancel()
	return nil
}

// ReceiptsAdded counts the receipts this service has recorded since it
// started: an answer of Receipts stays current while it does not move
// (on this instance; other instances sharing the store write their own).
func (s *Service) ReceiptsAdded() uint64 { return s.rcpt.added.Load() }

// ReceiptsLost counts the loads and reads whose receipts were dropped
// since the service started: values the store refused, receipts past the
// pending bound while the store failed, and what could not be written
// before Close. Each is logged.
func (s *Service) ReceiptsLost() uint64 { return s.rcpt.lost.Load() }
