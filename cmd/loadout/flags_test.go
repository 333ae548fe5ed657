package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// TestFlagErrorsOneLine: a bad flag is one line on stderr, naming the
// flag as --flag, with the closest flag for a typo and how to get help;
// no help text is printed with it.
func TestFlagErrorsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prompt", "--budjet", "3"}, "loadout prompt: unknown flag --budjet (did you mean --budget?); run 'loadout help prompt'"},
		{[]string{"load", "x", "--jsn"}, "loadout load: unknown flag --jsn (did you mean --json?); run 'loadout help load'"},
		{[]string{"load", "--zzzzzz", "x"}, "loadout load: unknown flag --zzzzzz; run 'loadout help load'"},
		{[]string{"prompt", "--budget"}, "loadout prompt: flag needs an argument: --budget; run 'loadout help prompt'"},
		{[]string{"prompt", "--budget", "x"}, `loadout prompt: invalid value "x" for flag --budget: parse error; run 'loadout help prompt'`},
		{[]string{"token", "create", "--scpe", "admin"}, "loadout token create: unknown flag --scpe (did you mean --scope?); run 'loadout token create --help'"},
	} {
		r := runCLI(t, tc.args...)
		if r.code != 2 || r.stdout != "" || r.stderr != tc.want+"\n" {
			t.Errorf("%v: code %d, stdout %q, stderr %q\nwant %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// TestMissingNameOneLine: a missing NAME (or VERSION, PATH) is one line
// that names it.
func TestMissingNameOneLine(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		missing string
	}{
		{[]string{"load"}, "missing NAME"},
		{[]string{"read", "x"}, "missing PATH"},
		{[]string{"versions"}, "missing NAME"},
		{[]string{"restore", "x"}, "missing VERSION"},
		{[]string{"export"}, "missing NAME"},
		{[]string{"enable"}, "missing NAME"},
		{[]string{"disable"}, "missing NAME"},
		{[]string{"import"}, "missing SOURCE"},
	} {
		r := runCLI(t, tc.args...)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, tc.missing) ||
			!strings.HasSuffix(r.stderr, "run 'loadout help "+tc.args[0]+"'\n") {
			t.Errorf("%v: code %d, stderr %q: want one line with %q", tc.args, r.code, r.stderr, tc.missing)
		}
	}
}

// TestHelpSpellsDoubleDashAndListsEveryFlag: every command's help spells
// its flags --flag (never -flag) and its usage line names every flag.
func TestHelpSpellsDoubleDashAndListsEveryFlag(t *testing.T) {
	for name := range commands {
		if name == "validate" || name == "read-properties" || name == "to-prompt" || name == "version" || name == "token" || name == "help" {
			continue // the reference CLI's own help, or no flags
		}
		r := runCLI(t, "help", name)
		out := r.stdout + r.stderr
		if r.code != 0 {
			t.Errorf("help %s: %d %s", name, r.code, out)
			continue
		}
		usage, _, _ := strings.Cut(out, "\n")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("help %s spells a flag with one dash: %q", name, line)
			}
			if f, ok := strings.CutPrefix(line, "  --"); ok {
				f, _, _ = strings.Cut(f, " ")
				if !strings.Contains(usage, "--"+f) {
					t.Errorf("help %s: usage line %q does not list --%s", name, usage, f)
				}
			}
		}
	}
}

func TestArgNames(t *testing.T) {
	for args, want := range map[string]string{
		"[--config F --agent ID | --root DIR...] [--json] NAME":                     "NAME",
		"[--db D] NAME VERSION":                                                     "NAME VERSION",
		"[--db D] [--config F] NAME --format json|zip|dir --out PATH [--version N]": "NAME",
		"[--db D] NAME | plugin:ID/NAME":                                            "NAME",
	} {
		if got := strings.Join(argNames(args), " "); got != want {
			t.Errorf("argNames(%q) = %q, want %q", args, got, want)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("budget", false, "")
	if got := closestFlag(fs, "budjet"); got != "budget" {
		t.Errorf("closestFlag: %q", got)
	}
}

// TestReadRefusesNegativeBytes: --max -5 was taken as the default cap
// without a word; --offset, --length and --max below 0 are refused.
func TestReadRefusesNegativeBytes(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	testutil.Write(t, filepath.Join(dir, "a", "SKILL.md"), "---\nname: a\ndescription: A.\n---\nbody\n")
	for _, f := range []string{"--offset", "--length", "--max"} {
		r := runCLI(t, "read", "--root", dir, "a", "SKILL.md", f, "-5")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "read: "+f+" -5: give 0 or more bytes") {
			t.Errorf("%s -5: code %d, stdout %q, stderr %q", f, r.code, r.stdout, r.stderr)
		}
	}
}
