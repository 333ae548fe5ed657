package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

func init() {
	commands["prompt"] = command{"print an agent's system-prompt section", runPrompt}
}

func runPrompt(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var format string
	var budget, budgetTokens int
	var verbose bool
	fs := newFlags(e, "prompt", "[--config F --agent ID | --root DIR... | FOLDER...] [--format pi|catalog|progressive] [--budget N] [--budget-tokens N]",
		"Prints the agent's skills section for its system prompt on stdout; diagnostics go to stderr,\neach naming up to 20 of the skills the budget shortened or left out and counting the rest;\n--verbose prints every skill with what the budget left of it. An agent with no skills prints\nnothing on stdout, says why on stderr and exits 2."+fmt.Sprintf(folderArgsHelp, "prompt"))
	cf.register(fs, true)
	// The listing reads names, descriptions and categories only (render),
	// like list: at 50,000 skills the untyped frontmatter kept and no
	// memory limit made a peak of 290-300 MB to print 8,000 characters.
	cf.typedMeta = true
	// Nor does it read a file of a skill: no manifests (9 MB at 50,000).
	cf.noFiles = true
	// Of the frontmatter it reads the category and whether the skill is
	// hidden: one value shared by the skills alike (10 MB at 50,000).
	cf.sharedMeta = true
	fs.StringVar(&format, "format", "", "prompt format: pi (default), catalog or progressive")
	fs.IntVar(&budget, "budget", 0, "listing budget in characters (default: the agent's, else 8000; -1: no limit)")
	fs.IntVar(&budgetTokens, "budget-tokens", 0, "a second limit in tokens, counted as characters ÷ 4 rounded up; the smaller wins (default: the agent's budgetTokens)")
	fs.BoolVar(&verbose, "verbose", false, "say where every skill in the prompt came from (default: a count)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	cf.folderArgs(fs)
	defer limitBatchMemory(e)()
	switch format {
	case "", "pi", "catalog", "progressive":
	default:
		return fail(e, fmt.Errorf("--format %q: use pi, catalog or progressive", format))
	}
	if budget < -1 {
		return fail(e, fmt.Errorf("--budget %d: give a number of characters, or -1 for no limit", budget))
	}
	if budgetTokens < 0 {
		return fail(e, fmt.Errorf("--budget-tokens %d: give a number of tokens (about 4 characters each)", budgetTokens))
	}
	sess, err := cf.open(ctx, e, true)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	l := sess.l
	if len(l.Entries()) == 0 {
		// An empty prompt is never what was meant (a repository
		// whose skills are under dot folders printed nothing, exit 0):
		// say why on stderr, naming the dot folders discovery skipped.
		var roots []string
		for _, s := range l.Spec.Skills {
			if s.Root != "" {
				roots = append(roots, s.Root)
			}
		}
		diags := sess.diagnostics()
		printDiags(e.stderr, append(diags, emptyRoots(roots, sess.cat.RootSkills(), diags)...))
		return fail(e, fmt.Errorf("agent %s has no skills: the prompt would be empty", l.Spec.AgentID))
	}
	usage, err := promptUsage(ctx, sess)
	if err != nil {
		// The listing is still printed, ranked by name alone after the pins.
		fmt.Fprintf(e.stderr, "warning: %v; the listing is ranked without usage\n", err)
	}
	// NoBasis: a plan kept for the next render is of no use to a command
	// that renders once (5 MB at 50,000 skills).
	text, rep, diags := l.Prompt(catalog.PromptOptions{Format: format, Budget: budget, BudgetTokens: budgetTokens, Usage: usage, NoBasis: true})
	if budgetTokens > 0 && rep.TooSmall {
		return fail(e, fmt.Errorf("--budget-tokens %d is too small for this listing: the format's fixed text and the line saying how to find skills take %d characters (%d tokens); give at least %d", budgetTokens, rep.MinBudget, (rep.MinBudget+3)/4, (rep.MinBudget+3)/4))
	}
	if budget > 0 && rep.TooSmall {
		return fail(e, fmt.Errorf("--budget %d is too small for this listing: the format's fixed text and the line saying how to find skills take %d characters; give at least %d", budget, rep.MinBudget, rep.MinBudget))
	}
	fmt.Fprint(e.stdout, text)
	if text != "" && text[len(text)-1] != '\n' {
		fmt.Fprintln(e.stdout)
	}
	sess.printDiagnostics(e.stderr)
	printDiags(e.stderr, diags)
	// Where each skill in the prompt came from, so nothing is a mystery:
	// one line each with --verbose, else a count that does not drown the
	// diagnostics above it at a thousand skills.
	counts := map[string]int{}
	var modes []string
	tier := tierWalk(rep, len(l.Names()) == len(l.Entries()))
	// The domains by name are read with --verbose only: at 50,000 skills
	// the map is a few MB more at the end of the command.
	var domain map[string]string
	if verbose {
		domain = map[string]string{}
		for _, g := range rep.Groups {
			for _, name := range g.Skills {
				domain[name] = g.Label
			}
		}
	}
	// The entries one by one, not listRows: a row of every skill (its
	// origin by value, its files, its tags) was 15 MB more at 50,000
	// skills for a name and a mode.
	for _, en := range l.Entries() {
		mode := entryMode(en)
		if mode == "hidden" {
			continue
		}
		if mode == "listed" {
			// What the budget left of the skill: its tier in the report.
			switch tier(en.Skill.Name) {
			case render.TierShortened:
				mode = "listed, description shortened"
			case render.TierName:
				mode = "listed by name only"
			case render.TierGrouped:
				mode = "counted in a domain (not named)"
				if d := domain[en.Skill.Name]; d != "" && verbose {
					mode = "counted in domain " + d + " (not named)"
				}
			case render.TierOmitted:
				mode = "omitted by budget"
			}
		}
		if verbose {
			fmt.Fprintf(e.stderr, "skill %s: %s, from %s\n", en.Skill.Name, mode, sourceText(en.Skill.OriginValue()))
		}
		if counts[mode] == 0 {
			modes = append(modes, mode)
		}
		counts[mode]++
	}
	if !verbose && len(modes) > 0 {
		parts := make([]string, len(modes))
		for i, m := range modes {
			parts[i] = fmt.Sprintf("%d %s", counts[m], m)
		}
		fmt.Fprintf(e.stderr, "skills: %s (--verbose says where each came from)\n", strings.Join(parts, ", "))
	}
	return 0
}

// tierWalk returns rep.TierMap()[name] for each listed skill, called in
// the order of the listing: the report's Names are in that order unless
// the format sorts them, so when the names are unique (a name selected
// from two sources is listed twice, and the map holds the last one's
// tier) it walks them, and makes the map only when a name is not the
// next one (a map of 50,000 names was 4 MB).
func tierWalk(rep render.Report, unique bool) func(name string) render.Tier {
	next := 0
	var byName map[string]render.Tier
	if !unique {
		byName = rep.TierMap()
	}
	return func(name string) render.Tier {
		if byName == nil && next < len(rep.Names) && rep.Names[next] == name {
			next++
			return rep.Tiers[next-1]
		}
		if byName == nil {
			byName = rep.TierMap()
		}
		return byName[name]
	}
}

// listingOf is the config's listing settings as service options.
func listingOf(f *config.File) service.ListingOptions {
	return service.ListingOptions{UsageDays: f.Listing.Days(), Refresh: f.Listing.Every(), Replan: f.Listing.ReplanEvery()}
}

// promptUsage reads the agent's activation counts once, the way the
// server's snapshot does (service.RefreshUsage), so that `loadout prompt`
// prints what the server serves. Without a store there are none.
func promptUsage(ctx context.Context, sess *session) (map[string]int, error) {
	srv, ok := sess.store.(store.Server)
	if !ok || sess.store == nil {
		return nil, nil
	}
	days := service.DefaultUsageDays
	if sess.cfg != nil {
		days = sess.cfg.Listing.Days()
	}
	rows, err := srv.Usage(ctx, store.UsageQuery{Since: time.Now().UTC().AddDate(0, 0, -(days - 1)), Limit: service.MaxUsageRows})
	if err != nil {
		return nil, fmt.Errorf("reading the usage counts that rank the listing: %w", err)
	}
	return service.UsageOf(rows, sess.l.Spec.AgentID), nil
}
