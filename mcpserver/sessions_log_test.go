package mcpserver

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// TestSessionsEvictionLogThrottled: an eviction is logged on the first
// and on every thousandth, not on each: 1,000 evictions log 2 lines, 3
// log 1.
func TestSessionsEvictionLogThrottled(t *testing.T) {
	var logs syncBuffer
	f := newFixture(t)
	pool := NewSessions(5, time.Hour, slog.New(slog.NewTextHandler(&logs, nil))).PerToken(1)
	_, h := newHTTPHandler(f.svc, Options{Agent: "coder", Logger: quiet, Sessions: pool})
	srv := httptest.NewServer(tokenAuth(h))
	defer srv.Close()
	const line = "mcp: too many sessions"
	for i := range 1001 {
		if code, _ := initAs(t, srv.URL, "coder"); code != 200 {
			t.Fatalf("initialize %d: %d", i, code)
		}
		switch i {
		case 3:
			if n := logs.count(line); n != 1 {
				t.Fatalf("after 3 evictions: %d log lines, want 1", n)
			}
		case 999:
			if n := logs.count(line); n != 1 {
				t.Fatalf("after 999 evictions: %d log lines, want 1", n)
			}
		}
	}
	if n := logs.count(line); n != 2 {
		t.Errorf("after 1,000 evictions: %d log lines, want 2", n)
	}
}

// TestSessionsReleaseForgetsToken: a token's count goes from 2 to 1, and
// from 1 its entry is gone, so the map does not keep every token ever
// seen.
func TestSessionsReleaseForgetsToken(t *testing.T) {
	p := NewSessions(5, time.Hour, quiet)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held["a"] = 2
	p.release("a")
	if n, ok := p.held["a"]; !ok || n != 1 {
		t.Fatalf("after one release of 2: %d %v, want 1", n, ok)
	}
	p.release("a")
	if n, ok := p.held["a"]; ok {
		t.Errorf("after the last release the token is still counted (%d)", n)
	}
}
