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
// to startupHeadroom times the live heap, at least startupFloor. At 2.5
// times the limit is above the collector's own goal (twice the live heap
// with GOGC's default), so GOGC paces the load and the limit only stops
// the heap outgrowing it while the collector marks. At 50,000 skills
// (live heap 131 MB then), interleaved on 2 busy cores: 1.5 times peaked
// at 257-269 MB for 6.3-7.2 s of CPU to ready, 2 times at 337-342 MB for
// 4.8-5.7 s, 3 times at 386-401 MB for 4.7-5.3 s; the fixed 96 MiB,
// 8.6-10.2 s (483-488 MB peak, with every body held). The catalog has
// since shrunk (live heap 103 MB, bodies kept in a file), and the peak
// no longer follows the headroom. Measured again on a cold page cache
// (bench/serve50k.sh, COLD=1) with 8 Ps: 1.5 times peaked at 213 MB for
// 10.4-11.5 s of CPU to ready, 4.0-4.8 s of it user; 2.5 times at
// 221-227 MB for 9.3-9.6 s, 2.7-2.9 s user (13 collections during the
// load instead of 31). With 16 Ps (ScanProcs) and 2.5 times: 8.5-9.3 s of CPU, ready
// in 5.0-5.5 s (6.2-7.2 s before); on a warm cache 3.2-3.5 s of CPU,
// ready in 1.9-2.1 s (2.4-2.9 s before).
// 3 and 4 times measured the same as 2.5.
//
// Once the catalog is loaded, what start-up builds next (the MCP
// handlers' listings, the folder watch) runs under a fixed limit of twice
// the live heap, measured by a collection (0.3-0.5 s less CPU at 50,000
// skills than following the heap, whose marks still count the load's
// garbage, at the same peak). Once everything start-up builds is built, its garbage is handed back to
// the system at once and the lasting rule applies: a soft limit of twice
// the live heap plus lastingHeadroom. Requests make garbage at a rate that
// depends on the load, not on the size of the catalog, so the room left
// for it is a fixed amount on top of what GOGC's default would give a
// catalog of that size. The rule before, a limit of twice the live heap,
// left less room than GOGC itself once the runtime's own overhead was
// counted, so it bound first at every size over a few thousand skills and
// made the collector run 2.6-3.5 times per request as often as with no
// limit; with no limit at all, the collector's goal grows with the
// garbage made while it marks, and a server of 50,000 skills under load
// held 475-510 MB. Measured with bench/gcrule.sh (64 connections, HTTP
// cached load then MCP read_skill_file, 2 cores, interleaved), collections
// per 1,000 requests and resident memory after the load:
//
//	skills  rule               GCs/1k req  RSS      live heap at start
//	10,000  2×live (old)       1.4-2.1     105 MB   29 MB
//	10,000  2×live + 128 MiB   1.0-1.1     145 MB
//	10,000  no limit           0.8         140 MB
//	50,000  2×live (old)       0.6         290 MB   135 MB
//	50,000  2×live + 128 MiB   0.26-0.27   416 MB
//	50,000  no limit           0.16-0.23   475-510 MB
//
// Throughput followed the collections: at 50,000 skills the old rule
// served 0.5-0.8× the HTTP requests and MCP calls of the other two, which
// were alike within the machine's noise. The limit is soft: past it the
// collector takes at most half the CPU, and never stalls the server.
const (
	// startupHeadroom is the soft memory limit while the catalog loads, as
	// a multiple of the live heap after the last collection.
	startupHeadroom = 2.5
	// startupFloor is the least soft memory limit while the catalog loads:
	// small catalogs never collect for its sake.
	startupFloor = 64 << 20
	// lastingHeadroom is the room for garbage on top of twice the live
	// heap once serving.
	lastingHeadroom = 128 << 20
	// warmupHeadroom is the room on top of twice the catalog's live heap
	// while start-up work runs in the background after ready, and the
	// room above the live heap it is raised to then, once less than half
	// of it is left (warmRoom).
	warmupHeadroom = 64 << 20
)

// memoryTuner applies the rules above.
type memoryTuner struct {
	off bool // GOMEMLIMIT or GOGC is set

	mu sync.Mutex
	// headroom is the limit as a multiple of the live heap while the limit
	// follows it (loading); 0 once it does not.
	headroom float64
	armed    bool  // the per-collection hook is set
	limit    int64 // the last limit set while following the heap
	pending  int   // start-up work still running in the background
	ran      bool  // some background start-up work began
	serving  bool  // loaded was called
	// lastingLive is the live heap the lasting rule was last measured
	// from; regrowArmed, its per-collection check is set (memory_grow.go).
	lastingLive uint64
	regrowArmed bool
	// catalogLive is the live heap once the catalog was loaded
	// (catalogLoaded), which the lasting rule starts from while start-up
	// work still runs in the background.
	catalogLive uint64
	stopped     bool // stop was called: the limit no longer moves
	logger      *slog.Logger
}

// startMemory applies the loading rule, unless the environment sets
// GOMEMLIMIT or GOGC.
func startMemory(getenv func(string) string) *memoryTuner {
	t := &memoryTuner{off: getenv("GOMEMLIMIT") != "" || getenv("GOGC") != ""}
	if t.off {
		return t
	}
	t.mu.Lock()
	t.follow(startupHeadroom)
	t.mu.Unlock()
	return t
}

// follow makes the limit headroom times the live heap, now and after
// every collection, until headroom is set to 0; t.mu is held.
func (t *memoryTuner) follow(headroom float64) {
	t.headroom = headroom
	t.set(liveHeap())
	if t.armed {
		return
	}
	t.armed = true
	onEachGC(func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.headroom == 0 {
			t.armed = false
			return false
		}
		t.set(liveHeap())
		return true
	})
}

