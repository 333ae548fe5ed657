package main

import (
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The garbage collector's settings in serve and mcp. GOMEMLIMIT and GOGC
// from the environment always win: with either set, none of this applies.
//
// While the catalog loads, discovery makes several times the garbage of
// what it keeps. A fixed soft limit under the live heap (96 MiB, before)
// made the collector run back to back for the whole load once the catalog
// outgrew it: at 50,000 skills the load took 9 s of CPU instead of 5, and
// on a cold page cache, where the load waits on the disk for half a
// minute, 25 s of CPU instead of 6-15 (the "32-38 s first start"). So the
// limit follows the live heap instead: after every collection it is set
// to startupHeadroom times the live heap, at least startupFloor. The
// collector then runs about as often as with GOGC=50 whatever the size
// of the catalog, and the peak stays under twice what the catalog keeps.
//
// Once the catalog is loaded, the garbage is handed back to the system at
// once and no soft limit is left: GOGC's default (a collection each time
// the heap has grown by the live heap) governs, which holds the heap
// under about twice the live heap as the old rule did, but as the live
// heap grows (search indexes built on first use, sessions, caches) the
// goal grows with it. The old rule, a limit of twice the live heap at
// start, bound below that goal as soon as anything was added after start,
// and made the collector run about 3 times as often under load; measured
// with bench/gcrule.sh at 100, 10,000 and 50,000 skills (see the report
// in the commit that chose this rule).
const (
	// startupHeadroom is the soft memory limit while the catalog loads, as
	// a multiple of the live heap after the last collection.
	startupHeadroom = 1.5
	// startupFloor is the least soft memory limit while the catalog loads:
	// small catalogs never collect for its sake.
	startupFloor = 64 << 20
)

// memoryTuner applies the rules above.
type memoryTuner struct {
	off bool // GOMEMLIMIT or GOGC is set

	mu      sync.Mutex
	loading bool
	limit   int64 // the last limit set while loading
}

// startMemory applies the loading rule, unless the environment sets
// GOMEMLIMIT or GOGC.
func startMemory(getenv func(string) string) *memoryTuner {
	t := &memoryTuner{off: getenv("GOMEMLIMIT") != "" || getenv("GOGC") != ""}
	if t.off {
		return t
	}
	t.loading = true
	t.set(liveHeap())
	onEachGC(func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.loading {
			return false
		}
		t.set(liveHeap())
		return true
	})
	return t
}

// set sets the loading limit for a live heap of live bytes; t.mu is held
// (or t is not shared yet).
func (t *memoryTuner) set(live uint64) {
	t.limit = max(int64(float64(live)*startupHeadroom), startupFloor)
	debug.SetMemoryLimit(t.limit)
}

// loaded ends the loading rule: the garbage of the load is returned to
// the system and the soft limit is lifted (GOGC governs).
func (t *memoryTuner) loaded(logger *slog.Logger) {
	if !t.off {
		t.mu.Lock()
		t.loading = false
		t.mu.Unlock()
		debug.SetMemoryLimit(math.MaxInt64)
	}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	logger.Info("memory", "live_heap_mb", ms.HeapAlloc>>20, "sys_mb", (ms.HeapSys-ms.HeapReleased)>>20, "gc_rule", t.rule())
}

func (t *memoryTuner) rule() string {
	if t.off {
		return "GOMEMLIMIT/GOGC from the environment"
	}
	return "GOGC=100, no soft limit"
}

// liveHeap is the heap marked live by the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// onEachGC calls fn after every garbage collection until it returns
// false. It runs on the finalizer goroutine: fn must be quick.
func onEachGC(fn func() bool) {
	// A sentinel with a pointer is never a tiny allocation (whose
	// finalizer might never run) and is garbage at the next collection.
	type sentinel struct{ p *int }
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if fn() {
				arm()
			}
		})
	}
	arm()
}
