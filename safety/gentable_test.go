package safety

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestGeneratedTableCurrent: ignorable_table.go is what its generator
// writes now, byte for byte (a generator changed without go generate, or
// a table edited by hand, fails here).
func TestGeneratedTableCurrent(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go tool not found: %v", err)
		}
		t.Skipf("go tool not found: %v", err)
	}
	dir := t.TempDir()
	bin, out := filepath.Join(dir, "gentable"), filepath.Join(dir, "table.go")
	if b, err := exec.Command(goTool, "build", "-o", bin, "./internal/gentable").CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/gentable: %v\n%s", err, b)
	}
	want, err := os.ReadFile("ignorable_table.go")
	if err != nil {
		t.Fatal(err)
	}
	// With a path, and as go generate runs it: no argument, the file in
	// the working folder.
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct {
		args []string
		out  string
	}{{[]string{out}, out}, {nil, filepath.Join(work, "ignorable_table.go")}} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, run.args...)
		cmd.Dir = work
		b, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("gentable %v: %v\n%s", run.args, err, b)
		}
		got, err := os.ReadFile(run.out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("gentable %v: ignorable_table.go differs from what the generator writes: run go generate ./safety", run.args)
		}
	}
}
