package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/httpbody"
)

// The search cache holds at most MaxSearchCache answers and
// MaxSearchCacheBytes (queries and answers, each answer twice for its gzip
// form): past either it starts afresh. Exactly at a bound everything is
// kept; one past it, the cache starts afresh.
func TestSearchCacheBounded(t *testing.T) {
	l := &catalog.Loadout{}
	small := httpbody.New([]byte(`{"query":"q","skills":[]}`), "application/json")
	var c searchCache
	for i := range MaxSearchCache {
		c.put(searchKey{l: l, gen: 1, q: fmt.Sprint(i), limit: 10}, small)
	}
	if len(c.m) != MaxSearchCache || c.get(searchKey{l: l, gen: 1, q: "0", limit: 10}) != small {
		t.Fatalf("at the bound: %d entries kept, want %d", len(c.m), MaxSearchCache)
	}
	c.put(searchKey{l: l, gen: 1, q: "one more", limit: 10}, small)
	if len(c.m) != 1 || c.get(searchKey{l: l, gen: 1, q: "one more", limit: 10}) != small {
		t.Fatalf("one past the bound: %d entries, want 1 (afresh)", len(c.m))
	}

	// Bytes: answers of a quarter of the bound (counted twice: half each).
	c = searchCache{}
	q := "q"
	big := httpbody.New([]byte(strings.Repeat("x", MaxSearchCacheBytes/4-len(q))), "application/json")
	k := func(i int) searchKey { return searchKey{l: l, gen: 1, q: q, limit: i} }
	c.put(k(1), big)
	c.put(k(2), big) // exactly MaxSearchCacheBytes
	if len(c.m) != 2 || c.bytes > MaxSearchCacheBytes {
		t.Fatalf("at the byte bound: %d entries, %d bytes", len(c.m), c.bytes)
	}
	c.put(k(3), big)
	if len(c.m) != 1 || c.get(k(3)) != big || c.bytes > MaxSearchCacheBytes {
		t.Fatalf("past the byte bound: %d entries, %d bytes, want 1 (afresh)", len(c.m), c.bytes)
	}
	// One answer over the bound by itself is never kept.
	huge := httpbody.New([]byte(strings.Repeat("x", MaxSearchCacheBytes/2+1)), "application/json")
	c.put(k(4), huge)
	if c.get(k(4)) != nil || c.bytes > MaxSearchCacheBytes {
		t.Fatalf("an answer over the bound was kept (%d bytes)", c.bytes)
	}
}

// A newer catalog or usage generation drops the answers of older ones (so
// no old loadout stays referenced), and an answer computed before a change
// (an older generation) is not kept after it.
func TestSearchCacheGenerations(t *testing.T) {
	l1, l2 := &catalog.Loadout{}, &catalog.Loadout{}
	b := httpbody.New([]byte(`{}`), "application/json")
	var c searchCache
	c.put(searchKey{l: l1, gen: 1, usage: 1, q: "a"}, b)
	c.put(searchKey{l: l2, gen: 2, usage: 1, q: "a"}, b)
	if len(c.m) != 1 || c.get(searchKey{l: l1, gen: 1, usage: 1, q: "a"}) != nil {
		t.Fatal("generation 1's answer kept after generation 2's")
	}
	c.put(searchKey{l: l2, gen: 2, usage: 2, q: "a"}, b)
	if len(c.m) != 1 || c.get(searchKey{l: l2, gen: 2, usage: 1, q: "a"}) != nil {
		t.Fatal("usage 1's answer kept after usage 2's")
	}
	c.put(searchKey{l: l1, gen: 1, usage: 2, q: "b"}, b)
	c.put(searchKey{l: l2, gen: 2, usage: 1, q: "b"}, b)
	if len(c.m) != 1 {
		t.Fatalf("an answer of older generations was kept: %d entries", len(c.m))
	}
}

// The prompt cache is the same cache with its own bounds: a newer usage
// generation drops the prompts of the older one (whose descriptions may
// rank differently), and one rendered before it is not kept after it.
func TestPromptCacheGenerations(t *testing.T) {
	l := &catalog.Loadout{}
	b := httpbody.New([]byte(`{}`), "application/json")
	var c promptCache
	c.put(promptKey{l: l, gen: 1, usage: 1, format: "xml"}, b)
	c.put(promptKey{l: l, gen: 1, usage: 2, format: "xml"}, b)
	if len(c.m) != 1 || c.get(promptKey{l: l, gen: 1, usage: 1, format: "xml"}) != nil {
		t.Fatal("usage 1's prompt kept after usage 2's")
	}
	c.put(promptKey{l: l, gen: 1, usage: 1, format: "md"}, b)
	if len(c.m) != 1 {
		t.Fatalf("a prompt of an older usage generation was kept: %d entries", len(c.m))
	}
	c = promptCache{}
	for i := range MaxPromptCache {
		c.put(promptKey{l: l, gen: 1, usage: 2, budget: int64(i)}, b)
	}
	if len(c.m) != MaxPromptCache {
		t.Fatalf("at the bound: %d prompts kept, want %d", len(c.m), MaxPromptCache)
	}
	c.put(promptKey{l: l, gen: 1, usage: 2, budget: -1}, b)
	if len(c.m) != 1 {
		t.Fatalf("one past the bound: %d prompts kept, want 1 (afresh)", len(c.m))
	}
}
