package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLogStreamsAreNotSlow: a request over the slow threshold logs a
// warning, but an event stream (long by design) does not.
func TestLogStreamsAreNotSlow(t *testing.T) {
	old := slowRequest
	slowRequest = time.Millisecond
	t.Cleanup(func() { slowRequest = old })
	for _, c := range []struct {
		contentType string
		warn        bool
	}{
		{"application/json", true},
		{"text/event-stream", false},
	} {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
		h := Log(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.contentType)
			time.Sleep(5 * time.Millisecond)
			w.Write([]byte("data: x\n\n"))
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ui/events", nil))
		if got := strings.Contains(buf.String(), "level=WARN"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %q", c.contentType, got, c.warn, buf.String())
		}
	}
}
