package httpapi

import "sync"

// bounded is a map that starts afresh when a put would take it past its
// bounds: more than maxLen entries (0: no such bound), or more than
// maxBytes of size(value) in all (0 or a nil size: no such bound). The
// route caches keep what they can read again, so starting afresh loses
// nothing but time, and a bound is never exceeded. Safe for concurrent
// use; the zero value with bounds set is ready.
type bounded[K comparable, V any] struct {
	maxLen   int
	maxBytes int
	size     func(V) int

	mu    sync.Mutex
	m     map[K]V
	bytes int
}

func (b *bounded[K, V]) get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *bounded[K, V]) put(k K, v V) {
	n := 0
	if b.size != nil {
		n = b.size(v)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.m[k]; ok && b.size != nil {
		b.bytes -= b.size(old)
	}
	if b.m == nil || b.maxLen > 0 && len(b.m) >= b.maxLen || b.maxBytes > 0 && b.bytes+n > b.maxBytes {
		b.m, b.bytes = map[K]V{}, 0
	}
	b.m[k] = v
	b.bytes += n
}
