package testutil

import (
	"testing"
	"time"
)

// withDeadline is a testing.TB whose test binary ends at end.
type withDeadline struct {
	testing.TB
	end time.Time
	set bool
}

func (w withDeadline) Deadline() (time.Time, bool) { return w.end, w.set }

// Patience is MaxPatience unless the binary's deadline comes sooner; then
// it ends a tenth of the time left (at least 5 s) before it, and never
// below a second.
func TestPatience(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		what     string
		tb       testing.TB
		min, max time.Duration
	}{
		{"no Deadline method (a benchmark)", &recorder{}, MaxPatience, MaxPatience},
		{"no -timeout", withDeadline{end: now, set: false}, MaxPatience, MaxPatience},
		{"a deadline in an hour", withDeadline{end: now.Add(time.Hour), set: true}, MaxPatience, MaxPatience},
		// 200 s left: a tenth (20 s) is kept back: 180 s, MaxPatience exactly.
		{"a deadline at MaxPatience plus a tenth", withDeadline{end: now.Add(200 * time.Second), set: true}, MaxPatience - time.Second, MaxPatience},
		{"a deadline in 100 s", withDeadline{end: now.Add(100 * time.Second), set: true}, 89 * time.Second, 90 * time.Second},
		// 20 s left: a tenth is 2 s, less than the 5 s kept at least.
		{"a deadline in 20 s", withDeadline{end: now.Add(20 * time.Second), set: true}, 14 * time.Second, 15 * time.Second},
		{"a deadline in 3 s", withDeadline{end: now.Add(3 * time.Second), set: true}, time.Second, time.Second},
		{"a deadline past", withDeadline{end: now.Add(-time.Minute), set: true}, time.Second, time.Second},
	} {
		if d := Patience(c.tb); d < c.min || d > c.max {
			t.Errorf("%s: Patience %s, want %s to %s", c.what, d, c.min, c.max)
		}
	}
	if d, ok := t.Deadline(); ok && time.Until(d) < 2*MaxPatience {
		return // a short -timeout: the real test's patience is cut, as above
	}
	if d := Patience(t); d != MaxPatience {
		t.Errorf("this test: Patience %s, want %s", d, MaxPatience)
	}
}

// Within fails a call that does not return within Patience, naming it,
// and returns when the call does.
func TestWithin(t *testing.T) {
	r := &withDeadline{TB: &recorder{}, end: time.Now().Add(5500 * time.Millisecond), set: true} // Patience: 1 s
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	Within(r, "reading the FIFO", func() { <-release })
	rec := r.TB.(*recorder)
	if rec.fatal != "reading the FIFO did not return within 1s: it blocked" {
		t.Errorf("a blocked call: fatal %q", rec.fatal)
	}
	if e := time.Since(start); e < time.Second || e > MaxPatience/2 {
		t.Errorf("a blocked call failed after %s, want 1 s", e)
	}
	rec.fatal = ""
	Within(r, "a quick call", func() {})
	if rec.fatal != "" {
		t.Errorf("a call that returned: fatal %q", rec.fatal)
	}
}
