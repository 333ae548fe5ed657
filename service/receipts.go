package service

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// receiptLog batches receipts so that recording one never costs a
// request a database write: they are written every 200 ms or 1,000 at a
// time. When the buffer is full, requests wait: receipts are never dropped.
type receiptLog struct {
	srv  store.Server
	log  *slog.Logger
	in   chan store.Receipt
	done chan struct{}

	mu      sync.Mutex
	pending []store.Receipt
	ring    []store.Receipt // without a store: the last 10,000, in memory
	flushMu sync.Mutex
	closed  bool
}

const (
	receiptBatch = 1000
	receiptEvery = 200 * time.Millisecond
	receiptRing  = 10_000
)

func newReceiptLog(srv store.Server, log *slog.Logger) *receiptLog {
	r := &receiptLog{srv: srv, log: log, in: make(chan store.Receipt, 64<<10), done: make(chan struct{})}
	go r.loop()
	return r
}

func (r *receiptLog) add(rc store.Receipt) { r.in <- rc }

func (r *receiptLog) loop() {
	defer close(r.done)
	t := time.NewTicker(receiptEvery)
	defer t.Stop()
	for {
		select {
		case rc, ok := <-r.in:
			if !ok {
				r.flush()
				return
			}
			r.mu.Lock()
			r.pending = append(r.pending, rc)
			n := len(r.pending)
			r.mu.Unlock()
			if n >= receiptBatch {
				r.flush()
			}
		case <-t.C:
			r.flush()
		}
	}
}

// flush writes what is pending, including what is still in the channel.
func (r *receiptLog) flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	for drained := false; !drained; {
		select {
		case rc, ok := <-r.in:
			if !ok {
				drained = true
				break
			}
			r.pending = append(r.pending, rc)
		default:
			drained = true
		}
	}
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if r.srv == nil {
		r.mu.Lock()
		r.ring = append(r.ring, batch...)
		if over := len(r.ring) - receiptRing; over > 0 {
			r.ring = append([]store.Receipt(nil), r.ring[over:]...)
		}
		r.mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = r.srv.AddReceipts(ctx, batch); err == nil {
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

func (r *receiptLog) close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	close(r.in)
	<-r.done
	return nil
}
