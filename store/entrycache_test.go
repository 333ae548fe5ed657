package store

import (
	"fmt"
	"testing"
)

// The cache never holds more than its bound, and a text over a quarter of
// it is not kept.
func TestEntryCacheBound(t *testing.T) {
	c := newEntryCache(10_000)
	for i := range 1000 {
		c.put(entryKey{fmt.Sprintf("s%d", i), 1, "d"}, make([]byte, 300+i%700))
		if _, size := c.stats(); size > 10_000 {
			t.Fatalf("after %d texts the cache holds %d bytes, over its 10,000", i+1, size)
		}
	}
	if n, _ := c.stats(); n < 10 {
		t.Errorf("the cache keeps %d texts", n)
	}
	c.put(entryKey{"big", 1, "d"}, make([]byte, 2501))
	if _, ok := c.get(entryKey{"big", 1, "d"}); ok {
		t.Error("a text over a quarter of the bound was kept")
	}
	if newEntryCache(-1) != nil || newEntryCache(0) != nil {
		t.Error("a cache of no bytes exists")
	}
}
