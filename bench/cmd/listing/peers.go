package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// peerListing is what one peer puts before the model for a catalog.
type peerListing struct {
	text  string // the skills part of the prompt, as the model reads it
	chars int    // what the peer counts against its budget, by its own rule
	note  string // what the peer tells the user (never the model), if anything
}

// ---------------------------------------------------------------------------
// Claude Code, from its documentation: https://code.claude.com/docs/en/skills
// (the skill listing budget, and "Claude doesn't see all my skills" under
// troubleshooting). The documented rule:
//
//   - the listing is budgeted at 1% of the context window (about 8,000
//     characters; setting skillListingBudgetFraction, default 0.01);
//   - each entry's description is capped at 1,536 characters
//     (maxSkillDescriptionChars) before the budget is applied;
//   - every skill's name is always listed, whatever the budget;
//   - when the listing is over the budget, descriptions are dropped whole,
//     the least-used skills' first, until it fits ("full descriptions kept
//     for most-used skills", in the session-start notice).
//
// The page was not among the stored copies searched; pages quoting it
// agree: names "always included, no exceptions", least-used descriptions
// dropped first (https://claude-with-skills.vercel.app/03-advanced/lesson-06-context-window-mastery),
// 1,536 characters an entry, 1% of the window or 8,000 characters
// (https://claudecodeguides.com/claude-skills-performance-optimization/),
// and the settings' names and defaults, read from the 2.1.129 binary
// (https://claudefa.st/blog/guide/mechanics/skill-listing-budget).
// Not documented, so chosen here: one "- name: description" line per skill
// in name order, a description cut at the cap with no marker, and among
// skills of equal use the later name loses its description first.

// claudeDescMax is Claude Code's per-entry cap (maxSkillDescriptionChars).
const claudeDescMax = 1536

// claude is Claude Code's documented listing. Its chars are the listing's,
// over the budget when the names alone are: Claude Code keeps every name.
func claude(c *cat, budget int) peerListing {
	desc := make(map[string]string, len(c.entries))
	cost := make(map[string]int, len(c.entries))
	total := 0
	for _, e := range c.entries {
		d := e.Description
		if utf8.RuneCountInString(d) > claudeDescMax {
			d = string([]rune(d)[:claudeDescMax])
		}
		desc[e.Name] = d
		cost[e.Name] = 2 + utf8.RuneCountInString(d) // ": " + description
		total += 3 + utf8.RuneCountInString(e.Name) + cost[e.Name]
	}
	// Drop whole descriptions, least used first, until the listing fits.
	dropped := map[string]bool{}
	for i := len(c.ranked) - 1; i >= 0 && total > budget; i-- {
		name := c.ranked[i]
		dropped[name] = true
		total -= cost[name]
	}
	var b strings.Builder
	for _, e := range c.entries {
		b.WriteString("- " + e.Name)
		if !dropped[e.Name] {
			b.WriteString(": " + desc[e.Name])
		}
		b.WriteByte('\n')
	}
	text := b.String()
	l := peerListing{text: text, chars: utf8.RuneCountInString(text)}
	if len(dropped) > 0 {
		l.note = fmt.Sprintf("%d descriptions dropped, least used first; every name kept", len(dropped))
		if l.chars > budget {
			l.note += fmt.Sprintf(", %d characters over the budget", l.chars-budget)
		}
	}
	return l
}

