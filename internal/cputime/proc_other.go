//go:build !linux

package cputime

import "time"

// Of is not known without /proc.
func Of(pid int) (time.Duration, bool) { return 0, false }
