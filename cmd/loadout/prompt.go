package main

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/catalog"
)

func init() {
	commands["prompt"] = command{"print an agent's system-prompt section", runPrompt}
}

func runPrompt(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var format string
	var budget int
	fs := newFlags(e, "prompt", "[--config F --agent ID | --root DIR... | FOLDER...] [--format pi|catalog|progressive] [--budget N]",
		"Prints the agent's skills section for its system prompt on stdout; diagnostics, including\nexactly which skills the budget shortened or left out, go to stderr."+fmt.Sprintf(folderArgsHelp, "prompt"))
	cf.register(fs, true)
	fs.StringVar(&format, "format", "", "prompt format: pi (default), catalog or progressive")
	fs.IntVar(&budget, "budget", 0, "listing budget in characters (default: the agent's, else 8000; -1: no limit)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	cf.folderArgs(fs)
	switch format {
	case "", "pi", "catalog", "progressive":
	default:
		return fail(e, fmt.Errorf("--format %q: use pi, catalog or progressive", format))
	}
	sess, err := cf.open(ctx, e, true)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	l := sess.l
	text, rep, diags := l.Prompt(catalog.PromptOptions{Format: format, Budget: budget})
	fmt.Fprint(e.stdout, text)
	if text != "" && text[len(text)-1] != '\n' {
		fmt.Fprintln(e.stdout)
	}
	printDiags(e.stderr, append(sess.diagnostics(), diags...))
	// Where each skill in the prompt came from, so nothing is a mystery.
	omitted := map[string]bool{}
	for _, n := range rep.Omitted {
		omitted[n] = true
	}
	for _, r := range listRows(l) {
		if r.Mode == "hidden" {
			continue
		}
		mode := r.Mode
		if omitted[r.Name] && mode == "listed" {
			mode = "omitted by budget"
		}
		fmt.Fprintf(e.stderr, "skill %s: %s, from %s\n", r.Name, mode, sourceText(r.Source))
	}
	return 0
}
