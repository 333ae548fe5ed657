package testutil

import (
	"time"

	"github.com/loadout/loadout/internal/cputime"
)

// CPUTime is the user and system CPU time this process has used so far
// (0 where it is not known): on a shared machine it measures the work,
// where wall time also measures the neighbours.
func CPUTime() time.Duration {
	user, sys, _ := cputime.Process()
	return user + sys
}
