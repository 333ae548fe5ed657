package testutil

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port free a moment ago, for a server a
// test starts that must be told its port (another process may take it in
// between: a test that can retry does).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StopAtCleanup ends the started cmd when the test ends: SIGTERM, then
// SIGKILL if it has not exited within 10 s; it waits for the exit.
func StopAtCleanup(t testing.TB, cmd *exec.Cmd) {
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}
