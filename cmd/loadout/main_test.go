package main

import (
	"runtime"
	"strings"
	"testing"
)

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		r := runCLI(t, args...)
		if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "loadout ") || !strings.Contains(r.stdout, runtime.Version()) || len(lines(r.stdout)) != 1 {
			t.Errorf("%v: %d %q %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runCLI(t, "version", "extra")
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, "takes no arguments") {
		t.Errorf("version extra: %d %q", r.code, r.stderr)
	}
	buildVersion, buildCommit = "v9.9.9", "0123abcd"
	defer func() { buildVersion, buildCommit = "", "" }()
	if got := versionLine(); !strings.HasPrefix(got, "loadout v9.9.9 (commit 0123abcd) ") {
		t.Errorf("with -X: %q", got)
	}
}

func TestHelpCommand(t *testing.T) {
	r := runCLI(t, "help", "check")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: loadout check") || !strings.Contains(r.stdout, "-fail-on") || r.stderr != "" {
		t.Errorf("help check: %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "help"}} {
		r := runCLI(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Commands:") || !strings.Contains(r.stdout, "  version ") {
			t.Errorf("%v: %d %q", args, r.code, r.stdout)
		}
	}
	r = runCLI(t, "help", "chek")
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, `unknown command "chek" (did you mean check?)`) {
		t.Errorf("help chek: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "help", "check", "list")
	if r.code != 2 || len(lines(r.stderr)) != 1 {
		t.Errorf("help with two commands: %d %q", r.code, r.stderr)
	}
}

// An unknown command is one line, with the closest commands, not the error
// buried above the command list.
func TestUnknownCommandIsOneLine(t *testing.T) {
	for arg, want := range map[string]string{
		"serv":       "did you mean serve?",
		"lsit":       "did you mean list?",
		"frobnicate": `unknown command "frobnicate"; run 'loadout help'`,
		"--root":     "flags go after the command",
	} {
		r := runCLI(t, arg)
		if r.code != 2 || r.stdout != "" || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %d, want one line with %q: %q", arg, r.code, want, r.stderr)
		}
	}
	// No command: the list, then the error as the last line.
	r := runCLI(t)
	l := lines(r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "Commands:") || !strings.HasPrefix(l[len(l)-1], "loadout: no command given") {
		t.Errorf("no command: %d %q", r.code, r.stderr)
	}
}
