package main

import (
	"context"
	"fmt"
	"runtime/debug"

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
	defer limitBatchMemory(e)()
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

// BatchMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// of the one-shot catalog commands, check and list, unless GOMEMLIMIT is
// set (GOMEMLIMIT=off removes it). These commands hold every skill until
// they end, and discovery makes several times that in short-lived
// garbage; without a limit the heap grows to twice what is live before
// the collector runs. Below about 30,000 skills it never binds.
//
// It was 128 MiB while these commands kept 79 MB live (92 MB of heap
// spans in use) at 50,000 skills; they now keep 70 MB in 73 MB of spans
// (skill.Batch, the global loadout shared with the --root agent, a
// smaller Skill), so a lower limit costs no more CPU than 128 MiB did.
// Measured at 50,000 skills on 2 busy cores, interleaved with the old
// binary at 128 MiB (147 MB peak for all four commands), peak RSS and
// CPU (user+sys):
//
//	command               old, 128 MiB     96 MiB           88 MiB
//	check --safety=false  147 MB 3.2-4.9s  114 MB 3.0-3.8s  106 MB 3.3-3.9s
//	list                  147 MB 3.5-4.0s  115 MB 3.4-3.8s  107 MB 3.7-4.2s
//	list --json           147 MB 3.9-4.2s  115 MB 3.5-4.0s  107 MB 3.8-4.3s
//	check (safety)        147 MB 13-20s    115 MB 11-13s    113-116 MB 16-17s
//
// 96 MiB is the lowest that costs no CPU anywhere; 88 MiB takes 8 MB more
// off the peak but makes check with its safety checks (which read every
// file) collect back to back. The peak is still above 100 MB: about 22 MB
// is the binary's own (code pages and runtime: bench/growth.sh's "empty
// root" line), and the collector needs room over the 70 MB live. It is
// soft: a larger catalog still loads, the collector running more often
// (at most half the CPU, Go's own bound); GOMEMLIMIT=off trades the
// memory back for the CPU.
const BatchMemoryLimit = 96 << 20

// limitBatchMemory sets BatchMemoryLimit unless GOMEMLIMIT is set, and
// returns what puts back the limit before (commands also run in tests).
func limitBatchMemory(e *env) func() {
	if e.getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(BatchMemoryLimit)
	return func() { debug.SetMemoryLimit(prev) }
}
