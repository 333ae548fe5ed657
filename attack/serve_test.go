package attack

// Attacks of helper "serve" (issue 24): a FIFO in a skill folder against
// the diagnostics (item 7), and folder skills with error-severity safety
// findings (item 18).

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// getWithin GETs path on a fresh connection and fails the test when no
// answer came within d: a route that blocks fails here instead of hanging
// the suite.
func getWithin(t *testing.T, s *Server, path string, d time.Duration) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: d, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(s.Base + path)
	if err != nil {
		t.Fatalf("GET %s: no answer within %v (%v): it blocked\n%s", path, d, err, tail(s.Log(), 2000))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// TestServeFIFODiagnostics: a skill's listed file swapped for a FIFO
// after the scan (no watch, so the scan keeps listing it). The safety
// scan behind GET /v1/diagnostics and /ui/diagnostics used to open it
// blocking: both hung, and kept hanging after the FIFO was removed and
// the server reloaded, and SIGTERM did not finish. Now both answer at
// once, naming the FIFO, and again after the reload; the server stops in
// time (Stop fails past 10 s).
func TestServeFIFODiagnostics(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		skills := DefaultSkills()
		skills["deploy/notes.txt"] = "hello\n"
		s := Start(t, Options{Engine: engine, Skills: skills, Args: []string{"--no-watch"}})
		notes := filepath.Join(s.Dir, "skills", "deploy", "notes.txt")
		testutil.Must(t, os.Remove(notes))
		if err := syscall.Mkfifo(notes, 0o644); err != nil {
			testutil.Unavailable(t, "mkfifo: %v", err)
		}
		code, body := getWithin(t, s, "/v1/diagnostics", 10*time.Second)
		if code != http.StatusOK || !strings.Contains(body, "safety-unread") || !strings.Contains(body, "named pipe") {
			t.Errorf("GET /v1/diagnostics over a FIFO: %d %s; want 200 with safety-unread naming the named pipe", code, body)
		}
		if code, body := getWithin(t, s, "/ui/diagnostics", 10*time.Second); code != http.StatusOK || !strings.Contains(body, "named pipe") {
			t.Errorf("GET /ui/diagnostics over a FIFO: %d; want 200 naming the named pipe:\n%s", code, tail(body, 2000))
		}
		// The file skill read routes refuse it too (they did before).
		if code, _, body := s.Do(t, "GET", "/v1/skills/deploy/files/notes.txt", "", ""); code != http.StatusBadRequest || !strings.Contains(body, "not-regular") {
			t.Errorf("GET the FIFO: %d %s; want 400 not-regular", code, body)
		}
		testutil.Must(t, os.Remove(notes))
		if code, _, body := s.Do(t, "POST", "/v1/reload", "", ""); code != http.StatusOK {
			t.Fatalf("POST /v1/reload: %d %s", code, body)
		}
		for _, p := range []string{"/v1/diagnostics", "/ui/diagnostics"} {
			if code, body := getWithin(t, s, p, 10*time.Second); code != http.StatusOK || strings.Contains(body, "named pipe") {
				t.Errorf("GET %s after the FIFO went and a reload: %d; want 200 without it:\n%s", p, code, tail(body, 2000))
			}
		}
		s.Stop(t)
	})
}
