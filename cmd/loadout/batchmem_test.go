package main

import (
	"runtime/debug"
	"testing"
)

// TestLimitBatchMemory: check and list run under BatchMemoryLimit unless
// GOMEMLIMIT is set, and put the limit before back when they end.
func TestLimitBatchMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := limitBatchMemory(&env{getenv: func(string) string { return "" }})
	if got := debug.SetMemoryLimit(-1); got != BatchMemoryLimit {
		t.Errorf("limit %d while the command runs, want BatchMemoryLimit %d", got, BatchMemoryLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after, want %d as before", got, before)
	}
	restore = limitBatchMemory(&env{getenv: func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}})
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d with GOMEMLIMIT set, want it left at %d", got, before)
	}
	restore()
}
