package httpapi

import (
	"bytes"
	"fmt"
	"testing"
)

// The load cache holds at most max bytes of bodies: exactly at the bound
// everything is kept; one byte past it an entry goes (one, picked at
// random) and the newest is kept; a body larger than the bound is never
// kept; putting a key again counts its body once; a newer generation
// starts afresh and an older one is not kept.
func TestLoadCacheBounded(t *testing.T) {
	c := loadCache{m: map[loadKey]*loadEntry{}, max: 1000}
	key := func(i int) loadKey { return loadKey{"a", fmt.Sprint("s", i)} }
	body := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	for i := range 10 {
		c.put(key(i), 1, "t", body(100))
	}
	if len(c.m) != 10 || c.bytes != 1000 {
		t.Fatalf("at the bound: %d entries, %d bytes; want 10 and 1000", len(c.m), c.bytes)
	}
	c.put(key(3), 1, "t", body(100)) // again: counted once
	if len(c.m) != 10 || c.bytes != 1000 {
		t.Fatalf("a key put again: %d entries, %d bytes; want 10 and 1000", len(c.m), c.bytes)
	}
	c.put(key(10), 1, "t", body(1))
	if len(c.m) != 10 || c.bytes != 901 || c.get(key(10), 1, "t") == nil {
		t.Fatalf("one byte past: %d entries, %d bytes, newest kept %v; want 10, 901 and kept", len(c.m), c.bytes, c.get(key(10), 1, "t") != nil)
	}
	if e := c.put(key(11), 1, "t", body(1001)); e == nil || c.get(key(11), 1, "t") != nil || c.bytes != 901 {
		t.Fatalf("a body past the bound: kept %v, %d bytes", c.get(key(11), 1, "t") != nil, c.bytes)
	}
	c.put(key(0), 2, "t", body(50))
	if len(c.m) != 1 || c.bytes != 50 {
		t.Fatalf("a newer generation: %d entries, %d bytes; want 1 and 50", len(c.m), c.bytes)
	}
	c.put(key(1), 1, "t", body(50))
	if c.get(key(1), 1, "t") != nil || c.bytes != 50 {
		t.Fatalf("an older generation was kept")
	}
	if c.get(key(0), 2, "other text") != nil {
		t.Fatalf("an entry was used for another text")
	}
}
