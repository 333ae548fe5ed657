package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// TimeoutOptions bound how long a client may hold a request without
// making progress. Zero means no bound.
type TimeoutOptions struct {
	// Read is the longest a request's body may take to arrive, counted
	// from when the handler starts. A slower body is cut: the read fails,
	// the handler answers 408 request_timeout, and the connection closes.
	Read time.Duration
	// Write is the longest one write of a response may stall (a client
	// that does not read). The deadline moves forward with every write,
	// so a long response, or a stream that stays open for hours (MCP's
	// GET stream), lives as long as the client keeps reading, and the
	// handler's own work before it writes is not limited.
	Write time.Duration
}

// Timeouts applies TimeoutOptions to every request, through
// http.ResponseController. Put it outside every other middleware.
//
// Why not http.Server's ReadTimeout and WriteTimeout: ReadTimeout covers
// the whole request, and once the body has been read the server watches
// the connection with that same deadline, so a handler still working
// when it passes has its context cancelled (an import of many skills, an
// MCP stream). WriteTimeout is one deadline for the whole response, which
// would cut every stream. Here the body deadline is cleared as soon as
// the body has been read, and the write deadline is per write.
func Timeouts(opt TimeoutOptions, next http.Handler) http.Handler {
	if opt.Read <= 0 && opt.Write <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server's response sets its own deadlines; a wrapped writer
		// goes through a ResponseController, which unwraps it.
		var rc deadliner
		if d, ok := w.(deadliner); ok {
			rc = d
		} else {
			rc = http.NewResponseController(w)
		}
		if opt.Read > 0 && r.Body != nil && r.Body != http.NoBody {
			if rc.SetReadDeadline(time.Now().Add(opt.Read)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		if opt.Write > 0 {
			// A deadline left by the connection's previous request must not
			// cut this one's work before it writes. The deadline is set
			// once here, a full Write ahead: every write of the response
			// moves it forward first when half of it has passed (extend),
			// so it never cuts a write the handler makes after working
			// longer than Write. One deadline change per request instead
			// of two (clearing it, then setting it at the first write).
			// A request that may wait for "100 Continue" (the server writes
			// that itself, when the body is first read) gets no deadline
			// until its handler writes, as before.
			now := time.Now()
			var err error
			if r.Header.Get("Expect") != "" {
				err = rc.SetWriteDeadline(time.Time{})
				now = time.Time{}
			} else {
				err = rc.SetWriteDeadline(now.Add(opt.Write))
			}
			if err == nil {
				s, r2 := stateOf(r)
				r = r2
				dw := &s.deadline
				if s.dw {
					dw = &deadlineWriter{}
				}
				s.dw = true
				*dw = deadlineWriter{ResponseWriter: w, rc: rc, d: opt.Write}
				if !now.IsZero() {
					dw.until = now.Add(opt.Write)
				}
				w = dw
				// The server writes what is buffered after the handler
				// returns; bound that too.
				defer dw.extend()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadliner sets a connection's deadlines: the server's ResponseWriter
// does, and http.ResponseController for any writer that unwraps to it.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// deadlineBody clears the read deadline once the body has been read, so
// the server's watch on the connection (which cancels the request's
// context on a read error) does not fire while the handler works.
type deadlineBody struct {
	io.ReadCloser
	rc   deadliner
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// deadlineWriter moves the write deadline forward before each write. It
// moves it only when half of it has passed, to keep the cost of a write
// to a comparison on most calls.
type deadlineWriter struct {
	http.ResponseWriter
	rc    deadliner
	d     time.Duration
	until time.Time
}

func (w *deadlineWriter) extend() {
	now := time.Now()
	if w.until.Sub(now) > w.d/2 {
		return
	}
	w.until = now.Add(w.d)
	w.rc.SetWriteDeadline(w.until)
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// ReadFrom copies r through Write, which moves the deadline on as the
// body goes out, with a pooled buffer instead of io.Copy's own.
func (w *deadlineWriter) ReadFrom(r io.Reader) (int64, error) {
	return copyPooled(w, r)
}

func (w *deadlineWriter) Flush() {
	w.extend()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isTimeout reports whether a body read failed on its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
