package main

import (
	"runtime"
	"testing"
)

// serve's first discovery runs with at least ScanProcs Ps and puts the
// value before back; a GOMAXPROCS set in the environment is left alone.
func TestRaiseProcsForScan(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	e := &env{getenv: func(string) string { return "" }}
	restore := raiseProcsForScan(e)
	if got := runtime.GOMAXPROCS(0); got != ScanProcs {
		t.Errorf("during the scan GOMAXPROCS is %d, want %d", got, ScanProcs)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("after the scan GOMAXPROCS is %d, want 2 back", got)
	}
	set := &env{getenv: func(k string) string {
		if k == "GOMAXPROCS" {
			return "2"
		}
		return ""
	}}
	restore = raiseProcsForScan(set)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("GOMAXPROCS=2 in the environment, but the scan raised it to %d", got)
	}
	restore()
	runtime.GOMAXPROCS(ScanProcs + 2)
	raiseProcsForScan(e)()
	if got := runtime.GOMAXPROCS(0); got != ScanProcs+2 {
		t.Errorf("a GOMAXPROCS above ScanProcs became %d", got)
	}
}
