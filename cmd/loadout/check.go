package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

func init() {
	commands["check"] = command{"report every problem with the configured skills (for CI)", runCheck}
}

func runCheck(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var failOn, minSev string
	var withSafety, quiet bool
	fs := newFlags(e, "check", "[--config F] [--root DIR]... [--json] [--fail-on error|warning] [--min-severity info|warning|error] [--quiet] [--safety=false] [FOLDER...]",
		"Loads every configured source and prints every diagnostic, the safety and quality checks'\n"+
			"included (hidden text, injection, dangerous scripts, secrets, broken links, descriptions\n"+
			"too alike; the config's \"safety\" policy decides their severity). Exits 1 when there is an\n"+
			"error (or, with --fail-on warning, a warning), so skill authors can run it in CI. A folder\n"+
			"that does not exist or holds no skill is an error (root-missing, root-empty): discovery\n"+
			"skips folders whose names start with '.', so name such a folder as a root to check it.\n"+
			"The safety findings of skills whose files did not change are kept between runs in\n"+
			"$LOADOUT_CACHE (default $XDG_CACHE_HOME/loadout or ~/.cache/loadout; off keeps none);\n"+
			"--json says how many were reused (safetyCache)."+fmt.Sprintf(folderArgsHelp, "check"))
	cf.register(fs, false)
	cf.missingRootIsDiag = true
	cf.typedMeta = true    // Raw and Metadata are never printed here
	cf.sharedMeta = true   // nor tags and versions
	cf.releaseFiles = true // nor file lists, once the checks have read them
	fs.BoolVar(&cf.json, "json", false, `print {"skills":N,"diagnostics":[…]} on stdout`)
	fs.StringVar(&failOn, "fail-on", "error", "lowest severity that fails the check: error or warning")
	fs.BoolVar(&withSafety, "safety", true, "run the safety and quality checks (reads every file of every skill)")
	fs.StringVar(&minSev, "min-severity", "info", "lowest severity printed: info, warning or error (the summary line counts the ones hidden)")
	fs.BoolVar(&quiet, "quiet", false, "print warnings and errors only (--min-severity warning)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	cf.folderArgs(fs)
	defer limitBatchMemory(e)()
	if failOn != "error" && failOn != "warning" {
		return fail(e, fmt.Errorf("--fail-on %q: use error or warning", failOn))
	}
	least := slices.Index(severities, skill.Severity(minSev))
	if least < 0 {
		return fail(e, fmt.Errorf("--min-severity %q: use info, warning or error", minSev))
	}
	if quiet {
		if minSev != "info" && minSev != "warning" {
			return fail(e, fmt.Errorf("--quiet is --min-severity warning: give one of them"))
		}
		least = slices.Index(severities, skill.Warning)
	}
	sess, err := cf.open(ctx, e, false)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	cat := sess.cat
	var diags []skill.Diagnostic
	var cache map[string]any // what the saved findings did, for --json
	if !withSafety {
		diags = cat.Diagnostics()
	} else {
		saved, file := loadSavedFindings(e)
		cat.UseSavedFindings(saved)
		// The same report as the server's /v1/diagnostics and UI, so the
		// counts agree. It is shared, not copied: the severities changed
		// below are changed in a copy, made only then (a copy of 50,000
		// findings was 7 MB more at the command's peak).
		diags = cat.Report(ctx, policyOf(sess.cfg)).Diagnostics
		if saved != nil {
			st := saved.Stats()
			cache = map[string]any{"file": file, "unchanged": st.Hits, "checked": st.Misses, "unstamped": st.Unstamped}
			if err := saved.Save(file); err != nil {
				fmt.Fprintf(e.stderr, "loadout: %s (set LOADOUT_CACHE=off to check without it)\n", termText(err.Error()))
			}
		}
	}
	// Every folder must exist and yield a skill: CI must not pass on
	// nothing (a repository whose skills are all under dot
	// folders checked as "0 skills", exit 0, and so did a config's root
	// that does not exist). serve only warns: a root may be made later.
	copied := !withSafety // Catalog.Diagnostics is a copy of its own
	for i, d := range diags {
		if d.Code == skill.CodeRootMissing && d.Severity != skill.Error {
			if !copied {
				diags, copied = slices.Clone(diags), true
			}
			diags[i].Severity = skill.Error
		}
	}
	diags = append(diags, emptyRoots(cat.Roots(), cat.RootSkills(), diags)...)
	skills := len(cat.Global().Names())
	if skills == 0 && !slices.ContainsFunc(diags, func(d skill.Diagnostic) bool { return d.Severity == skill.Error }) {
		// Only the store, plugins or remote sources, all empty (a store
		// not created yet among them): nothing was checked.
		diags = append(diags, skill.Diagnostic{Severity: skill.Error, Code: skill.CodeNoSkills, Message: "no source holds a skill: nothing was checked (import skills into the store, or name a folder of skills: loadout check DIR)"})
	}
	total := catalog.NewReport(diags).Total
	errs, warns := total.Errors, total.Warnings
	// Lines under --min-severity are not printed; the summary says how
	// many, so none is dropped unseen.
	shown := diags
	if least > 0 {
		shown = slices.DeleteFunc(slices.Clone(diags), func(d skill.Diagnostic) bool { return slices.Index(severities, d.Severity) < least })
	}
	hidden := len(diags) - len(shown)
	if cf.json {
		out := map[string]any{"skills": skills, "errors": errs, "warnings": warns, "diagnostics": diagsOrEmpty(shown)}
		if hidden > 0 {
			out["hidden"] = hidden
		}
		if cache != nil {
			out["safetyCache"] = cache
		}
		writeJSON(e.stdout, out)
	} else {
		printDiags(e.stdout, shown)
		summary := fmt.Sprintf("%s, %s, %s", plural(skills, "skill", "skills"), plural(errs, "error", "errors"), plural(warns, "warning", "warnings"))
		if hidden > 0 {
			summary += fmt.Sprintf(" (%s below %s not shown: --min-severity info shows them)", plural(hidden, "line", "lines"), severities[least])
		}
		fmt.Fprintln(e.stdout, summary)
	}
	if errs > 0 || failOn == "warning" && warns > 0 {
		return 1
	}
	return 0
}

// severities in rising order: a severity's index is its rank for
// --min-severity.
var severities = []skill.Severity{skill.Info, skill.Warning, skill.Error}

// savedFindingsFile is the file in the cache folder that keeps the
// safety checks' findings between runs of check (safety.Saved).
const savedFindingsFile = "safety-findings"

// cacheDir is the folder loadout keeps what it can make again in:
// LOADOUT_CACHE, or the user's cache folder ($XDG_CACHE_HOME or
// ~/.cache, then loadout). "" (LOADOUT_CACHE=off, or no home) is none.
func cacheDir(e *env) string {
	switch v := e.getenv("LOADOUT_CACHE"); {
	case v == "off":
		return ""
	case v != "":
		return v
	}
	if x := e.getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "loadout")
	}
	if h := e.getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "loadout")
	}
	return ""
}

