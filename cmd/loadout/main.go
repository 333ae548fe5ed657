// Command loadout finds, checks and serves Agent Skills.
//
// Each subcommand lives in its own file and has the signature of
// command.run. main only dispatches and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/loadout/loadout/internal/textdist"
)

// env is what a command may touch: its streams and the working folder.
// Tests run commands in-process with buffers.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
	logJSON        bool // serve --log-json: fail writes a JSON log line
}

type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands is filled by each command's file in init.
var commands = map[string]command{}

func init() {
	commands["version"] = command{"Print loadout's version, commit and Go version", runVersion}
	commands["help"] = command{"Show the commands, or one command's usage and flags (help COMMAND)", runHelp}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		// Usage first, then the error as the last line, where it is seen.
		usage(e.stderr)
		fmt.Fprintln(e.stderr, "\nloadout: no command given: pick one of the commands above (loadout help COMMAND shows its flags)")
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return runHelp(ctx, e, args[1:])
	case "-version", "--version":
		return runVersion(ctx, e, args[1:])
	}
	c, ok := commands[args[0]]
	if !ok {
		unknownCommand(e, args[0])
		return 2
	}
	return c.run(ctx, e, args[1:])
}

// unknownCommand writes the one-line error for a name that is not a
// command, with the closest names.
func unknownCommand(e *env, name string) {
	msg := fmt.Sprintf("loadout: unknown command %q", name)
	if strings.HasPrefix(name, "-") {
		msg = fmt.Sprintf("loadout: %s is not a command: flags go after the command (loadout COMMAND %s)", name, name)
	} else if s := closestCommands(name); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	fmt.Fprintln(e.stderr, msg+"; run 'loadout help' for the list of commands")
}

// maxCommandTypos is the most edits between a mistyped command and a
// suggestion: two catches a swapped or missing pair of letters without
// suggesting unrelated short names.
const maxCommandTypos = 2

// closestCommands returns the commands within maxCommandTypos edits of
// name (or having it as a prefix), nearest first.
func closestCommands(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for n := range commands {
		d := textdist.Levenshtein(strings.ToLower(name), n)
		if len(name) >= 3 && strings.HasPrefix(n, strings.ToLower(name)) {
			d = min(d, 1)
		}
		if d <= maxCommandTypos && d < len(n) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := make([]string, 0, 3)
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// runHelp is "loadout help [COMMAND]": the command list, or one command's
// usage and flags, on stdout (help that was asked for is the output).
func runHelp(ctx context.Context, e *env, args []string) int {
	switch len(args) {
	case 0:
		usage(e.stdout)
		return 0
	case 1:
	default:
		fmt.Fprintf(e.stderr, "loadout help: takes one command, got %d arguments (%s)\n", len(args), strings.Join(args, " "))
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		usage(e.stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		unknownCommand(e, name)
		return 2
	}
	// A command prints its usage to stderr on --help; asked for, it is
	// the output.
	he := *e
	he.stderr = e.stdout
	return c.run(ctx, &he, []string{"--help"})
}

// buildVersion and buildCommit are set with -ldflags -X by builds that
// have no VCS information to embed (see versionLine).
var buildVersion, buildCommit string

// runVersion is "loadout version" and "loadout --version".
func runVersion(_ context.Context, e *env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprintln(e.stdout, "Usage: loadout version\n\nPrints loadout's module version, the commit it was built from (with \"modified\" when the tree had changes), and the Go version and platform. It takes no flags.")
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(e.stderr, "loadout version: takes no arguments, got %q\n", strings.Join(args, " "))
		return 2
	}
	fmt.Fprintln(e.stdout, versionLine())
	return 0
}

// versionLine is "loadout VERSION (commit HASH[, modified], TIME) GO OS/ARCH"
// from the build information the Go toolchain embeds: VERSION is the
// module version (a tag for go install ...@vX, a pseudo-version or
// "(devel)" for a build from a clone), HASH the VCS commit.
//
// A build without VCS information (a Docker build context without .git)
// can set them with -ldflags "-X main.buildVersion=v1.2.3 -X
// main.buildCommit=HASH"; those win.
func versionLine() string {
	version, commit, when, modified := "(unknown)", "", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if buildVersion != "" {
		version = buildVersion
	}
	if buildCommit != "" {
		commit, when, modified = buildCommit, "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "loadout %s", version)
	if commit != "" {
		fmt.Fprintf(&b, " (commit %s", commit)
		if modified {
			b.WriteString(", modified")
		}
		if when != "" {
			b.WriteString(", " + when)
		}
		b.WriteString(")")
	} else {
		b.WriteString(" (no commit recorded: built outside a git checkout or with -buildvcs=false)")
	}
	fmt.Fprintf(&b, " %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "loadout finds, checks and serves Agent Skills.")
	fmt.Fprintln(w, "\nUsage: loadout COMMAND [flags] [args]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'loadout help COMMAND' (or 'loadout COMMAND --help') for a command's flags; 'loadout version' for the version.")
}
