package cputime

import (
	"os"
	"testing"
	"time"
)

// Of reads this process's time as Process does (to a tick, and Process
// is read after, so it is at least as large), grows with work, and says
// false for a process that does not exist or a pid that cannot be one.
func TestOf(t *testing.T) {
	before, ok := Of(os.Getpid())
	if !ok {
		t.Fatal("Of(this process) is not known")
	}
	x := 0
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	after, ok := Of(os.Getpid())
	u, s, _ := Process()
	if !ok || after <= before {
		t.Errorf("Of after 60 ms of work: %v, before %v (%d loops)", after, before, x)
	}
	if after > u+s+tick {
		t.Errorf("Of %v is more than getrusage's %v and a tick", after, u+s)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if d, ok := Of(pid); ok {
			t.Errorf("Of(%d) = %v, true; want false", pid, d)
		}
	}
}
