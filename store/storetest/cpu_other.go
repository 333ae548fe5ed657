//go:build !unix

package storetest

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
