package httpapi

import "testing"

// A bounded map never holds more than its bounds: it starts afresh
// instead, and a value replaced under the same key is counted once.
func TestBoundedStaysWithinBounds(t *testing.T) {
	b := bounded[int, []byte]{maxLen: 3, maxBytes: 10, size: func(v []byte) int { return len(v) }}
	for i := range 20 {
		b.put(i%5, make([]byte, i%4))
		if len(b.m) > 3 || b.bytes > 10 {
			t.Fatalf("after put %d: %d entries, %d bytes (bounds 3, 10)", i, len(b.m), b.bytes)
		}
		total := 0
		for _, v := range b.m {
			total += len(v)
		}
		if total != b.bytes {
			t.Fatalf("after put %d: counted %d bytes, holds %d", i, b.bytes, total)
		}
		if v, ok := b.get(i % 5); !ok || len(v) != i%4 {
			t.Fatalf("after put %d: get gives %v, %v", i, v, ok)
		}
	}
	b.put(1, make([]byte, 4))
	b.put(1, make([]byte, 9)) // replaces: 9 bytes, not 13
	if v, ok := b.get(1); !ok || len(v) != 9 || b.bytes != 9 {
		t.Fatalf("a replaced value: %d bytes counted, get %d, %v", b.bytes, len(v), ok)
	}
}
