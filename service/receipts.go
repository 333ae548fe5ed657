package service

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// receiptLog batches receipts so that recording one never costs a
// request a database write: they are written every 50 ms or 250 at a
// time. When the buffer is full, requests wait: receipts are never dropped.
type receiptLog struct {
	srv  store.Server
	log  *slog.Logger
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	room    *sync.Cond // signalled when pending drains
	pending []store.Receipt
	ring    []store.Receipt // without a store: the last 10,000, in memory
	flushMu sync.Mutex
	closed  bool
}

const (
	receiptBatch = 250
	receiptEvery = 50 * time.Millisecond
	receiptRing  = 10_000
	maxPending   = 64 << 10
)

func newReceiptLog(srv store.Server, log *slog.Logger) *receiptLog {
	r := &receiptLog{srv: srv, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	r.room = sync.NewCond(&r.mu)
	go r.loop()
	return r
}

// add queues a receipt. It waits only when 64k receipts are pending.
func (r *receiptLog) add(rc store.Receipt) {
	r.mu.Lock()
	for len(r.pending) >= maxPending && !r.closed {
		r.room.Wait()
	}
	r.pending = append(r.pending, rc)
	n := len(r.pending)
	r.mu.Unlock()
	if n == receiptBatch {
		go r.flush()
	}
}

func (r *receiptLog) loop() {
	defer close(r.done)
	t := time.NewTicker(receiptEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.flush()
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
	r.pending = nil
	r.room.Broadcast()
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
	r.room.Broadcast()
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	return nil
}
