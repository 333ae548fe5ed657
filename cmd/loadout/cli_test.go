package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files")

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}
	code := run(context.Background(), e, args)
	return result{code, out.String(), errb.String()}
}

// examples returns the absolute path of the shipped example folder.
func examplesDir(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		testutil.Must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/loadout -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file %s:\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

func TestPromptGolden(t *testing.T) {
	ex := examplesDir(t)
	cfg := filepath.Join(ex, "loadout.json")
	for _, c := range []struct{ agent, format string }{
		{"coder", ""}, {"reviewer", ""}, {"ops", ""},
		{"coder", "catalog"}, {"coder", "progressive"},
	} {
		args := []string{"prompt", "--config", cfg, "--agent", c.agent}
		if c.format != "" {
			args = append(args, "--format", c.format)
		}
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		name := c.agent
		if c.format != "" {
			name += "-" + c.format
		}
		golden(t, "prompt-"+name+".txt", strings.ReplaceAll(r.stdout, ex, "$EXAMPLES"))
	}
}

func TestPromptBudgetSaysWhatWasCut(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "loadout.json")
	r := runCLI(t, "prompt", "--config", cfg, "--agent", "coder", "--budget", "900")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "budget-") || !strings.Contains(r.stderr, "deploy") {
		t.Errorf("stderr should name the skills the budget touched:\n%s", r.stderr)
	}
}

// TestPromptBudgetTokens: --budget-tokens limits the listing to four
// characters a token, and one too small says what the least is.
func TestPromptBudgetTokens(t *testing.T) {
	cfg := filepath.Join(examplesDir(t), "loadout.json")
	r := runCLI(t, "prompt", "--config", cfg, "--agent", "coder", "--budget", "100000", "--budget-tokens", "250")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "budget of 1000 characters") || !strings.Contains(r.stdout, "<available_skills>") {
		t.Errorf("--budget-tokens 250 is not a budget of 1,000 characters:\n%s", r.stderr)
	}
	r = runCLI(t, "prompt", "--config", cfg, "--agent", "coder", "--budget-tokens", "20")
	if r.code == 0 || !strings.Contains(r.stderr, "--budget-tokens 20 is too small") || !strings.Contains(r.stderr, "give at least") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	r = runCLI(t, "prompt", "--config", cfg, "--agent", "coder", "--budget-tokens", "-3")
	if r.code == 0 || !strings.Contains(r.stderr, "--budget-tokens -3") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

