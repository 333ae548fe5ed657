//go:build unix

package bench_test

import "syscall"

// syncDisk flushes the freshly written tree, so that background writeback
// does not run during the first benchmarks.
func syncDisk() { syscall.Sync() }
