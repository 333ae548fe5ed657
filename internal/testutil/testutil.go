// Package testutil holds the helpers the resource tests of several
// packages share: bytes allocated, a deadline on calls that might block,
// and sparse files. Only tests import it.
package testutil

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// GiB is 1 << 30 bytes.
const GiB = 1 << 30

// Allocated returns the bytes allocated (by every goroutine) while f runs.
func Allocated(f func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// LeastAllocated runs f n times in each of rounds rounds and returns the
// fewest bytes allocated per call in a round. Allocated counts every
// goroutine of the test binary (servers and flushers of earlier tests
// among them), which only ever adds, so the least round is the nearest to
// what f itself allocates.
func LeastAllocated(rounds, n int, f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range rounds {
		a := Allocated(func() {
			for range n {
				f()
			}
		})
		least = min(least, a/uint64(n))
	}
	return least
}

// Within runs f and fails the test if it has not returned within
// Patience(t), so a call that blocks (a FIFO read, a hung build) fails
// instead of hanging the test binary. It is a liveness bound, not a speed
// target.
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	d := Patience(t)
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s: it blocked", what, d.Round(time.Second))
	}
}

// EndsWithin reports whether r ends (EOF or an error) within d, reading
// and discarding what it sends meanwhile: a stream that should close, such
// as a revoked token's, is told from one that stays open.
func EndsWithin(r io.Reader, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, r)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Sparse creates a file of size bytes that takes no disk space.
func Sparse(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// AliasBomb is a SKILL.md named name whose frontmatter nests levels YAML
// anchors, each repeating the one before it width times: width^levels
// values once expanded, from a few hundred bytes.
func AliasBomb(name string, levels, width int) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: Use when testing alias bombs.\na0: &a0 [lol]\n")
	for i := 1; i <= levels; i++ {
		items := make([]string, width)
		for j := range items {
			items[j] = fmt.Sprintf("*a%d", i-1)
		}
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Join(items, ","))
	}
	b.WriteString("---\n# Bomb\n")
	return b.String()
}

// Gunzip returns the bytes gzip data b holds, failing t when b is not gzip.
func Gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
