package main

import (
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// While the catalog loads, the soft memory limit stays above the live
// heap, however large it grows (a fixed 96 MiB made the collector run
// back to back once the catalog outgrew it: the slow first start of
// 50,000 skills); once serving, it is twice the live heap plus
// lastingHeadroom; GOMEMLIMIT or GOGC from the environment leave it alone.
func TestMemoryRules(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		debug.SetMemoryLimit(math.MaxInt64)
		m := startMemory(func(k string) string {
			if k == env {
				return "1GiB"
			}
			return ""
		})
		runtime.GC()
		m.loaded(logger)
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("with %s set, the limit was changed to %d", env, got)
		}
	}

	m := startMemory(func(string) string { return "" })
	defer m.stop()
	// A live heap over the old fixed limit.
	live := make([][]byte, 0, 160)
	for range 160 {
		live = append(live, make([]byte, 1<<20))
	}
	// The hook runs on the finalizer goroutine, some time after a cycle.
	var heap uint64
	var limit int64
	for range 100 {
		runtime.GC()
		time.Sleep(time.Millisecond)
		heap, limit = liveHeap(), debug.SetMemoryLimit(-1)
		if limit >= int64(float64(heap)*startupHeadroom)-(8<<20) {
			break
		}
	}
	if heap < 160<<20 || limit < int64(float64(heap)*startupHeadroom)-(8<<20) {
		t.Errorf("while loading: limit %d MiB for a live heap of %d MiB; want at least %.1f times it", limit>>20, heap>>20, startupHeadroom)
	}
	// Once the catalog is loaded: twice the live heap, measured exactly.
	m.catalogLoaded()
	if got, want := debug.SetMemoryLimit(-1), 2*int64(liveHeap()); got < want-(8<<20) || got > want+(8<<20) {
		t.Errorf("after the catalog loaded: limit %d MiB, want about %d MiB", got>>20, want>>20)
	}
	m.loaded(logger)
	limit = debug.SetMemoryLimit(-1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if want := 2*int64(ms.HeapAlloc) + lastingHeadroom; limit < want-(8<<20) || limit > want+(8<<20) {
		t.Errorf("serving: limit %d MiB, want about %d MiB", limit>>20, want>>20)
	}
	// The loading rule is over: collections no longer move the limit.
	live = live[:10]
	runtime.GC()
	runtime.GC()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("a collection after loading moved the limit from %d to %d", limit, got)
	}
	runtime.KeepAlive(live)
}

// While start-up work goes on in the background once serving (the folder
// watch, the warm-up's indexes), the limit is twice the heap the catalog
// left plus warmupHeadroom, however the heap grows meanwhile (a heap
// measured then counts half-built indexes as live); when the work ends,
// the lasting rule is measured again, and the log says so.
func TestMemorySettles(t *testing.T) {
	logged, logger := tunerTest(t)

	m := startMemory(func(string) string { return "" })
	defer m.stop()
	live := make([][]byte, 0, 160)
	for range 160 {
		live = append(live, make([]byte, 1<<20))
	}
	m.catalogLoaded()
	catalog := int64(m.catalogLive)
	done := m.background()
	m.loaded(logger)
	lasting := func() (int64, int64) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return 2*int64(ms.HeapAlloc) + lastingHeadroom, debug.SetMemoryLimit(-1)
	}
	warm := 2*catalog + warmupHeadroom
	if limit := debug.SetMemoryLimit(-1); catalog < 160<<20 || limit != warm {
		t.Errorf("serving with work in the background: limit %d MiB (catalog's heap %d MiB), want %d MiB", limit>>20, catalog>>20, warm>>20)
	}
	// The background work grows the heap by half: the limit stays.
	for range 80 {
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	runtime.GC()
	if limit := debug.SetMemoryLimit(-1); limit != warm {
		t.Errorf("the heap grew by half during the background work: limit %d MiB, want it kept at %d MiB until start-up settles", limit>>20, warm>>20)
	}
	if strings.Contains(logged.String(), "settled") {
		t.Fatalf("settled before the background work ended:\n%s", logged.String())
	}
	done()
	done() // a second call changes nothing
	want, limit := lasting()
	if limit < want-(8<<20) || limit > want+(8<<20) || limit < 2*240<<20 {
		t.Errorf("settled: limit %d MiB, want about %d MiB (measured again, with the grown heap)", limit>>20, want>>20)
	}
	if n := strings.Count(logged.String(), "start-up settled"); n != 1 {
		t.Errorf("the log says start-up settled %d times:\n%s", n, logged.String())
	}
	runtime.GC()
	runtime.GC()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("a collection after settling moved the limit from %d to %d", limit, got)
	}
	runtime.KeepAlive(live)
}

// TestMemorySettledBeforeLoaded: background work that began and ended
// before loaded (a small tree's watch, now that ready comes first) still
// makes loaded log "start-up settled", once; with no background work at
// all (the "no" case) it does not.
func TestMemorySettledBeforeLoaded(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, background := range []bool{true, false} {
		var logged strings.Builder
		logger := slog.New(slog.NewTextHandler(&logged, nil))
		m := startMemory(func(string) string { return "" })
		m.catalogLoaded()
		if background {
			done := m.background()
			done()
		}
		m.loaded(logger)
		m.stop()
		want := 0
		if background {
			want = 1
		}
		if n := strings.Count(logged.String(), "start-up settled"); n != want {
			t.Errorf("background work %v: the log says start-up settled %d times, want %d:\n%s", background, n, want, logged.String())
		}
	}
}