func TestList(t *testing.T) {
	ex := examplesDir(t)
	cfg := filepath.Join(ex, "loadout.json")
	r := runCLI(t, "list", "--config", cfg, "--agent", "coder", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Skills []struct {
			Name, Description, Location, Mode string
			Source                            struct{ Kind, Root string }
			Files                             []struct{ Path string }
		}
		Diagnostics []struct{ Severity, Code, Message, Path string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var names []string
	for _, s := range out.Skills {
		names = append(names, s.Name+":"+s.Mode)
		if s.Source.Kind != "folder" || s.Source.Root != filepath.Join(ex, "skills") || !strings.HasPrefix(s.Location, ex) {
			t.Errorf("source of %s: %+v %s", s.Name, s.Source, s.Location)
		}
	}
	if got := strings.Join(names, " "); got != "code-review:listed commit-messages:inline deploy:listed pdf-forms:listed" {
		t.Errorf("skills = %s", got)
	}
	if out.Diagnostics == nil {
		t.Error("diagnostics must be an array, not null")
	}
	// The table.
	r = runCLI(t, "list", "--root", filepath.Join(ex, "skills"))
	if r.code != 0 || !strings.Contains(r.stdout, "release-checklist  hidden") || !strings.Contains(r.stdout, "5 skills") {
		t.Errorf("table:\n%s\n%s", r.stdout, r.stderr)
	}
}

func TestLoadAndRead(t *testing.T) {
	root := filepath.Join(examplesDir(t), "skills")
	r := runCLI(t, "load", "--root", root, "deploy")
	if r.code != 0 || !strings.Contains(r.stdout, "<skill_context name=\"deploy\"") || !strings.Contains(r.stdout, "scripts/deploy.sh") {
		t.Errorf("load: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "load", "--root", root, "deplyo")
	if r.code != 1 || !strings.Contains(r.stderr, "Closest names: deploy") {
		t.Errorf("load unknown: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "read", "--root", root, "deploy", "references/environments.md")
	want, _ := os.ReadFile(filepath.Join(root, "deploy", "references", "environments.md"))
	if r.code != 0 || r.stdout != string(want) {
		t.Errorf("read: %d %q", r.code, r.stdout)
	}
	r = runCLI(t, "read", "--root", root, "deploy", "scripts/deploy.sh", "--offset", "2", "--length", "12")
	if r.code != 0 || r.stdout != "/usr/bin/env" {
		t.Errorf("range read: %d %q", r.code, r.stdout)
	}
	for _, p := range []string{"../pdf-forms/SKILL.md", "/etc/passwd", "a\\b"} {
		r = runCLI(t, "read", "--root", root, "deploy", p)
		if r.code != 1 || !strings.Contains(r.stderr, "refused") || r.stdout != "" {
			t.Errorf("read %q: %d %q %q", p, r.code, r.stdout, r.stderr)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "good"), 0o755))
	testutil.Write(t, filepath.Join(dir, "good", "SKILL.md"), "---\nname: good\ndescription: Good.\n---\n")
	r := runCLI(t, "check", "--root", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "1 skill, 0 errors, 0 warnings") {
		t.Errorf("clean check: %d %s", r.code, r.stdout)
	}
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "odd"), 0o755))
	testutil.Write(t, filepath.Join(dir, "odd", "SKILL.md"), "---\nname: other\ndescription: Odd.\n---\n")
	r = runCLI(t, "check", "--root", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "name-mismatch") {
		t.Errorf("warning check: %d %s", r.code, r.stdout)
	}
	r = runCLI(t, "check", "--root", dir, "--fail-on", "warning")
	if r.code != 1 {
		t.Errorf("--fail-on warning: exit %d", r.code)
	}
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "bad"), 0o755))
	testutil.Write(t, filepath.Join(dir, "bad", "SKILL.md"), "---\nname: bad\n---\n")
	r = runCLI(t, "check", "--root", dir, "--json")
	var out struct {
		Errors      int
		Diagnostics []struct{ Severity, Code, Path, Field string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 1 || out.Errors != 1 {
		t.Fatalf("error check: %d %v %s", r.code, err, r.stdout)
	}
	found := false
	for _, d := range out.Diagnostics {
		if d.Code == "description-missing" && d.Field == "description" && strings.HasSuffix(d.Path, filepath.Join("bad", "SKILL.md")) {
			found = true
		}
	}
	if !found {
		t.Errorf("no description-missing diagnostic naming the file and field: %s", r.stdout)
	}
	if r := runCLI(t, "check", "--root", filepath.Join(dir, "nope")); r.code != 1 || !strings.Contains(r.stdout, "root-missing") {
		t.Errorf("missing root: %d %s", r.code, r.stdout)
	}
}

func TestUsageAndConfigErrors(t *testing.T) {
	for name := range commands {
		r := runCLI(t, name, "--help")
		if r.code != 0 || !strings.Contains(r.stderr+r.stdout, "sage: ") {
			t.Errorf("%s --help: %d %q", name, r.code, r.stderr)
		}
	}
	if r := runCLI(t, "frobnicate"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", r.code, r.stderr)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, "{\n  // comment\n  \"agents\": [{\"agentId\": \"a\", \"skills\": [{\"root\": \".\", \"inlin\": []}]}]\n}\n")
	r := runCLI(t, "list", "--config", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, cfg) || !strings.Contains(r.stderr, `agents[0].skills[0]`) || !strings.Contains(r.stderr, `"inlin"`) || !strings.Contains(r.stderr, `"inline"`) {
		t.Errorf("unknown key: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "prompt", "--config", cfg)
	if r.code != 2 {
		t.Errorf("prompt without --agent: %d %q", r.code, r.stderr)
	}
	testutil.Write(t, cfg, `{"agents": [{"agentId": "a"}]}`)
	if r := runCLI(t, "prompt", "--config", cfg, "--agent", "b"); r.code != 2 || !strings.Contains(r.stderr, `no agent "b"`) {
		t.Errorf("unknown agent: %d %q", r.code, r.stderr)
	}
}

// TestCheckMinSeverity: --min-severity (and --quiet, its warning) hides
// the lines under it; the summary counts them, so none goes unseen, and
// the exit status is the same.
func TestCheckMinSeverity(t *testing.T) {
	dir := t.TempDir()
	// An unreferenced file (info) and a name that is not its folder's
	// (warning).
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "odd", "notes"), 0o755))
	testutil.Write(t, filepath.Join(dir, "odd", "SKILL.md"), "---\nname: other\ndescription: Odd.\n---\nDo it.\n")
	testutil.Write(t, filepath.Join(dir, "odd", "notes", "stray.md"), "stray\n")
	all := runCLI(t, "check", "--root", dir)
	infoLine := regexp.MustCompile(`(?m)^info `)
	infos := len(infoLine.FindAllString(all.stdout, -1))
	if infos == 0 || !strings.Contains(all.stdout, "name-mismatch") {
		t.Fatalf("the fixture lacks an info or a warning line:\n%s", all.stdout)
	}
	for _, args := range [][]string{{"--quiet"}, {"--min-severity", "warning"}} {
		r := runCLI(t, append([]string{"check", "--root", dir}, args...)...)
		want := fmt.Sprintf("(%s below warning not shown: --min-severity info shows them)", plural(infos, "line", "lines"))
		if r.code != all.code || infoLine.MatchString(r.stdout) || !strings.Contains(r.stdout, "name-mismatch") || !strings.Contains(r.stdout, want) {
			t.Errorf("%v: exit %d (want %d):\n%s\nwant the summary to say %q", args, r.code, all.code, r.stdout, want)
		}
	}
	if r := runCLI(t, "check", "--root", dir, "--min-severity", "error"); strings.Contains(r.stdout, "name-mismatch") || !strings.Contains(r.stdout, "below error not shown") {
		t.Errorf("--min-severity error:\n%s", r.stdout)
	}
	if r := runCLI(t, "check", "--root", dir, "--min-severity", "info"); r.stdout != all.stdout {
		t.Errorf("--min-severity info differs from the default")
	}
	r := runCLI(t, "check", "--root", dir, "--quiet", "--json")
	var out struct {
		Hidden      int
		Diagnostics []struct{ Severity string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Hidden != infos || len(out.Diagnostics) == 0 {
		t.Errorf("--quiet --json: %v hidden %d (want %d): %s", err, out.Hidden, infos, r.stdout)
	}
	for _, d := range out.Diagnostics {
		if d.Severity == "info" {
			t.Errorf("--quiet --json lists an info line")
		}
	}
	for _, args := range [][]string{{"--min-severity", "debug"}, {"--quiet", "--min-severity", "error"}} {
		if r := runCLI(t, append([]string{"check", "--root", dir}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "--") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestValidateAndCheckSameYAMLLine: validate (the reference's rules) and
// check name the same line of SKILL.md for the same YAML error, parser
// errors (an unclosed flow list, counted from 0 by the library) and
// scanner errors (a tab, counted from 1) alike.
func TestValidateAndCheckSameYAMLLine(t *testing.T) {
	lineRE := regexp.MustCompile(`(?i)invalid YAML in frontmatter: (line \d+)`)
	for name, text := range map[string]string{
		"flow":   "---\nname: bad\ndescription: Good one.\nmetadata:\n  a: [1, 2\n  b: 3\n---\nBody\n",
		"map":    "---\nname: bad\ndescription: d\ntags: {a: b\n---\nBody\n",
		"indent": "---\nname: bad\ndescription: d\nlicense: mit\n  bad: indent\n---\nBody\n",
	} {
		dir := t.TempDir()
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "bad"), 0o755))
		testutil.Write(t, filepath.Join(dir, "bad", "SKILL.md"), text)
		v := runCLI(t, "validate", filepath.Join(dir, "bad"))
		c := runCLI(t, "check", "--root", dir, "--safety=false")
		vm, cm := lineRE.FindStringSubmatch(v.stdout+v.stderr), lineRE.FindStringSubmatch(c.stdout)
		if vm == nil || cm == nil || vm[1] != cm[1] {
			t.Errorf("%s: validate says %q, check %q\n%s%s\n%s", name, vm, cm, v.stdout, v.stderr, c.stdout)
		}
	}
}
