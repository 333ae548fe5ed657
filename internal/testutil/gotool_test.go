package testutil

import (
	"os"
	"testing"
)

// TestBuildTestTools builds every test tool into the cache, when
// LOADOUT_BUILD_TOOLS=1 asks (.ci/run does, before the tests); otherwise
// it skips: each test builds what it needs itself.
func TestBuildTestTools(t *testing.T) {
	if os.Getenv("LOADOUT_BUILD_TOOLS") != "1" {
		t.Skip("LOADOUT_BUILD_TOOLS=1 builds every test tool into the cache (.ci/run does); tests build what they need themselves")
	}
	BuildTools(t)
}

func TestModuleHashChangesWithTheModule(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir+"/go.mod", "module x\n")
	Write(t, dir+"/main.go", "package main\nfunc main() {}\n")
	a, err := moduleHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	Write(t, dir+"/main.go", "package main\nfunc main() { println() }\n")
	b, _ := moduleHash(dir)
	Mkdir(t, dir+"/node_modules")
	Write(t, dir+"/node_modules/x.go", "package x\n")
	c, _ := moduleHash(dir)
	if a == b || b != c {
		t.Fatalf("hashes %s %s %s: want a change of main.go to change it and node_modules to be left out", a, b, c)
	}
}
