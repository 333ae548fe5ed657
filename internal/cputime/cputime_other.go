//go:build !unix

// Package cputime reads the CPU time this process has used.
package cputime

import "time"

// Process is not known on this system.
func Process() (user, sys time.Duration, ok bool) { return 0, 0, false }
