package service

import (
	"fmt"
	"log/slog"
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
