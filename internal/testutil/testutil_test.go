package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatal and Skip instead of ending
// the test, so that the helpers' failure paths can be seen.
type recorder struct {
	testing.TB
	fatal, skipped string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatal(args ...any)                 { r.fatal = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }

// TestUnavailable: a test that cannot run is skipped saying why, and
// fails instead when CI is set.
func TestUnavailable(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{}
	Unavailable(r, "no %s here", "chromium")
	if r.skipped != "no chromium here" || r.fatal != "" {
		t.Errorf("without CI: skipped %q, fatal %q; want a skip saying why", r.skipped, r.fatal)
	}
	t.Setenv("CI", "1")
	r = &recorder{}
	Unavailable(r, "no %s here", "chromium")
	// (A real Fatalf ends the test: the Skip after it never runs.)
	if !strings.HasPrefix(r.fatal, "no chromium here; CI is set") {
		t.Errorf("with CI: skipped %q, fatal %q; want a failure saying why", r.skipped, r.fatal)
	}
}

// TestSetupHelpers: Write, WriteBytes, Mkdir and Must do their work
// silently, and fail the test when it cannot be done.
func TestSetupHelpers(t *testing.T) {
	dir := t.TempDir()
	r := &recorder{}
	Mkdir(r, filepath.Join(dir, "a", "b"))
	Write(r, filepath.Join(dir, "a", "b", "f.txt"), "text")
	WriteBytes(r, filepath.Join(dir, "a", "x.sh"), []byte("#!/bin/sh\n"), 0o755)
	Must(r, nil)
	if r.fatal != "" {
		t.Fatalf("a helper failed on work it can do: %s", r.fatal)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a", "b", "f.txt")); err != nil || string(data) != "text" {
		t.Errorf("Write: %q, %v", data, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a", "x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("WriteBytes: %v, %v; want mode 0755", fi, err)
	}
	for name, f := range map[string]func(r *recorder){
		"Write into a missing folder": func(r *recorder) { Write(r, filepath.Join(dir, "none", "f.txt"), "x") },
		"Mkdir below a file":          func(r *recorder) { Mkdir(r, filepath.Join(dir, "a", "b", "f.txt", "c")) },
		"Must with an error":          func(r *recorder) { Must(r, os.ErrNotExist) },
	} {
		r := &recorder{}
		f(r)
		if r.fatal == "" {
			t.Errorf("%s: the test was not failed", name)
		}
	}
}

// TestSmuggle: each byte is one variation selector: below 16 in
// U+FE00..U+FE0F, from 16 on in U+E0100 and up.
func TestSmuggle(t *testing.T) {
	got := []rune(Smuggle("ok", "\x00\x0f\x10\xff"))
	want := []rune{'o', 'k', 0xFE00, 0xFE0F, 0xE0100, 0xE0100 + 0xff - 16}
	if fmt.Sprintf("%U", got) != fmt.Sprintf("%U", want) {
		t.Errorf("Smuggle = %U, want %U", got, want)
	}
}
