package main

// Drop-in stand-ins for the reference CLI skills-ref: validate,
// read-properties and to-prompt print the same bytes on the same streams
// and exit with the same codes (0 fine, 1 a problem with a skill, 2 a usage
// error). Their argument handling follows the click library the reference
// is built on, so usage errors read the same too, apart from the program
// name. Differences are listed in docs/compat-skills-ref.md.

import (
	"context"
	"fmt"
	"github.com/loadout/loadout/internal/pyrepr"
	"io"
	"os"
	"strings"

	"github.com/loadout/loadout/skill"
)

func init() {
	commands["validate"] = command{"check skill folders exactly as skills-ref validate does", runRefValidate}
	commands["read-properties"] = command{"print a skill's frontmatter as JSON, as skills-ref does", runRefReadProperties}
	commands["to-prompt"] = command{"print an <available_skills> block, as skills-ref to-prompt does", runRefToPrompt}
}

// refCommand describes one command for click-style argument handling.
type refCommand struct {
	name    string
	metavar string // as click names the argument in errors
	usage   string // the argument part of the usage line
	many    bool   // takes one or more paths
	help    string // paragraphs after the usage line
}

var refValidate = refCommand{
	name: "validate", metavar: "SKILL_PATH", usage: "SKILL_PATH...", many: true,
	help: `Check skill folders against the Agent Skills format with the rules,
messages and strict YAML of the reference validator skills-ref.

Each SKILL_PATH is a skill folder or its SKILL.md. A valid skill prints
"Valid skill: PATH" on stdout; an invalid one prints its problems on stderr.

Exit status: 0 when every skill is valid, 1 when one is not, 2 for a usage
error.`,
}

var refReadProperties = refCommand{
	name: "read-properties", metavar: "SKILL_PATH", usage: "SKILL_PATH",
	help: `Print the frontmatter fields of a skill (name, description, license,
compatibility, allowed-tools, metadata) as JSON, as skills-ref does. Only a
non-empty name and description are checked.

Exit status: 0 on success, 1 when the skill cannot be read, 2 for a usage
error.`,
}

var refToPrompt = refCommand{
	name: "to-prompt", metavar: "SKILL_PATHS...", usage: "SKILL_PATHS...", many: true,
	help: `Print the <available_skills> block for the given skill folders, in
order, as skills-ref does. The skills are not validated.

Exit status: 0 on success, 1 when a skill cannot be read, 2 for a usage
error.`,
}

func runRefValidate(_ context.Context, e *env, args []string) int {
	paths, code, done := refValidate.parse(e, args)
	if done {
		return code
	}
	status := 0
	for _, p := range paths {
		dir := skill.RefSkillDir(p)
		problems, err := skill.Validate(dir)
		if err != nil {
			problems = []string{err.Error()}
		}
		if len(problems) == 0 {
			fmt.Fprintf(e.stdout, "Valid skill: %s\n", dir)
			continue
		}
		status = 1
		fmt.Fprintf(e.stderr, "Validation failed for %s:\n", dir)
		for _, msg := range problems {
			fmt.Fprintf(e.stderr, "  - %s\n", msg)
		}
	}
	return status
}

func runRefReadProperties(_ context.Context, e *env, args []string) int {
	paths, code, done := refReadProperties.parse(e, args)
	if done {
		return code
	}
	props, err := skill.ReadProperties(paths[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintln(e.stdout, props.JSON())
	return 0
}

func runRefToPrompt(_ context.Context, e *env, args []string) int {
	paths, code, done := refToPrompt.parse(e, args)
	if done {
		return code
	}
	out, err := skill.ToPrompt(paths)
	if err != nil {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintln(e.stdout, out)
	return 0
}

// parse handles the arguments as click does for a command whose one option
// is --help: unknown options and a --help with a value are errors, --help
// anywhere before "--" prints the help, then the paths must exist. done is
// true when the command has nothing more to do; code is its exit status.
func (c refCommand) parse(e *env, args []string) (paths []string, code int, done bool) {
	help := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case a == "--help":
			help = true
		case strings.HasPrefix(a, "--help="):
			// click reports this one without the usage lines.
			fmt.Fprintln(e.stderr, "Error: Option '--help' does not take a value.")
			return nil, 2, true
		case strings.HasPrefix(a, "--"):
			opt, _, _ := strings.Cut(a, "=")
			msg := fmt.Sprintf("No such option '%s'.", opt)
			if refCloseMatch(opt, "--help") {
				msg += " Did you mean '--help'?"
			}
			return nil, c.usageError(e, msg), true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return nil, c.usageError(e, fmt.Sprintf("No such option '%s'.", a[:2])), true
		default:
			paths = append(paths, a)
		}
	}
	if help {
		c.printHelp(e.stdout)
		return nil, 0, true
	}
	if len(paths) == 0 {
		return nil, c.usageError(e, fmt.Sprintf("Missing argument '%s'.", c.metavar)), true
	}
	check := paths
	if !c.many {
		check = paths[:1]
	}
	for _, p := range check {
		if _, err := os.Stat(p); err != nil {
			return nil, c.usageError(e, fmt.Sprintf("Invalid value for '%s': Path %s does not exist.", c.metavar, pyrepr.String(p))), true
		}
	}
	if !c.many && len(paths) > 1 {
		extra := paths[1:]
		word := "argument"
		if len(extra) > 1 {
			word = "arguments"
		}
		return nil, c.usageError(e, fmt.Sprintf("Got unexpected extra %s (%s)", word, strings.Join(extra, " "))), true
	}
	return paths, 0, false
}

func (c refCommand) usageError(e *env, msg string) int {
	fmt.Fprintf(e.stderr, "Usage: loadout %s [OPTIONS] %s\nTry 'loadout %s --help' for help.\n\nError: %s\n", c.name, c.usage, c.name, msg)
	return 2
}

func (c refCommand) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: loadout %s [OPTIONS] %s\n\n", c.name, c.usage)
	for _, line := range strings.Split(c.help, "\n") {
		if line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprint(w, "\nOptions:\n  --help  Show this message and exit.\n")
}

// refCloseMatch is difflib.get_close_matches(word, [target]) != [] with its
// default cutoff of 0.6, which click uses to suggest an option.
func refCloseMatch(word, target string) bool {
	a, b := []rune(word), []rune(target)
	if len(a)+len(b) == 0 {
		return true
	}
	return float64(2*refMatchingChars(a, b))/float64(len(a)+len(b)) >= 0.6
}

// refMatchingChars counts the characters in difflib's matching blocks: the
// longest common run, then the same on either side of it.
func refMatchingChars(a, b []rune) int {
	bestI, bestJ, best := 0, 0, 0
	for i := range a {
		for j := range b {
			k := 0
			for i+k < len(a) && j+k < len(b) && a[i+k] == b[j+k] {
				k++
			}
			if k > best {
				bestI, bestJ, best = i, j, k
			}
		}
	}
	if best == 0 {
		return 0
	}
	return best + refMatchingChars(a[:bestI], b[:bestJ]) + refMatchingChars(a[bestI+best:], b[bestJ+best:])
}
