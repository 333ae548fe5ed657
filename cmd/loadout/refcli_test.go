package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

func runRef(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}, args)
	return out.String(), errb.String(), code
}

func refSkill(t *testing.T, root, dir, file, content string) string {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRefCLI(t *testing.T) {
	root := t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	good := refSkill(t, root, "good", "SKILL.md", "---\nname: good\ndescription: \"A <b> & 'q' é\"\nmetadata:\n  v: 1.0\n---\nBody\n")
	bad := refSkill(t, root, "bad", "SKILL.md", "---\nname: Bad\nextra: 1\n---\n")
	low := refSkill(t, root, "low", "skill.md", "---\nname: low\ndescription: lower\n---\n")
	empty := filepath.Join(root, "empty")
	testutil.Must(t, os.Mkdir(empty, 0o755))
	file := filepath.Join(root, "notes.txt")
	testutil.Write(t, file, "x")
	missing := filepath.Join(root, "nope")

	usage := func(cmd, args, msg string) string {
		return "Usage: loadout " + cmd + " [OPTIONS] " + args + "\nTry 'loadout " + cmd + " --help' for help.\n\nError: " + msg + "\n"
	}
	prompt := func(name, desc, loc string) string {
		return "<skill>\n<name>\n" + name + "\n</name>\n<description>\n" + desc + "\n</description>\n<location>\n" + loc + "\n</location>\n</skill>\n"
	}
	tests := []struct {
		name           string
		args           []string
		stdout, stderr string
		code           int
	}{
		{"validate valid", []string{"validate", good}, "Valid skill: " + good + "\n", "", 0},
		{"validate file path", []string{"validate", filepath.Join(low, "skill.md")}, "Valid skill: " + low + "\n", "", 0},
		{"validate trailing slashes", []string{"validate", good + "//"}, "Valid skill: " + good + "\n", "", 0},
		{"validate invalid", []string{"validate", bad}, "", "Validation failed for " + bad + ":\n" +
			"  - Unexpected fields in frontmatter: extra. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.\n" +
			"  - Skill name 'Bad' must be lowercase\n" +
			"  - Directory name 'bad' must match skill name 'Bad'\n" +
			"  - Missing required field in frontmatter: description\n", 1},
		{"validate no SKILL.md", []string{"validate", empty}, "", "Validation failed for " + empty + ":\n  - Missing required file: SKILL.md\n", 1},
		{"validate not a directory", []string{"validate", file}, "", "Validation failed for " + file + ":\n  - Not a directory: " + file + "\n", 1},
		{"validate several", []string{"validate", good, bad}, "Valid skill: " + good + "\n", "Validation failed for " + bad + ":\n" +
			"  - Unexpected fields in frontmatter: extra. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.\n" +
			"  - Skill name 'Bad' must be lowercase\n" +
			"  - Directory name 'bad' must match skill name 'Bad'\n" +
			"  - Missing required field in frontmatter: description\n", 1},
		{"validate missing path", []string{"validate", missing}, "", usage("validate", "SKILL_PATH...", "Invalid value for 'SKILL_PATH': Path '"+missing+"' does not exist."), 2},
		{"validate quote in path", []string{"validate", "it's"}, "", usage("validate", "SKILL_PATH...", `Invalid value for 'SKILL_PATH': Path "it's" does not exist.`), 2},
		{"validate no path", []string{"validate"}, "", usage("validate", "SKILL_PATH...", "Missing argument 'SKILL_PATH'."), 2},
		{"validate unknown option", []string{"validate", "-x", good}, "", usage("validate", "SKILL_PATH...", "No such option '-x'."), 2},
		{"validate near --help", []string{"validate", "--hel"}, "", usage("validate", "SKILL_PATH...", "No such option '--hel'. Did you mean '--help'?"), 2},
		{"validate far option", []string{"validate", "--verbose"}, "", usage("validate", "SKILL_PATH...", "No such option '--verbose'."), 2},
		{"validate --help with a value", []string{"validate", "--help=1"}, "", "Error: Option '--help' does not take a value.\n", 2},
		{"validate after --", []string{"validate", "--", "--help"}, "", usage("validate", "SKILL_PATH...", "Invalid value for 'SKILL_PATH': Path '--help' does not exist."), 2},

		{"read-properties", []string{"read-properties", good}, "{\n  \"name\": \"good\",\n  \"description\": \"A <b> & 'q' \\u00e9\",\n  \"metadata\": {\n    \"v\": \"1.0\"\n  }\n}\n", "", 0},
		{"read-properties file path", []string{"read-properties", filepath.Join(good, "SKILL.md")}, "{\n  \"name\": \"good\",\n  \"description\": \"A <b> & 'q' \\u00e9\",\n  \"metadata\": {\n    \"v\": \"1.0\"\n  }\n}\n", "", 0},
		{"read-properties missing field", []string{"read-properties", bad}, "", "Error: Missing required field in frontmatter: description\n", 1},
		{"read-properties no SKILL.md", []string{"read-properties", empty}, "", "Error: SKILL.md not found in " + empty + "\n", 1},
		{"read-properties a file", []string{"read-properties", file}, "", "Error: SKILL.md not found in " + file + "\n", 1},
		{"read-properties two paths", []string{"read-properties", good, low}, "", usage("read-properties", "SKILL_PATH", "Got unexpected extra argument ("+low+")"), 2},
		{"read-properties missing path", []string{"read-properties", missing}, "", usage("read-properties", "SKILL_PATH", "Invalid value for 'SKILL_PATH': Path '"+missing+"' does not exist."), 2},

		{"to-prompt", []string{"to-prompt", good, filepath.Join(low, "skill.md")}, "<available_skills>\n" +
			prompt("good", "A &lt;b&gt; &amp; &#x27;q&#x27; é", filepath.Join(real, "good", "SKILL.md")) +
			prompt("low", "lower", filepath.Join(real, "low", "skill.md")) + "</available_skills>\n", "", 0},
		{"to-prompt does not validate", []string{"to-prompt", bad}, "", "Error: Missing required field in frontmatter: description\n", 1},
		{"to-prompt stops at the first error", []string{"to-prompt", good, empty, bad}, "", "Error: SKILL.md not found in " + filepath.Join(real, "empty") + "\n", 1},
		{"to-prompt no paths", []string{"to-prompt"}, "", usage("to-prompt", "SKILL_PATHS...", "Missing argument 'SKILL_PATHS...'."), 2},
		{"to-prompt missing path", []string{"to-prompt", good, missing}, "", usage("to-prompt", "SKILL_PATHS...", "Invalid value for 'SKILL_PATHS...': Path '"+missing+"' does not exist."), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runRef(t, tt.args...)
			if stdout != tt.stdout || stderr != tt.stderr || code != tt.code {
				t.Errorf("loadout %q:\nstdout %q\n want  %q\nstderr %q\n want  %q\ncode %d, want %d", tt.args, stdout, tt.stdout, stderr, tt.stderr, code, tt.code)
			}
		})
	}
}

func TestRefCLIHelp(t *testing.T) {
	for _, cmd := range []string{"validate", "read-properties", "to-prompt"} {
		// --help wins over anything but an unknown option, as in click.
		stdout, stderr, code := runRef(t, cmd, "/no/such/path", "--help")
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: loadout "+cmd+" [OPTIONS] SKILL_PATH") ||
			!strings.HasSuffix(stdout, "\nOptions:\n  --help  Show this message and exit.\n") {
			t.Errorf("%s --help: code %d, stderr %q, stdout %q", cmd, code, stderr, stdout)
		}
		if _, ok := commands[cmd]; !ok {
			t.Errorf("%s is not registered", cmd)
		}
	}
}

func TestRefCloseMatch(t *testing.T) {
	for word, want := range map[string]bool{"--hel": true, "--halp": true, "--help2": true, "--x": false, "--version": false} {
		if got := refCloseMatch(word, "--help"); got != want {
			t.Errorf("refCloseMatch(%q) = %v", word, got)
		}
	}
}
