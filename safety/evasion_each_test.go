package safety_test

import (
	"testing"

	"github.com/loadout/loadout/safety"
)

// TestEvasionEveryCase: the corpus's bar is 90%, but every case is caught
// today; each one is a regression test of its own, so that a change which
// loses one says which.
func TestEvasionEveryCase(t *testing.T) {
	for _, e := range evasions() {
		if find(safety.Check(evasionInput(e), nil), e.code) == nil {
			t.Errorf("%s: %s not reported", e.name, e.code)
		}
	}
}

// TestCacheBounded: the cache never holds more than MaxEntries entries
// (it starts over when full), and what it returns is what Check finds.
func TestCacheBounded(t *testing.T) {
	for _, max := range []int{1, 2, 3, 5} {
		cache := safety.NewCache()
		cache.MaxEntries = max
		for round := range 2 {
			for i, e := range append(evasions()[:12], fineTexts()[:4]...) {
				in := evasionInput(e)
				want := safety.Check(in, nil)
				got := safety.CheckCached(in, nil, cache)
				if len(got) != len(want) {
					t.Fatalf("max %d round %d case %d: %v, want %v", max, round, i, got, want)
				}
				if n := cache.Len(); n > max {
					t.Fatalf("max %d: %d entries", max, n)
				}
			}
		}
	}
	// The default bound is generous: a few skills fit without starting over.
	cache := safety.NewCache()
	for _, e := range evasions()[:20] {
		safety.CheckCached(evasionInput(e), nil, cache)
	}
	if cache.Len() < 20 {
		t.Errorf("default cache holds %d entries after 20 skills", cache.Len())
	}
}
