package sqlstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
)

func distinctReceipts(from, n int) []store.Receipt {
	rs := make([]store.Receipt, n)
	for i := range rs {
		rs[i] = store.Receipt{Agent: "a", Skill: fmt.Sprint("s", from+i), Action: "load", Source: "folder", Outcome: "ok"}
	}
	return rs
}

// TestMemoryRollupBounds: spans hold at most maxSpanKeys daily rows each
// and maxRollKeys together: a batch that reaches the bound exactly is
// counted, one past it is left to the table; popping a span frees its
// keys.
func TestMemoryRollupBounds(t *testing.T) {
	var m memRollup
	now := time.Now().UnixMicro()
	id := int64(0)
	add := func(rs []store.Receipt) {
		m.added(rs, id+1, id+int64(len(rs)), now)
		id += int64(len(rs))
	}
	const batch = 10_000
	for k := 0; k < maxRollKeys-batch; k += batch {
		add(distinctReceipts(k, batch))
	}
	add(distinctReceipts(maxRollKeys-batch, batch-10))
	add(distinctReceipts(maxRollKeys-10, 10)) // reaches the bound exactly
	if m.keys != maxRollKeys {
		t.Fatalf("%d keys held, want %d", m.keys, maxRollKeys)
	}
	if want := maxRollKeys / maxSpanKeys; len(m.spans) != want {
		t.Errorf("%d spans, want %d", len(m.spans), want)
	}
	for i, sp := range m.spans {
		if len(sp.counts) > maxSpanKeys {
			t.Errorf("span %d holds %d keys", i, len(sp.counts))
		}
		if i > 0 && sp.from != m.spans[i-1].to {
			t.Errorf("span %d starts at %d, the last ended at %d", i, sp.from, m.spans[i-1].to)
		}
	}
	last := m.spans[len(m.spans)-1].to
	add(distinctReceipts(maxRollKeys, 1)) // one past
	if m.keys != maxRollKeys || m.spans[len(m.spans)-1].to != last {
		t.Errorf("one key past the bound: %d keys, last span ends at %d; want %d and %d", m.keys, m.spans[len(m.spans)-1].to, maxRollKeys, last)
	}
	if sp := m.pop(); sp == nil || m.keys != maxRollKeys-len(sp.counts) {
		t.Fatalf("after a pop: %d keys", m.keys)
	}
	add(distinctReceipts(maxRollKeys+1, 1))
	if m.keys != maxRollKeys-maxSpanKeys+1 {
		t.Errorf("after a pop, one more: %d keys, want %d", m.keys, maxRollKeys-maxSpanKeys+1)
	}
	// The receipt after the refused one starts a new span: the refused
	// one lies between and is the table's.
	if sp := m.spans[len(m.spans)-1]; sp.from != last+1 || sp.to != last+2 || sp.rows != 1 {
		t.Errorf("the span after a refused receipt: %+v, want (%d, %d]", sp, last+1, last+2)
	}
}
