package testutil

import (
	"context"
	"testing"
	"time"
)

// MaxPatience is how long a test waits for something that should happen
// at once (a call that must not block, a notification, a server's first
// line) before it calls it blocked. It is a liveness bound, not a speed
// target, so it is minutes: on a 2-core machine busy with other work and
// the race detector, calls that take milliseconds when idle have been seen
// to take 15 to 30 s (the first range read of a 1 GiB file hashes the
// whole file for its receipt). A real hang still fails, naming what hung,
// after this long.
const MaxPatience = 3 * time.Minute

// deadliner is *testing.T (testing.TB has no Deadline).
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Patience is MaxPatience, or less when the test binary's -timeout comes
// sooner: then it ends a tenth of the time left (at least 5 s) before
// that deadline, so that a wait that never ends fails the test naming it
// and runs its cleanups, rather than being cut short by Go's timeout panic.
func Patience(t testing.TB) time.Duration {
	d := MaxPatience
	if dt, ok := t.(deadliner); ok {
		if end, ok := dt.Deadline(); ok {
			left := time.Until(end)
			left -= max(left/10, 5*time.Second)
			d = min(d, max(left, time.Second))
		}
	}
	return d
}

// After is time.After(Patience(t)): the timeout case of a select that
// waits for something that must happen.
func After(t testing.TB) <-chan time.Time {
	return time.After(Patience(t))
}

// Context is a context that ends after Patience(t), for a call that must
// not block; it is cancelled when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Patience(t))
	t.Cleanup(cancel)
	return ctx
}
