//go:build unix

package main

import "syscall"

// fdLimit returns the process's open file limit (Go raises the soft limit
// to the hard one at start), or 0 when unknown.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
