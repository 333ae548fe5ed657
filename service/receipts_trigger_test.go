package service

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store"
)

// TestMaintainTrigger: a maintenance starts once a tenth of MaxRows rows
// were written since the last one began, or a tenth of MaxBytes bytes
// (store.ReceiptBytes), and not one row or byte before: the rollup mark
// stays until then, and moves past every row written at that point.
func TestMaintainTrigger(t *testing.T) {
	row := func(i int) store.Receipt {
		rc := mergeBase(time.Now())
		rc.Path = fmt.Sprintf("p%03d.md", i) // no two merge; every row the same size
		return rc
	}
	size := func() int64 { rc := row(0); safeReceipt(&rc); return store.ReceiptBytes(&rc) }()
	for _, c := range []struct {
		name string
		ret  store.Retention
	}{
		{"rows", store.Retention{MaxRows: 100, MaxBytes: 1 << 40}},
		{"bytes", store.Retention{MaxRows: 1 << 40, MaxBytes: 100 * size}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := freshStore(t)
			r := newReceiptLog(st, slog.New(slog.DiscardHandler), c.ret)
			t.Cleanup(func() { r.close() })
			r.maintGroup.Wait() // the one at start
			mark := func() (n int64) {
				t.Helper()
				if err := st.DB().QueryRow(`SELECT last_id FROM receipt_rollup WHERE id = 1`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			for i := range 9 {
				r.add(row(i))
			}
			if err := r.flush(); err != nil {
				t.Fatal(err)
			}
			r.maintGroup.Wait()
			if m := mark(); m != 0 {
				t.Fatalf("9 rows (one under a tenth of the bound) started a maintenance: mark %d", m)
			}
			r.add(row(9))
			if err := r.flush(); err != nil {
				t.Fatal(err)
			}
			r.maintGroup.Wait()
			if m := mark(); m != 10 {
				t.Fatalf("10 rows (a tenth of the bound): mark %d, want 10 (a maintenance rolled them up)", m)
			}
		})
	}
}

// TestMaintainAgainWhileBehind: a maintenance goes on with another while
// a tenth of MaxRows rows or more were written during it, and stops when
// fewer were (one under), so that once writes stop, less than a tenth is
// left unmaintained.
func TestMaintainAgainWhileBehind(t *testing.T) {
	for _, c := range []struct {
		meanwhile int64
		runs      int
	}{{10, 2}, {9, 1}} {
		t.Run(fmt.Sprint(c.meanwhile), func(t *testing.T) {
			st := freshStore(t)
			r := newReceiptLog(st, slog.New(slog.DiscardHandler), store.Retention{MaxRows: 100})
			t.Cleanup(func() { r.close() })
			r.maintGroup.Wait() // the one at start
			var mu sync.Mutex
			runs := 0
			st.SetFault(func(stmt string) error {
				// Once per maintenance: its last step.
				if !strings.HasPrefix(stmt, "DELETE FROM receipt_bytes WHERE last_id <") {
					return nil
				}
				mu.Lock()
				defer mu.Unlock()
				runs++
				if runs == 1 { // rows written by requests meanwhile
					r.mu.Lock()
					r.written += c.meanwhile
					r.mu.Unlock()
				}
				return nil
			})
			t.Cleanup(func() { st.SetFault(nil) })
			r.maintainAsync()
			r.maintGroup.Wait()
			mu.Lock()
			defer mu.Unlock()
			if runs != c.runs {
				t.Errorf("%d rows written during a maintenance (bound 100): %d maintenances, want %d", c.meanwhile, runs, c.runs)
			}
		})
	}
}

// TestReceiptsWaitWhenFull: while the store takes writes, a receipt that
// finds maxPending pending waits for room instead of being dropped (one
// under the bound does not wait), and every one is written once a flush
// runs.
func TestReceiptsWaitWhenFull(t *testing.T) {
	st := freshStore(t)
	r := newReceiptLog(st, slog.New(slog.DiscardHandler), store.Retention{})
	t.Cleanup(func() { r.close() })
	r.flushMu.Lock() // no flush runs: a slow store
	locked := true
	defer func() {
		if locked {
			r.flushMu.Unlock()
		}
	}()
	for range maxPending - 1 {
		r.add(mergeBase(time.Now()))
	}
	last := make(chan struct{})
	go func() { r.add(mergeBase(time.Now())); close(last) }()
	select {
	case <-last:
	case <-testutil.After(t):
		t.Fatal("the receipt that fills the bound waited")
	}
	extra := make(chan struct{})
	go func() { r.add(mergeBase(time.Now())); close(extra) }()
	select {
	case <-extra:
		t.Fatalf("a receipt past maxPending did not wait (lost %d)", r.lost.Load())
	case <-time.After(300 * time.Millisecond):
	}
	locked = false
	r.flushMu.Unlock()
	select {
	case <-extra:
	case <-testutil.After(t):
		t.Fatal("the waiting receipt was not let in after a flush")
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	if n, lost := goodLoads(t, st), r.lost.Load(); n != maxPending+1 || lost != 0 {
		t.Errorf("%d loads written, %d lost; want %d and none", n, lost, maxPending+1)
	}
}

// TestReceiptsRetryPauseGrows: while the store fails, the pause before the
// next try starts at receiptEvery and doubles (about 6 tries in 1.6 s, not
// one every tick), up to receiptRetryMax and no further; a write that
// works ends the pause.
func TestReceiptsRetryPauseGrows(t *testing.T) {
	st := freshStore(t)
	var mu sync.Mutex
	var tries []time.Time
	down := true
	st.SetFault(func(stmt string) error {
		mu.Lock()
		defer mu.Unlock()
		if down && strings.Contains(stmt, "INSERT INTO receipts") {
			tries = append(tries, time.Now())
			return errors.New("connection refused")
		}
		return nil
	})
	r := newReceiptLog(st, slog.New(slog.DiscardHandler), store.Retention{})
	t.Cleanup(func() { r.close() })
	r.add(mergeBase(time.Now()))
	time.Sleep(1600 * time.Millisecond)
	mu.Lock()
	n := len(tries)
	var lastGap time.Duration
	if n >= 2 {
		lastGap = tries[n-1].Sub(tries[n-2])
	}
	mu.Unlock()
	if n < 3 || n > 8 || lastGap < 300*time.Millisecond {
		t.Errorf("%d tries in 1.6 s, the last %v after the one before; want about 6, the pause doubling from %v", n, lastGap, receiptEvery)
	}
	// Near the cap: the next pause is the cap, not twice the last.
	r.flushMu.Lock()
	r.backoff, r.retryAt = 4*time.Second, time.Time{}
	r.flushMu.Unlock()
	if err := r.flush(); err == nil {
		t.Fatal("a flush with the store down did not fail")
	}
	r.flushMu.Lock()
	b := r.backoff
	r.flushMu.Unlock()
	if b != receiptRetryMax {
		t.Errorf("after a pause of 4 s the next is %v, want receiptRetryMax (%v)", b, receiptRetryMax)
	}
	// The store works again: the pause ends with the next write.
	mu.Lock()
	down = false
	mu.Unlock()
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	r.flushMu.Lock()
	b, at := r.backoff, r.retryAt
	r.flushMu.Unlock()
	if b != 0 || !at.IsZero() {
		t.Errorf("after a write that worked: pause %v until %v, want none", b, at)
	}
}

// TestReceiptsDroppedWhileDown: after a write failed (not for the
// values), a receipt that finds maxPending pending is dropped and counted
// rather than waiting (the one that fills the bound is kept); each log
// line says how many were lost since the one before, and the total; a
// failure that lost nothing is logged too, and a close that loses nothing
// logs nothing of losses.
func TestReceiptsDroppedWhileDown(t *testing.T) {
	st := freshStore(t)
	var mu sync.Mutex
	down := true
	st.SetFault(func(stmt string) error {
		mu.Lock()
		defer mu.Unlock()
		if down && strings.Contains(stmt, "INSERT INTO receipts") {
			return errors.New("connection refused")
		}
		return nil
	})
	var logs logBuffer
	r := newReceiptLog(st, logs.logger(), store.Retention{})
	seq := 0
	distinct := func() store.Receipt { // no two merge
		seq++
		rc := mergeBase(time.Now())
		rc.Path = fmt.Sprintf("p%d", seq)
		return rc
	}
	r.add(distinct())
	if err := r.flush(); err == nil {
		t.Fatal("a flush with the store down did not fail")
	}
	if !strings.Contains(logs.String(), "writing receipts failed") {
		t.Fatalf("a failed write that lost nothing was not logged:\n%s", logs.String())
	}
	fill := func(n int) {
		t.Helper()
		r.flushMu.Lock() // no flush meanwhile
		defer r.flushMu.Unlock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range n {
				r.add(distinct())
			}
		}()
		select {
		case <-done:
		case <-testutil.After(t):
			t.Fatal("adding receipts with the store down waited for room")
		}
	}
	fill(maxPending - 1 + 10) // 1 already pending
	r.mu.Lock()
	pending := len(r.pending)
	r.mu.Unlock()
	if pending != maxPending || r.lost.Load() != 10 {
		t.Fatalf("%d pending, %d lost; want %d (the bound, the last place taken) and 10", pending, r.lost.Load(), maxPending)
	}
	r.flush()
	fill(5)
	r.flush()
	for _, want := range []string{"lost=10 lost_total=10", "lost=5 lost_total=15", `err="store: database: connection refused"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log line with %q:\n%.3000s", want, logs.String())
		}
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := st.DB().QueryRow(`SELECT sum(count) FROM receipts`).Scan(&n); err != nil || n != maxPending {
		t.Errorf("%d written once the store works, want the %d pending", n, maxPending)
	}
	r.close()
	if strings.Contains(logs.String(), "before exit") {
		t.Errorf("a close that lost nothing logged a loss:\n%.3000s", logs.String())
	}
}

// TestFlushWaitsWhenTwiceBehind: a flush that leaves twice a tenth of
// MaxRows written since the last maintenance began runs one itself,
// holding the flush (and so the next ones) until it is done; one row
// fewer starts it in the background and returns at once.
func TestFlushWaitsWhenTwiceBehind(t *testing.T) {
	for _, c := range []struct {
		rows int
		sync bool
	}{{20, true}, {19, false}} {
		t.Run(fmt.Sprint(c.rows), func(t *testing.T) {
			st := freshStore(t)
			r := newReceiptLog(st, slog.New(slog.DiscardHandler), store.Retention{MaxRows: 100})
			t.Cleanup(func() { r.close() })
			r.maintGroup.Wait() // the one at start
			st.SetFault(func(stmt string) error {
				if strings.HasPrefix(stmt, "SELECT last_id FROM receipt_rollup") {
					time.Sleep(time.Second) // a slow maintenance
				}
				return nil
			})
			t.Cleanup(func() { st.SetFault(nil) })
			mark := func() (n int64) {
				t.Helper()
				if err := st.DB().QueryRow(`SELECT last_id FROM receipt_rollup WHERE id = 1`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			for i := range c.rows {
				rc := mergeBase(time.Now())
				rc.Path = fmt.Sprintf("p%d", i)
				r.add(rc)
			}
			if err := r.flush(); err != nil {
				t.Fatal(err)
			}
			if got, want := mark() == int64(c.rows), c.sync; got != want {
				t.Errorf("%d rows written (bound 100): maintained before the flush returned %v, want %v", c.rows, got, want)
			}
			r.maintGroup.Wait()
			if m := mark(); m != int64(c.rows) {
				t.Errorf("after the maintenance: mark %d, want %d", m, c.rows)
			}
		})
	}
}
