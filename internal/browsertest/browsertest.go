// Package browsertest runs the real loadout binary (built once per test
// binary) and a real headless Chromium (Debian's chromium package) for the
// end-to-end tests of the web UI and of the client compatibility suite
// (compat). Only tests import it.
package browsertest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/testutil"
)

var build struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// Binary builds cmd/loadout once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "loadout-ui-bin")
		if err != nil {
			build.err = err
			return
		}
		build.bin = filepath.Join(dir, "loadout")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", build.bin, "./cmd/loadout")
		cmd.Dir = root
		build.out, build.err = cmd.CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("building loadout: %v\n%s", build.err, build.out)
	}
	return build.bin
}

// Server is a running `loadout serve`.
type Server struct {
	URL string // http://127.0.0.1:PORT
	mu  sync.Mutex
	log strings.Builder
}

// Log is what the server has written so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Serve starts `loadout serve --addr 127.0.0.1:0 args...` with env added
// to the environment, waits for its banner and stops it when the test
// ends, printing its log if the test failed. It runs in a temporary
// folder, so relative paths in args do not work.
func Serve(t testing.TB, env []string, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB="), env...)
	// In a folder of its own: a server given no --db makes loadout.db in
	// its working folder, which must not be the package's source folder.
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`UI: +(http://127\.0\.0\.1:\d+)/ui/`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("loadout serve log:\n%s", s.Log())
		}
	})
	select {
	case s.URL = <-found:
	case <-testutil.After(t):
		t.Fatalf("loadout serve did not start:\n%s", s.Log())
	}
	return s
}

// ChromiumPath is the browser the tests drive: $CHROMIUM, else chromium
// on the PATH.
func ChromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser starts a headless Chromium with a fresh profile and returns a
// context for chromedp actions in one tab (a window width by height). It
// skips the test without Chromium, or fails when CI is set. Under -short
// it skips.
func Browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser tests")
	}
	path := ChromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed, and CI is set: the UI's browser tests must run (apt-get install chromium)")
		}
		t.Skip("chromium is not installed: skipping the UI's browser tests (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	// Start the browser now, so a failure to start is reported here.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// Do runs chromedp steps with a deadline of 30 s, failing the test with
// what was being done.
func Do(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Do(c, steps...)
	// One step whose node went stale before it acted (the page re-rendered
	// between finding the node and clicking it) did nothing: do it again.
	// Several steps are not repeated, since the first may have acted.
	for try := 0; err != nil && len(steps) == 1 && staleNode(err) && try < 5; try++ {
		time.Sleep(100 * time.Millisecond)
		err = chromedp.Do(c, steps...)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// staleNode reports whether err is the browser saying a node id it was
// given no longer exists: the document changed under the action.
func staleNode(err error) bool {
	return strings.Contains(err.Error(), "No node with given id") || strings.Contains(err.Error(), "Could not find node with given id") ||
		// A read that met a navigation (CDP error -32000): the new page
		// answers it.
		strings.Contains(err.Error(), "Inspected target navigated or closed")
}

// Get runs one chromedp action that returns a value (Text, Evaluate, …)
// with a deadline of 30 s, failing the test with what was being done.
func Get[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	// A read is safe to repeat: when the page was replaced between finding
	// a node and reading it (a navigation finishing, a live reload), the
	// node's id is stale; read the new page instead.
	for try := 0; err != nil && staleNode(err) && try < 5; try++ {
		time.Sleep(100 * time.Millisecond)
		v, err = chromedp.Run(c, a)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Screenshot saves a full-page PNG (quality 100: any other quality makes
// Chromium send a JPEG) of the current page as NAME.png in the
// screenshot folder: docs/ui when LOADOUT_UPDATE_SCREENSHOTS is set (the
// README shows those), else the test's temporary folder.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("LOADOUT_UPDATE_SCREENSHOTS") != "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "docs", "ui")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	buf := Get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