// set sets the limit for a live heap of live bytes; t.mu is held.
func (t *memoryTuner) set(live uint64) {
	t.limit = max(int64(float64(live)*t.headroom), startupFloor)
	debug.SetMemoryLimit(t.limit)
}

// catalogLoaded ends the tracking of the loading rule once the catalog
// is loaded: what start-up builds next (the MCP handlers' listings) runs
// under a fixed limit of twice the live heap, measured exactly by a
// collection, rather than under one that follows a heap still marked
// with the load's garbage.
func (t *memoryTuner) catalogLoaded() {
	if t.off {
		return
	}
	t.mu.Lock()
	t.headroom = 0
	t.mu.Unlock()
	runtime.GC()
	live := liveHeap()
	t.mu.Lock()
	t.catalogLive = live
	t.mu.Unlock()
	debug.SetMemoryLimit(max(2*int64(live), startupFloor))
}

// background tells the tuner that start-up work goes on in the
// background (the folder watch, which walks every folder): when the
// function it returns is called, the lasting rule is measured again, and
// the log says start-up settled. Call it before loaded.
func (t *memoryTuner) background() (done func()) {
	t.mu.Lock()
	t.pending++
	t.ran = true
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.pending--
			if t.pending == 0 && t.serving && !t.off {
				t.lasting("start-up settled")
			}
		})
	}
}

// loaded ends the loading rule and hands the garbage of start-up back to
// the system at once, then applies the lasting rule: a soft limit of twice
// the live heap plus lastingHeadroom (measured again once start-up work
// in the background ends).
func (t *memoryTuner) loaded(logger *slog.Logger) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.serving, t.logger = true, logger
	if t.off {
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		logger.Info("memory", "live_heap_mb", ms.HeapAlloc>>20, "gc", "GOMEMLIMIT/GOGC from the environment")
		return
	}
	if t.pending == 0 {
		why := ""
		if t.ran {
			// The background work began and ended before this (ready
			// comes first now, so a small tree's watch can be up
			// already): start-up has settled.
			why = "start-up settled"
		}
		t.lasting(why)
		return
	}
	// Background start-up work (the folder watch's walk, the warm-up's
	// indexes) runs beside requests: the lasting rule applies at once, and
	// is measured again once it ends. (A limit of 1.5 times the live heap
	// held until then made the collector run back to back under the
	// requests' garbage: on a busy machine, with the watch's walk starved
	// of CPU by the requests, requests cost 5-15 times the CPU for 20 s
	// and more.) It starts from the heap the catalog left, not from one
	// measured now: a collection now would mark the warm-up's half-built
	// indexes and the MCP endpoints' first renders as live (warmup).
	t.warmup()
}

// warmup sets the limit while start-up work runs in the background (it
// is measured again when the work ends); t.mu is held. It starts from the
// heap the catalog left, not from one measured now: a collection now
// marks the warm-up's half-built indexes as live, and at 50,000 skills
// the limit it gave (2 x 332 MB + 128 MiB) let the warm-up peak at
// 720-840 MB; with no limit it peaked at 960 MB. What the warm-up builds
// (the search index, the skill list, the diagnostics, the watch's
// folders) more than doubles the catalog's heap (119 to 281 MB at 50,000
// skills), so it gets warmupHeadroom on top of twice the catalog's: with
// lastingHeadroom only, the collector ran back to back and the warm-up
// took 51 CPU-s instead of 23. That was when the warm-up made gigabytes of
// garbage (a 32 KiB buffer per file digested, two maps per skill indexed,
// two search indexes of the same skills). With those gone, at 50,000
// skills with findings (T50K=DIR bench/serve50k.sh, 2 busy cores), 320 MiB peaked at
// 523 MB resident, 128 MiB at 388 MB and 64 MiB at 324 MB, for about the
// same CPU to start-up settled (16.5-19.9 s, within the machine's noise).
// The live heap grows to 1.85 times the catalog's, under twice it; for a
// tree whose warm-up keeps more, a collection that leaves less than half
// warmupHeadroom above the live heap raises the limit to warmupHeadroom
// above it (warmRoom), so the collector never runs back to back.
func (t *memoryTuner) warmup() {
	if t.catalogLive == 0 { // no catalogLoaded (mcp): measure now
		t.lasting("")
		return
	}
	t.headroom = 0
	limit := 2*int64(t.catalogLive) + warmupHeadroom
	debug.SetMemoryLimit(limit)
	t.regrow(t.catalogLive)
	t.logger.Info("memory", "live_heap_mb", t.catalogLive>>20, "soft_limit_mb", limit>>20, "until", "start-up settles (then measured again)")
}

// lasting sets the lasting rule from a live heap measured by a
// collection, and hands what is free back to the system; t.mu is held.
func (t *memoryTuner) lasting(why string) {
	t.headroom = 0
	debug.SetMemoryLimit(math.MaxInt64)
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live := ms.HeapAlloc
	limit := 2*int64(live) + lastingHeadroom
	debug.SetMemoryLimit(limit)
	t.regrow(live) // memory_grow.go
	msg, attrs := "memory", []any{"live_heap_mb", live >> 20, "soft_limit_mb", limit >> 20}
	if why != "" {
		// The CPU and wall time start-up took in all, background work
		// included (startup.go).
		msg = "memory: " + why
		attrs = append(attrs, startupAttrs()...)
	}
	t.logger.Info(msg, attrs...)
}

// stop ends the loading rule, if start-up failed or the
// server stops first; the limit it set stays.
func (t *memoryTuner) stop() {
	t.mu.Lock()
	t.headroom = 0
	t.stopped = true // memory_grow.go
	t.mu.Unlock()
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