// loadSavedFindings opens the findings check saved last time, or nil when
// there is no cache folder. A damaged file is said on stderr, once, and
// replaced.
func loadSavedFindings(e *env) (*safety.Saved, string) {
	dir := cacheDir(e)
	if dir == "" {
		return nil, ""
	}
	file := filepath.Join(dir, savedFindingsFile)
	s, err := safety.LoadSaved(file)
	if err != nil {
		fmt.Fprintf(e.stderr, "loadout: %s\n", termText(err.Error()))
	}
	return s, file
}

// BatchMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// of the one-shot catalog commands, check and list, unless GOMEMLIMIT is
// set (GOMEMLIMIT=off removes it). These commands hold every skill until
// they end, and discovery makes several times that in short-lived
// garbage; without a limit the heap grows to twice what is live before
// the collector runs. Below about 30,000 skills it never binds.
//
// It was 128 MiB while these commands kept 79 MB live at 50,000 skills,
// then 96 MiB at 70 MB live. With a shared Origin, the name held in the
// location, one name map per loadout, parsing that reuses its nodes and
// copies the frontmatter's text once, and safety checks that reuse their
// read buffers and keep findings only for the skills that have some, they
// keep 56-60 MiB live and allocate a third less, and 76 MiB costs no more
// CPU than 96 MiB did before. Measured at 50,000 skills on 2 cores, three
// interleaved rounds, peak RSS and CPU (user+sys), against the binary
// before these changes at 96 MiB:
//
//	command               before, 96 MiB           now, 76 MiB
//	check --safety=false  114.1-114.4 MB  2.7s     94.0-94.9 MB  2.7-2.8s
//	list                  114.2-114.7 MB  2.8-2.9s 93.9-94.3 MB  2.8-2.9s
//	list --json           114.1-114.7 MB  3.0s     94.1-94.5 MB  3.0s
//	check (safety)        114.9-115.8 MB  8.7-8.8s 94.0-94.5 MB  8.7-8.9s
//
// Lower limits only made the collector run back to back: at 72 and 68
// MiB the peak did not fall (the live heap and the collector's own
// memory were over 60 MiB, and the binary's pages 19-21 MB more). With
// the frontmatter shared (source.Options.SharedMeta), the findings held
// once and prompt's render measuring only what it reads, the live heap
// at the peak is 54-58 MiB without findings and 61-65 with one a skill
// (prompt, check), and 76 MiB let the heap grow to the limit: the peak
// was the limit plus the binary's pages, 97-101 MB. At 72 MiB
// (bench/cli50k.sh, medians of three, docs/cli-memory.md) prompt is
// 99.1 / 96.6 MB (findings / none), check 99.9 / 92.9, at the same CPU
// within the runs' spread. The limit is soft: a larger catalog still
// loads, the collector running more often (at most half the CPU, Go's
// own bound); GOMEMLIMIT=off, or a higher GOMEMLIMIT, trades the memory
// back for the CPU.
const BatchMemoryLimit = 72 << 20

// limitBatchMemory sets BatchMemoryLimit unless GOMEMLIMIT is set, and
// returns what puts back the limit before (commands also run in tests).
func limitBatchMemory(e *env) func() {
	if e.getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(BatchMemoryLimit)
	return func() { debug.SetMemoryLimit(prev) }
}