// regrown collects until the per-collection hook (which runs on the
// finalizer goroutine, some time after a cycle) has moved the limit from
// was, or gives up; it returns the limit and the lasting rule's limit for
// the live heap now.
func regrown(was int64) (limit, want int64) {
	for range 100 {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if limit = debug.SetMemoryLimit(-1); limit != was {
			break
		}
	}
	return limit, 2*int64(liveHeap()) + lastingHeadroom
}

// TestMemoryRegrows: once serving, a live heap grown by more than a
// quarter since the lasting rule was measured has it measured again (the
// limit rises with it); grown by less (the near miss), or shrunk, the
// limit stays.
func TestMemoryRegrows(t *testing.T) {
	logged, logger := tunerTest(t)
	m := startMemory(func(string) string { return "" })
	defer m.stop()
	live := make([][]byte, 0, 256)
	for range 128 {
		live = append(live, make([]byte, 1<<20))
	}
	m.catalogLoaded()
	m.loaded(logger)
	limit := debug.SetMemoryLimit(-1)
	// An eighth more: under the quarter, the limit stays.
	for range 16 {
		live = append(live, make([]byte, 1<<20))
	}
	for range 5 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("the heap grew by an eighth: the limit moved from %d to %d MiB", limit>>20, got>>20)
	}
	// Half more than measured: the limit is measured again.
	for range 64 - 16 {
		live = append(live, make([]byte, 1<<20))
	}
	got, want := regrown(limit)
	if got <= limit || got < want-(8<<20) || got > want+(8<<20) {
		t.Errorf("the heap grew by half: limit %d MiB (was %d), want about %d MiB", got>>20, limit>>20, want>>20)
	}
	if !strings.Contains(logged.String(), "soft limit raised") {
		t.Errorf("the log does not say the limit was raised:\n%s", logged.String())
	}
	// Shrunk: the limit stays where it rose to.
	live = live[:8]
	for range 5 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if now := debug.SetMemoryLimit(-1); now != got {
		t.Errorf("the heap shrank: the limit moved from %d to %d MiB", got>>20, now>>20)
	}
	runtime.KeepAlive(live)
}

// tunerTest sets the collector as the process starts (GOGC 100, no limit)
// for one test, puts back what it was after, and gives the test a logger
// and what it wrote (read under a lock: the per-collection hook logs from
// the finalizer goroutine).
func tunerTest(t *testing.T) (*lockedWriter, *slog.Logger) {
	limit, pct := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) })
	debug.SetMemoryLimit(math.MaxInt64)
	logged := &lockedWriter{b: &strings.Builder{}}
	return logged, slog.New(slog.NewTextHandler(logged, nil))
}

// TestMemoryWarmupRoom: while start-up work runs in the background, a
// live heap that leaves less than half warmupHeadroom under the warm-up's
// limit (twice the catalog's heap plus warmupHeadroom) raises the limit
// to warmupHeadroom above it, so the collector never runs back to back.
// A heap that leaves more (the near miss: 12 MiB more) keeps the limit.
func TestMemoryWarmupRoom(t *testing.T) {
	logged, logger := tunerTest(t)
	m := startMemory(func(string) string { return "" })
	defer m.stop()
	live := make([][]byte, 0, 256)
	for range 48 {
		live = append(live, make([]byte, 1<<20))
	}
	m.catalogLoaded()
	catalog := int64(m.catalogLive)
	done := m.background()
	defer done()
	m.loaded(logger)
	warm := 2*catalog + warmupHeadroom
	if got := debug.SetMemoryLimit(-1); got != warm {
		t.Fatalf("warm-up limit %d MiB, want %d MiB", got>>20, warm>>20)
	}
	other := catalog - int64(len(live))<<20 // the heap besides live
	grow := func(heap int64) {
		for int64(len(live))<<20+other < heap {
			live = append(live, make([]byte, 1<<20))
		}
	}
	// 12 MiB short of leaving less than half warmupHeadroom: it stays.
	grow(warm - warmupHeadroom/2 - 12<<20)
	for range 5 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != warm {
		t.Errorf("live heap %d MiB, %d MiB of room: the limit moved from %d to %d MiB", liveHeap()>>20, (warm-int64(liveHeap()))>>20, warm>>20, got>>20)
	}
	// 12 MiB past it: the limit rises to warmupHeadroom above the heap.
	grow(warm - warmupHeadroom/2 + 12<<20)
	got, _ := regrown(warm)
	if want := int64(liveHeap()) + warmupHeadroom; got <= warm || got < want-(8<<20) || got > want+(8<<20) {
		t.Errorf("live heap %d MiB during the warm-up: limit %d MiB (was %d), want about %d MiB", liveHeap()>>20, got>>20, warm>>20, want>>20)
	}
	if !strings.Contains(logged.String(), "warm-up's live heap grew") {
		t.Errorf("the log does not say the limit was raised:\n%s", logged.String())
	}
	runtime.KeepAlive(live)
}
