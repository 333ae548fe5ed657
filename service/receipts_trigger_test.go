package service

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

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
				if !strings.HasPrefix(stmt, "SELECT last_id FROM receipt_rollup") {
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
