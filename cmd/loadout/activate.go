package main

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/catalog"
)

func init() {
	commands["load"] = command{"print what load_skill returns for a skill", runLoad}
	commands["read"] = command{"print one file of a skill, as read_skill_file does", runRead}
}

func runLoad(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	fs := newFlags(e, "load", "[--config F --agent ID | --root DIR...] [--json] NAME",
		"Activates a skill and prints the <skill_context> envelope load_skill returns.\nExits 1 when there is no such skill (the closest names are suggested).")
	cf.register(fs, true)
	fs.BoolVar(&cf.json, "json", false, "print the result as JSON")
	return cf.run(ctx, e, fs, args, 1, false, func(sess *session) int {
		l := sess.l
		res := l.Load(fs.Arg(0))
		if cf.json {
			writeJSON(e.stdout, res)
		} else if res.Status == catalog.StatusOK {
			fmt.Fprintln(e.stdout, res.Text)
		} else {
			fmt.Fprintf(e.stderr, "loadout: %s\n", res.Text)
		}
		if res.Status != catalog.StatusOK {
			return 1
		}
		return 0
	})
}

func runRead(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var opt catalog.ReadOptions
	fs := newFlags(e, "read", "[--config F --agent ID | --root DIR...] [--offset N] [--length N] [--json] NAME PATH",
		"Prints one file of a skill (PATH is relative to the skill folder), with the same checks as\nread_skill_file: paths with .., absolute paths and symlinks leaving the skill are refused.\nExits 1 when it refuses.")
	cf.register(fs, true)
	fs.BoolVar(&cf.json, "json", false, "print the result as JSON (binary content base64-encoded)")
	fs.Int64Var(&opt.Offset, "offset", 0, "first byte to read")
	fs.Int64Var(&opt.Length, "length", 0, "bytes to read (0: to the end)")
	fs.Int64Var(&opt.Max, "max", 0, fmt.Sprintf("most bytes to print (default %d)", catalog.DefaultReadCap))
	return cf.run(ctx, e, fs, args, 2, false, func(sess *session) int {
		for _, f := range []struct {
			name string
			v    int64
		}{{"offset", opt.Offset}, {"length", opt.Length}, {"max", opt.Max}} {
			if f.v < 0 {
				return fail(e, fmt.Errorf("read: --%s %d: give 0 or more bytes", f.name, f.v))
			}
		}
		l := sess.l
		res := l.ReadFile(fs.Arg(0), fs.Arg(1), opt)
		if cf.json {
			writeJSON(e.stdout, res)
		} else if res.Status == catalog.StatusOK {
			e.stdout.Write(res.Data)
		} else {
			fmt.Fprintf(e.stderr, "loadout: %s: %s\n", res.Status, res.Message)
		}
		if res.Status != catalog.StatusOK {
			return 1
		}
		return 0
	})
}
