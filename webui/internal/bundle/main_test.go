package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// TestBundleIsUpToDate rebuilds the editor bundle from the pinned
// packages (npm ci in webui/editor when node_modules is missing) and
// fails when the committed webui/static/editor.js differs: a change to
// webui/editor that was not followed by `go generate ./webui`. Without
// npm it skips, unless CI is set.
func TestBundleIsUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..", "editor")
	testutil.NPMFolder(t, dir, filepath.Join("node_modules", ".package-lock.json"))
	got, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "static", "editor.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("webui/static/editor.js (%d bytes) is not the bundle webui/editor builds (%d bytes): run `go generate ./webui` and commit it", len(want), len(got))
	}
	// The bundle must not need eval (script-src 'self' has no 'unsafe-eval').
	for _, bad := range []string{"eval(", "new Function("} {
		if bytes.Contains(got, []byte(bad)) {
			t.Errorf("the bundle contains %q, which the UI's CSP refuses", bad)
		}
	}
}

// TestBundleBuildIsReproducible: two builds give the same bytes.
func TestBundleBuildIsReproducible(t *testing.T) {
	// Installs the pinned packages as TestBundleIsUpToDate does (and
	// fails without npm under CI), so it never depends on test order.
	dir := testutil.NPMFolder(t, filepath.Join("..", "..", "editor"), filepath.Join("node_modules", ".package-lock.json"))
	a, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the editor bundle differ")
	}
}
