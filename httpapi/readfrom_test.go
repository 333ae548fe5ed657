package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// TestWrappersCopyWithoutABuffer: http.ServeContent copies a file into
// the response with io.Copy. Through the middleware's writers that took a
// 32 KiB buffer a request; they now pass the copy on (statusWriter) or
// make it with a pooled buffer through Write, which moves the write
// deadline on (deadlineWriter). The body, status and byte count are kept.
func TestWrappersCopyWithoutABuffer(t *testing.T) {
	data := strings.Repeat("0123456789abcdef", 40<<10/16)
	sink := countingWriter{keep: true}
	var dl fakeDeadliner
	copyOnce := func() *statusWriter {
		sw := &statusWriter{ResponseWriter: &deadlineWriter{ResponseWriter: &sink, rc: &dl, d: time.Minute}}
		n, err := io.Copy(sw, io.LimitReader(strings.NewReader(data), int64(len(data))))
		if err != nil || n != int64(len(data)) {
			t.Fatalf("copied %d bytes, %v", n, err)
		}
		return sw
	}
	sw := copyOnce()
	if sw.status != http.StatusOK || sw.bytes != int64(len(data)) || sink.buf.String() != data || dl.writes == 0 {
		t.Fatalf("status %d, %d bytes counted, body intact %v, deadline set %d times", sw.status, sw.bytes, sink.buf.String() == data, dl.writes)
	}
	sink.keep = false
	// The least of ten rounds: what other goroutines of the test binary
	// allocate meanwhile is counted too, and only ever adds. About 0.2 KB
	// a copy; under -race, where sync.Pool drops buffers at random, 5-7
	// KB. The old writers took a 32 KiB buffer a copy, and fail either.
	bound := uint64(4 << 10)
	if testutil.Race {
		bound = 16 << 10
	}
	if per := testutil.LeastAllocated(10, 20, func() { copyOnce() }); per > bound {
		t.Errorf("copying 40 KiB through the writers allocated %d bytes a request (at most %d)", per, bound)
	}
}

// countingWriter is a ResponseWriter that keeps the body while keep is
// set, and else discards it.
type countingWriter struct {
	hd   http.Header
	buf  bytes.Buffer
	keep bool
}

func (w *countingWriter) Header() http.Header {
	if w.hd == nil {
		w.hd = http.Header{}
	}
	return w.hd
}
func (w *countingWriter) WriteHeader(int) {}
func (w *countingWriter) Write(p []byte) (int, error) {
	if w.keep {
		w.buf.Write(p)
	}
	return len(p), nil
}

type fakeDeadliner struct{ writes int }

func (d *fakeDeadliner) SetReadDeadline(time.Time) error  { return nil }
func (d *fakeDeadliner) SetWriteDeadline(time.Time) error { d.writes++; return nil }
