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
// time. When the buffer is full, requests wait: receipts are never dropped.
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
// starts in the background once a tenth of MaxRows receipts were written
// since the last one began, and every maintainEvery (for the window by
// age). Should maintenance fall behind by a fifth of MaxRows, the next
// flush waits for one. So the raw receipts never exceed MaxRows +
// MaxRows/5 + one flush (at most maxPending), and just after a
// maintenance they are at most MaxRows.
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
	// merging maps a receipt without Time and Count to its row in the
	// batch being merged (under flushMu); kept between flushes, cleared.
	merging map[store.Receipt]int
	ring    []store.Receipt // without a store: the last 10,000 rows (merged as in a flush), in memory
	flushMu sync.Mutex
	closed  bool

	// added counts every receipt queued (ReceiptsAdded).
	added atomic.Uint64
	// written counts the receipts written since the last maintenance
	// began (under mu).
	written int64
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
	r.maintCtx, r.maintStop = context.WithCancel(context.Background())
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

// maintainTrigger is how many receipts written start a maintenance.
func (r *receiptLog) maintainTrigger() int64 { return max(1, r.ret.MaxRows/10) }

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
			again := r.written >= r.maintainTrigger()
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
	r.written = 0
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

// add queues a receipt. It waits only when 64k receipts are pending.
func (r *receiptLog) add(rc store.Receipt) {
	r.mu.Lock()
	for len(r.pending) >= maxPending && !r.closed {
		r.room.Wait()
	}
	r.pending = append(r.pending, rc)
	n := len(r.pending)
	r.added.Add(1)
	r.mu.Unlock()
	if n == receiptBatch {
		go r.flush()
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
			r.flush()
		case <-m.C:
			if r.srv != nil {
				r.maintainAsync()
			}
		case <-r.stop:
			r.flush()
			return
		}
	}
}

// flush writes everything pending. Whatever add has returned for is
// included, so a receipt is visible as soon as its request ends.
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
	// next spare; cleared, so it holds no strings. A failed batch is
	// kept in pending instead, below.
	recycle := func() {
		if cap(batch) > maxPending {
			return
		}
		clear(batch)
		r.mu.Lock()
		if r.spare == nil {
			r.spare = batch[:0]
		}
		r.mu.Unlock()
	}
	if r.srv == nil {
		r.mu.Lock()
		r.ring = append(r.ring, batch...)
		if over := len(r.ring) - receiptRing; over > 0 {
			r.ring = append([]store.Receipt(nil), r.ring[over:]...)
		}
		r.mu.Unlock()
		recycle()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = r.srv.AddReceipts(ctx, batch); err == nil {
			r.wrote(int64(len(batch)))
			recycle()
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	// Keep them for the next flush rather than lose them.
	r.mu.Lock()
	r.pending = append(batch, r.pending...)
	r.mu.Unlock()
	r.log.Error("writing receipts failed; they are kept and retried", "count", len(batch), "err", err)
	return err
}

// merge merges the receipts of batch identical in every field but Time
// into one (see receiptLog), in place, keeping their order of first
// appearance; it returns the merged rows. flushMu is held.
func (r *receiptLog) merge(batch []store.Receipt) []store.Receipt {
	if r.merging == nil {
		r.merging = make(map[store.Receipt]int)
	}
	defer func() {
		// Clearing costs the map's capacity: one grown by a burst of
		// distinct receipts is dropped rather than cleared every flush.
		if len(r.merging) > 2*receiptBatch {
			r.merging = nil
		} else {
			clear(r.merging)
		}
	}()
	out := batch[:0]
	// prev is the last receipt's key and row: a run of identical
	// receipts (one skill loaded over and over) merges without hashing.
	var prev store.Receipt
	prevRow := -1
	for i := range batch {
		rc := batch[i]
		n := max(rc.Count, 1)
		k := rc
		k.Time, k.Count, k.ID = time.Time{}, 0, 0
		j, ok := prevRow, prevRow >= 0 && k == prev
		if !ok {
			j, ok = r.merging[k]
		}
		prev, prevRow = k, j
		if ok {
			m := &out[j]
			m.Count += n
			if rc.Time.Before(m.Time) {
				m.Time = rc.Time
			}
			continue
		}
		r.merging[k] = len(out)
		prevRow = len(out)
		rc.Count = n
		out = append(out, rc)
	}
	clear(batch[len(out):])
	return out
}

// wrote counts n receipts written, and starts a maintenance when enough
// were; when maintenance lags by twice that, it runs one here, holding
// further flushes (flushMu is held) until the store is back in bounds.
func (r *receiptLog) wrote(n int64) {
	r.mu.Lock()
	r.written += n
	w := r.written
	r.mu.Unlock()
	trigger := r.maintainTrigger()
	switch {
	case w >= 2*trigger:
		r.maintMu.Lock()
		r.mu.Lock()
		still := r.written >= 2*trigger
		r.mu.Unlock()
		if still {
			r.maintain()
		}
		r.maintMu.Unlock()
	case w >= trigger:
		r.maintainAsync()
	}
}

func (r *receiptLog) memory(q store.ReceiptQuery) []store.Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	out := []store.Receipt{}
	for i := len(r.ring) - 1; i >= 0 && len(out) < limit; i-- {
		rc := r.ring[i]
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
	for _, rc := range r.ring {
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

func (r *receiptLog) close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.room.Broadcast()
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.maintStop()
	r.maintGroup.Wait()
	return nil
}

// ReceiptsAdded counts the receipts this service has recorded since it
// started: an answer of Receipts stays current while it does not move
// (on this instance; other instances sharing the store write their own).
func (s *Service) ReceiptsAdded() uint64 { return s.rcpt.added.Load() }
