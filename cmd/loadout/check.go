package main

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
)

func init() {
	commands["check"] = command{"report every problem with the configured skills (for CI)", runCheck}
}

func runCheck(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var failOn string
	var withSafety bool
	fs := newFlags(e, "check", "[--config F] [--root DIR]... [--json] [--fail-on error|warning] [--safety=false] [FOLDER...]",
		"Loads every configured source and prints every diagnostic, the safety and quality checks'\n"+
			"included (hidden text, injection, dangerous scripts, secrets, broken links, descriptions\n"+
			"too alike; the config's \"safety\" policy decides their severity). Exits 1 when there is an\n"+
			"error (or, with --fail-on warning, a warning), so skill authors can run it in CI."+fmt.Sprintf(folderArgsHelp, "check"))
	cf.register(fs, false)
	cf.missingRootIsDiag = true
	cf.typedMeta = true // Raw and Metadata are never printed here
	fs.BoolVar(&cf.json, "json", false, `print {"skills":N,"diagnostics":[…]} on stdout`)
	fs.StringVar(&failOn, "fail-on", "error", "lowest severity that fails the check: error or warning")
	fs.BoolVar(&withSafety, "safety", true, "run the safety and quality checks (reads every file of every skill)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	cf.folderArgs(fs)
	if failOn != "error" && failOn != "warning" {
		return fail(e, fmt.Errorf("--fail-on %q: use error or warning", failOn))
	}
	sess, err := cf.open(ctx, e, false)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	cat := sess.cat
	diags := cat.Diagnostics()
	if withSafety {
		diags = append(diags, cat.Safety(ctx, policyOf(sess.cfg))...)
	}
	// A folder named on the command line must exist.
	for i, d := range diags {
		if d.Code == skill.CodeRootMissing && len(cf.roots) > 0 {
			diags[i].Severity = skill.Error
		}
	}
	skills := len(cat.Global().Names())
	errs, warns := 0, 0
	for _, d := range diags {
		switch d.Severity {
		case skill.Error:
			errs++
		case skill.Warning:
			warns++
		}
	}
	if cf.json {
		writeJSON(e.stdout, map[string]any{"skills": skills, "errors": errs, "warnings": warns, "diagnostics": diagsOrEmpty(diags)})
	} else {
		printDiags(e.stdout, diags)
		fmt.Fprintf(e.stdout, "%s, %s, %s\n", plural(skills, "skill", "skills"), plural(errs, "error", "errors"), plural(warns, "warning", "warnings"))
	}
	if errs > 0 || failOn == "warning" && warns > 0 {
		return 1
	}
	return 0
}

var _ = catalog.GlobalID
