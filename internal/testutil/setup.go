package testutil

import (
	"fmt"
	"os"
	"testing"
)

// Unavailable skips a test that cannot run here (a server, a tool or a
// corpus is missing), saying why; under CI (CI set) it fails instead, as
// a skip there would pass on nothing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, and this test must run there", msg)
	}
	t.Skip(msg)
}

// Write writes content to path (mode 0o644), failing the test on an
// error: a test's setup whose error is dropped tests something else. The
// folder must exist (Mkdir).
func Write(t testing.TB, path, content string) {
	t.Helper()
	WriteBytes(t, path, []byte(content), 0o644)
}

// WriteBytes is Write with bytes and a mode.
func WriteBytes(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// Mkdir makes the folder path and its parents (mode 0o755), failing the
// test on an error.
func Mkdir(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Must fails the test when err is not nil: for a setup call whose error
// was dropped (os.Symlink, os.Chmod, os.Remove…).
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
