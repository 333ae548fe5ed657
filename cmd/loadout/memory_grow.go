package main

import "runtime/debug"

// The lasting rule, twice the live heap plus lastingHeadroom, is measured
// when serving starts and again when start-up settles. The live heap
// grows after that, as requests fill what the server keeps: a load spread
// over 10,000 skills fills the load route's encoded bodies and the
// envelopes (72 MB), the first install index of an agent its tarballs.
// Measured before, the limit sat just above the grown heap and the
// collector ran back to back: in bench/server.sh's spread rounds
// (the cached load of every skill, right after the warm-up) garbage
// collection took 46% of the server's CPU, where once measured again it
// took 3-4%.
//
// So after every collection, once the live heap has grown by more than
// lastingRegrow of the one the limit was measured from, the limit is
// measured again from it. It only rises: a heap that shrinks keeps the
// limit it had (its room is the collector's pacing, GOGC, which the
// limit then does not bind), and the number of times it rises is
// bounded by the heap's growth (about ten from 64 MiB to 1 GiB).
const lastingRegrow = 4 // a quarter

// regrow arms the per-collection check of the lasting rule, once; t.mu
// is held. live is the heap the limit was measured from.
func (t *memoryTuner) regrow(live uint64) {
	t.lastingLive = live
	if t.regrowArmed {
		return
	}
	t.regrowArmed = true
	onEachGC(func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.stopped {
			t.regrowArmed = false
			return false
		}
		if t.headroom != 0 {
			return true // the loading rule follows the heap itself
		}
		if t.pending > 0 {
			// Background start-up work measures the rule again when it
			// ends; meanwhile it keeps its room (warmRoom).
			t.warmRoom()
			return true
		}
		live := liveHeap()
		if live <= t.lastingLive+t.lastingLive/lastingRegrow {
			return true
		}
		limit := 2*int64(live) + lastingHeadroom
		if limit <= debug.SetMemoryLimit(-1) {
			return true
		}
		debug.SetMemoryLimit(limit)
		t.lastingLive = live
		if t.logger != nil {
			t.logger.Info("memory: the live heap grew; soft limit raised", "live_heap_mb", live>>20, "soft_limit_mb", limit>>20)
		}
		return true
	})
}

// warmRoom raises the limit, while start-up work runs in the background,
// to warmupHeadroom above the live heap once less than half that is left:
// the warm-up's limit (warmup) is measured from the catalog's heap, and a
// warm-up that keeps more than the catalog again would otherwise leave
// the collector no room and make it run back to back. (Raised whenever
// less than warmupHeadroom was left, it rose 2 MB a collection at 50,000
// skills, a log line each.) It only rises; t.mu is held.
func (t *memoryTuner) warmRoom() {
	live := liveHeap()
	if int64(live)+warmupHeadroom/2 <= debug.SetMemoryLimit(-1) {
		return
	}
	limit := int64(live) + warmupHeadroom
	debug.SetMemoryLimit(limit)
	if t.logger != nil {
		t.logger.Info("memory: the warm-up's live heap grew; soft limit raised", "live_heap_mb", live>>20, "soft_limit_mb", limit>>20)
	}
}
