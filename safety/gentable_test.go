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
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, bin, out).CombinedOutput(); err != nil {
		t.Fatalf("gentable: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("ignorable_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ignorable_table.go differs from what the generator writes: run go generate ./safety")
	}
}