// ---------------------------------------------------------------------------
// Codex, from its source: openai/codex at commit
// 0899b7c42bf11847f78710966b362f756337c17d, codex-rs/core-skills/src/render.rs
// (cited "render.rs:LINE") and codex-rs/core-skills/src/loader.rs at
// 033d1d0741d697436d4d5527aaac8893c28b424c ("loader.rs:LINE"). What it does,
// written here afresh:
//
//   - Loading (loader.rs): a description is folded to one line (runs of
//     white space become one space, fn sanitize_single_line); a skill whose
//     name is over 64 characters or whose description is empty or over
//     1,024 (loader.rs:112-113, fn validate_len) is not loaded at all: it is
//     a load error, never listed. $HOME/.agents/skills is a user-scope root
//     (fn skill_roots_from_layer_stack_inner), so every skill of these
//     catalogs has the same scope.
//   - Budget (render.rs:17-18, fn default_skill_metadata_budget): 2% of the
//     context window in tokens (bytes/4) when the window is known, else
//     8,000 characters. The bench gives Codex B characters, as the others.
//     The budget counts only the skill lines (each with its newline), not
//     the section's intro and rules.
//   - Order (render.rs:884-902, fn ordered_skills_for_budget and
//     prompt_scope_rank): by scope (system, admin, repo, user), then name,
//     then path. Usage plays no part.
//   - Lines (render.rs:522-538): "- NAME: DESCRIPTION (file: PATH)"; with no
//     description "- NAME: (file: PATH)".
//   - Fit (render.rs:324-379, fn render_skill_lines_from_lines): if every
//     full line fits, all are listed whole. Else, if every bare line fits,
//     every skill is listed and what is left is shared among the
//     descriptions one character at a time, round robin in listing order
//     (render.rs:583-636, fn render_lines_with_description_budget): a
//     description's first character costs two (the space before "(file:"),
//     each further one costs one; a short description drops out when whole
//     and its share goes on to the others; one too long for what is left is
//     skipped while later ones still take single characters. Else no
//     description is shown at all: bare lines in order while they fit, a
//     line that does not fit is skipped and later, shorter ones still go in
//     (render.rs:381-417, fn render_minimum_skill_lines_until_budget).
//   - Aliases (render.rs:160-200, fn build_available_skills; 638-659, 673-736,
//     796-805, 837-866): when the absolute listing leaves a skill out or cuts
//     a description, Codex also renders it with each skill root replaced by
//     an alias: a "### Skill roots" table of "- `r0` = `ROOT`" lines, and
//     paths "r0/REL/SKILL.md". The table, and the longer intro and rules the
//     aliases need, are charged to the budget (fn
//     aliased_metadata_overhead_cost): codexAliasFixed plus each root line
//     and its newline. The aliased listing is kept when it lists more
//     skills, else as many with fewer description characters cut, else as
//     many and as cut at a lower cost (fn aliased_render_is_better).
//   - Warnings (render.rs:21-24, 213-243, 279-288): to the user, not the
//     model. Any skill left out: "Exceeded skills context budget. All skill
//     descriptions were removed and N additional skills were not included in
//     the model-visible skills list." Else, when the description characters
//     cut average over 100 per skill (rounded up): a notice that
//     descriptions were shortened. The model is never told that skills
//     are missing.
//   - Discovery (loader.rs:124, fn discover_skills_under_root) visits at most
//     2,000 folders per root, so past about 2,000 skills in one root Codex
//     does not even load the rest. Not modelled: which ones it sees depends
//     on the order the file system lists them. Every strategy here gets the
//     whole catalog.

const (
	codexNameMax = 64   // loader.rs:112 MAX_NAME_LEN
	codexDescMax = 1024 // loader.rs:113 MAX_DESCRIPTION_LEN
	codexWarnAvg = 100  // render.rs:19 SKILL_DESCRIPTION_TRUNCATION_WARNING_THRESHOLD_CHARS
	// codexDirsPerRoot is discovery's bound (loader.rs:124
	// MAX_SKILLS_DIRS_PER_ROOT), not modelled: the bench only says so.
	codexDirsPerRoot = 2000
	// codexAliasFixed is what the aliased section's text costs beyond the
	// absolute one's, before the root lines (render.rs:25-83, the
	// *_WITH_ALIASES intro and rules against the *_WITH_ABSOLUTE_PATHS
	// ones): the intro is 3 characters shorter; the rules 160 longer (59 in
	// "Discovery", 84 in step 1, 17 in step 2); "### Skill roots" and its
	// newline 16.
	codexAliasFixed = -3 + 160 + 16
)

// codexLine is one skill as Codex renders it.
type codexLine struct{ name, desc, path string }

// codexFit is the result of fitting lines to a limit (render.rs's
// SkillRenderReport, plus the lines and their cost).
type codexFit struct {
	lines                       []string
	cost                        int // the lines and their newlines
	included, omitted, truncDsc int // truncDsc: description characters not shown
}

func (l codexLine) render(descChars int) string {
	if descChars == 0 {
		return "- " + l.name + ": (file: " + l.path + ")"
	}
	return "- " + l.name + ": " + string([]rune(l.desc)[:descChars]) + " (file: " + l.path + ")"
}

