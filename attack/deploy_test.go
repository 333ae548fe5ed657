package attack

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Clients cannot hold a pod alive through its drain: a request whose body
// stalls, a connection that never finishes its headers and an idle
// kept-alive connection, all open at SIGTERM, are cut off at
// server.shutdownTimeout and serve exits (the kubelet would otherwise
// wait for its SIGKILL, and a rollout with it). The log says requests
// were cut off.
func TestDeployDrainBoundedAgainstStalledClients(t *testing.T) {
	s := Start(t, Options{Config: `{"agents": [{"agentId": "coder", "skills": [{"store": true}]}],
  "server": {"shutdownTimeout": "1s"}}`})
	addr := strings.TrimPrefix(s.Base, "http://")
	dial := func(send string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte(send)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A create whose body never finishes: its handler is running.
	dial("POST /v1/skills HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"schemaVersion\": 2, ")
	// Headers that never end.
	dial("GET /v1/skills HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: ")
	// An answered request, then the connection kept open.
	idle := dial("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	buf := make([]byte, 4096)
	if n, err := idle.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "200 OK") {
		t.Fatalf("healthz: %v %q", err, buf[:n])
	}
	// Stop fails the test if serve is not gone within 10 s of SIGTERM.
	s.Stop(t)
	if log := s.Log(); !strings.Contains(log, "requests still in flight at the timeout were cut off") {
		t.Fatalf("the log does not say requests were cut off:\n%s", tail(log, 3000))
	}
}

// A second signal cuts the drain's delay short: an operator (or a
// supervisor that escalates) is never made to wait out server.shutdownDelay,
// here its maximum, a minute.
func TestDeployDrainSecondSignalCutsDelay(t *testing.T) {
	s := Start(t, Options{Config: `{"agents": [{"agentId": "coder", "skills": [{"store": true}]}],
  "server": {"shutdownDelay": "1m"}}`})
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.Log(), "shutting down: not ready") {
		if time.Now().After(deadline) {
			t.Fatalf("no drain after SIGTERM:\n%s", tail(s.Log(), 3000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// During the delay the server still answers, and says it is draining.
	if code, _, body := s.Do(t, "GET", "/readyz", "", ""); code != 503 || !strings.Contains(body, `"draining":true`) {
		t.Fatalf("/readyz during the delay: %d %s", code, body)
	}
	// Stop sends the second SIGTERM and fails past 10 s.
	s.Stop(t)
	if log := s.Log(); !strings.Contains(log, "a second signal cut the delay short") {
		t.Fatalf("the log does not say the delay was cut short:\n%s", tail(log, 3000))
	}
}
