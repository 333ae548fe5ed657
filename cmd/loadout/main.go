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
	"sort"
	"syscall"
)

// env is what a command may touch: its streams and the working folder.
// Tests run commands in-process with buffers.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
}

type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands is filled by each command's file in init.
var commands = map[string]command{}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "loadout: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return 2
	}
	return c.run(ctx, e, args[1:])
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
	fmt.Fprintln(w, "\nRun 'loadout COMMAND --help' for a command's flags.")
}
