package testutil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// GoTool builds a main package of the Go module in the repository folder
// dir (relative to the repository's root, e.g. "compat/oidcop": a module
// of its own, so loadout's go.mod never gains a test tool's dependencies)
// and returns the binary's path. The package is the module's own (".")
// unless pkg names one of its requirements' (a tool the module pins, such
// as "github.com/jaegertracing/jaeger/cmd/jaeger"). The binary is cached under the user's
// cache folder, keyed by a hash of the module's Go files, go.mod and
// go.sum, so it is built once per machine and rebuilt when the module
// changes; test binaries of several packages build under a lock that other
// processes honour. The modules come from the module cache only
// (GOPROXY=off), which .ci/run fills (go mod download in that folder). A
// failed build fails the test.
func GoTool(t testing.TB, dir string, pkg ...string) string {
	t.Helper()
	target, name := ".", ""
	if len(pkg) > 0 {
		target, name = pkg[0], "-"+path.Base(pkg[0])
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(dir))
	src, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	key, err := moduleHash(src)
	if err != nil {
		t.Fatalf("reading the test tool module %s: %v", dir, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "loadout-test", "tools")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(out, filepath.Base(src)+name+"-"+key)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	unlock, err := lockFile(bin + ".lock")
	if err != nil {
		t.Fatalf("locking %s: %v", bin, err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin // another test binary built it meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, target)
	cmd.Dir = src
	// GOPROXY=off: the test fetches nothing; .ci/run downloaded the
	// module's requirements (cd DIR && go mod download).
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "GOPROXY=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test tool %s (cd %s && go build, GOPROXY=off): %v\n%s\nIf a module is missing, fetch them first: (cd %s && go mod download), as .ci/run does", dir, dir, err, b, dir)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// moduleHash hashes the names and contents of the Go files, go.mod and
// go.sum under dir.
func moduleHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		n := d.Name()
		if !d.IsDir() && (strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		h.Write([]byte(rel + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Tool is a test tool GoTool builds: the module folder and the package.
type Tool struct {
	Dir, Pkg string
}

// Tools are the test tools the suite builds, by their users' calls. CI
// builds them all at once before the tests (.ci/run runs
// TestBuildTestTools with LOADOUT_BUILD_TOOLS=1, in the background while
// it installs the other things the tests need), so that no test waits for
// a cold build. Jaeger is left out: it runs only with LOADOUT_JAEGER=1.
var Tools = []Tool{
	{"compat/oidcop", ""},
	{"compat/oras", "oras.land/oras/cmd/oras"},
	{"compat/crane", "github.com/google/go-containerregistry/cmd/crane"},
}

// BuildTools builds every tool of Tools (GoTool caches each).
func BuildTools(t testing.TB) {
	t.Helper()
	for _, tl := range Tools {
		start := time.Now()
		var bin string
		if tl.Pkg == "" {
			bin = GoTool(t, tl.Dir)
		} else {
			bin = GoTool(t, tl.Dir, tl.Pkg)
		}
		t.Logf("%s: %s (%s)", tl.Dir, bin, time.Since(start).Round(time.Second))
	}
}