// codexFitLines is render.rs's render_skill_lines_from_lines with a
// character budget.
func codexFitLines(lines []codexLine, limit int) codexFit {
	var f codexFit
	descLen := make([]int, len(lines))
	full, bare := 0, 0
	for i, l := range lines {
		descLen[i] = utf8.RuneCountInString(l.desc)
		b := utf8.RuneCountInString(l.render(0)) + 1
		bare += b
		full += b
		if descLen[i] > 0 {
			full += descLen[i] + 1
		}
	}
	switch {
	case full <= limit:
		for i, l := range lines {
			f.lines = append(f.lines, l.render(descLen[i]))
		}
		f.cost, f.included = full, len(lines)
	case bare <= limit:
		got := make([]int, len(lines))
		left := limit - bare
		for changed := true; changed; {
			changed = false
			for i := range lines {
				if got[i] >= descLen[i] {
					continue
				}
				step := 1
				if got[i] == 0 {
					step = 2
				}
				if step <= left {
					got[i]++
					left -= step
					changed = true
				}
			}
		}
		for i, l := range lines {
			f.lines = append(f.lines, l.render(got[i]))
			f.truncDsc += descLen[i] - got[i]
		}
		f.cost, f.included = limit-left, len(lines)
	default:
		for i, l := range lines {
			c := utf8.RuneCountInString(l.render(0)) + 1
			if f.cost+c <= limit {
				f.cost += c
				f.lines = append(f.lines, l.render(0))
				f.included++
			} else {
				f.omitted++
			}
			f.truncDsc += descLen[i]
		}
	}
	return f
}

// codex is Codex's listing of the catalog. Its chars are the skill lines
// plus, when the aliased listing is chosen, what the alias table costs:
// what Codex charges to its budget.
func codex(c *cat, budget int) peerListing {
	var lines, aliased []codexLine
	failed := 0
	for _, e := range c.entries {
		d := oneLine(e.Description)
		if n := utf8.RuneCountInString(d); n == 0 || n > codexDescMax || utf8.RuneCountInString(e.Name) > codexNameMax {
			failed++
			continue
		}
		lines = append(lines, codexLine{e.Name, d, e.Location})
		aliased = append(aliased, codexLine{e.Name, d, "r0/" + strings.TrimPrefix(e.Location, root+"/")})
	}
	// Scope is the same for all (one user root): name, then path.
	byName := func(a, b codexLine) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.path, b.path))
	}
	slices.SortFunc(lines, byName)
	slices.SortFunc(aliased, byName)

	fit := codexFitLines(lines, budget)
	var table []string
	if fit.omitted > 0 || fit.truncDsc > 0 {
		rootLine := "- `r0` = `" + root + "`"
		tableCost := codexAliasFixed + utf8.RuneCountInString(rootLine) + 1
		if tableCost < budget {
			al := codexFitLines(aliased, budget-tableCost)
			better := al.included > fit.included ||
				al.included == fit.included && (al.truncDsc < fit.truncDsc ||
					al.truncDsc == fit.truncDsc && al.cost+tableCost < fit.cost)
			if better {
				al.cost += tableCost
				fit, table = al, []string{"### Skill roots", rootLine}
			}
		}
	}
	text := strings.Join(append(table, fit.lines...), "\n") + "\n"
	l := peerListing{text: text, chars: fit.cost}
	total := len(lines)
	switch {
	case fit.omitted > 0:
		word, verb := "skills", "were"
		if fit.omitted == 1 {
			word, verb = "skill", "was"
		}
		l.note = fmt.Sprintf("Exceeded skills context budget. All skill descriptions were removed and %d additional %s %s not included in the model-visible skills list.", fit.omitted, word, verb)
	case total > 0 && (fit.truncDsc+total-1)/total > codexWarnAvg:
		l.note = "Skill descriptions were shortened to fit the skills context budget (notice to the user)."
	}
	if table != nil {
		l.note = strings.TrimSpace(l.note + " [paths aliased: r0/…]")
	}
	if failed > 0 {
		word := "skills"
		if failed == 1 {
			word = "skill"
		}
		l.note = strings.TrimSpace(l.note + fmt.Sprintf(" [%d %s not loaded: description empty or over %d characters, or name over %d]", failed, word, codexDescMax, codexNameMax))
	}
	return l
}
