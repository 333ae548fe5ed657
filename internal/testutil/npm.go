package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// npmFailed holds, by folder, why npm ci failed in this process, so the
// tests after the first fail at once instead of installing again.
var npmFailed sync.Map

// NPMFolder makes sure the pinned npm packages of dir (a folder with a
// package.json and a package-lock.json) are installed: when marker (a
// path inside dir) is missing it runs `npm ci` there, without install
// scripts, as .ci/run does. Test binaries of several packages install the
// same folders (compat/, mcpserver/e2e) and `go test ./...` runs them at
// once, so the check and the install run under a lock on dir that other
// processes honour (lockFile): two npm ci in one folder at once fail with
// ENOTEMPTY. A failed install fails every later call for that folder in
// the test binary at once. It returns dir made absolute. Without npm the
// test is skipped, or fails when CI is set.
func NPMFolder(t testing.TB, dir, marker string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, marker)); err == nil {
		return abs
	}
	if why, failed := npmFailed.Load(abs); failed {
		t.Fatal(why)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm is not installed, and CI is set: the tests that need %s must run", abs)
		}
		t.Skipf("npm is not installed: skipping a test that needs the npm packages of %s", abs)
	}
	unlock, err := lockFile(filepath.Join(abs, ".npm-ci.lock"))
	if err != nil {
		t.Fatalf("locking %s for npm ci: %v", abs, err)
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(abs, marker)); err == nil {
		return abs // another test binary installed it meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = abs
	out, err := cmd.CombinedOutput()
	if err == nil {
		if _, err := os.Stat(filepath.Join(abs, marker)); err != nil {
			out = []byte("it did not install " + marker)
		} else {
			return abs
		}
	}
	why := "npm ci in " + abs + ": " + errText(err) + "\n" + string(out)
	npmFailed.Store(abs, why)
	t.Fatal(why)
	return abs
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
