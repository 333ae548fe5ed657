//go:build unix

// Package cputime reads the CPU time this process has used: on a shared
// machine it measures the work, where wall time also measures the
// neighbours. serve logs it at ready; tests and benchmarks report it.
package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time this process has used so far
// (getrusage), and whether it is known.
func Process() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
