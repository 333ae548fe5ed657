//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used so far:
// on a shared machine it measures the work, where wall time also measures
// the neighbours.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
