package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// PromptOptions override the agent's own format and budget.
type PromptOptions struct {
	Format string
	// Budget in characters; 0 keeps the agent's (or the default).
	Budget int
	// BudgetTokens in tokens; 0 keeps the agent's (spec.BudgetTokens), a
	// negative value drops it.
	BudgetTokens int
	// Usage counts the agent's activations per skill name over the usage
	// window (the service keeps a snapshot, recomputed on a schedule, so
	// that it does not change from request to request). It decides which
	// skills keep their descriptions after the pinned ones; nil ranks by
	// name alone.
	Usage map[string]int
	// Preface is text the caller puts before the listing, counted in the
	// budget (render.Options.Preface).
	Preface string
	// Basis is the Report.Basis of an earlier render of this agent with
	// the same options, to keep that listing's text (render.Basis).
	Basis *render.Basis
	// NoBasis: the caller keeps no Report.Basis (render.Options.NoBasis).
	NoBasis bool
}

// Priority is the order in which the listed skills keep their descriptions
// when the listing does not fit its budget: the skills matching the
// agent's pin patterns (by name), then the others that were used, most
// used first, then by name. Skills neither pinned nor used are left out:
// render puts the skills Priority does not name after it, by name, so
// the list (and its sort) is only as long as what is pinned or used. It
// is what Prompt passes as render.Options.Priority; it never changes the
// order of the listing.
func (l *Loadout) Priority(usage map[string]int) []string {
	pinned, used := l.ranking(usage)
	return append(pinned, used...)
}

// Pinned names the listed skills matching the agent's pin patterns, by
// name: render.Options.Pinned, the skills described whole whenever their
// descriptions fit the budget.
func (l *Loadout) Pinned() []string {
	pinned, _ := l.ranking(nil)
	return pinned
}

// ranking is Priority in two parts: the pinned skills by name, and the
// other used ones, most used first.
func (l *Loadout) ranking(usage map[string]int) (pinned, byUse []string) {
	type ranked struct {
		name string
		uses int
	}
	var used []ranked
	for _, e := range l.entries {
		if e.Inline || !e.Listed || e.Skill.Hidden() {
			continue
		}
		switch name := e.Skill.Name; {
		case len(l.Spec.Pin) > 0 && matchAny(l.Spec.Pin, name):
			pinned = append(pinned, name)
		case usage[name] > 0:
			used = append(used, ranked{name, usage[name]})
		}
	}
	slices.Sort(pinned)
	slices.SortFunc(used, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.uses, a.uses), strings.Compare(a.name, b.name))
	})
	for _, r := range used {
		byUse = append(byUse, r.name)
	}
	return pinned, byUse
}

// Prompt renders the agent's system-prompt section. It reads no files:
// listed skills need only metadata, and inline bodies were read when the
// catalog was built. The diagnostics say exactly which skills the budget
// shortened or left out.
func (l *Loadout) Prompt(opt PromptOptions) (string, render.Report, []skill.Diagnostic) {
	pinned, used := l.ranking(opt.Usage)
	ro := render.Options{Format: l.Spec.Format, Budget: l.Spec.Budget, BudgetTokens: l.Spec.BudgetTokens,
		Priority: used, Pinned: pinned, Preface: opt.Preface, Stable: true, Basis: opt.Basis, NoBasis: opt.NoBasis}
	if opt.Format != "" {
		ro.Format = opt.Format
	}
	if opt.Budget != 0 {
		ro.Budget = opt.Budget
	}
	if opt.BudgetTokens != 0 {
		ro.BudgetTokens = max(opt.BudgetTokens, 0)
	}
	// The domains first, from the skills: the listing (11 MB at 50,000
	// skills) is not held while they are computed (16 MB).
	ro.Domains = l.domains()
	var inline []render.Entry
	listing := make([]render.Entry, 0, len(l.entries)) // no regrowth: 50,000 entries are 12 MB
	for _, e := range l.entries {
		re := render.NewEntry(e.Skill, "")
		switch {
		case e.Inline:
			re.Body = e.inlineBody()
			inline = append(inline, re)
		case e.isListed():
			listing = append(listing, re)
		}
	}
	text, rep := render.Prompt(listing, inline, ro)
	var diags []skill.Diagnostic
	if len(rep.Shortened) > 0 {
		diags = append(diags, skill.Diagnostic{Severity: skill.Info, Code: CodeBudgetShortened, Agent: l.Spec.AgentID,
			Message: fmt.Sprintf("the listing was over the budget of %d characters; the descriptions of %s shortened: %s",
				rep.Budget, count(len(rep.Shortened), "skill was", "skills were"), someNames(rep.Shortened))})
	}
	if len(rep.NameOnly) > 0 {
		diags = append(diags, skill.Diagnostic{Severity: skill.Info, Code: CodeBudgetNameOnly, Agent: l.Spec.AgentID,
			Message: fmt.Sprintf("the listing was over the budget of %d characters; %s listed by name only, without a description: %s; pin the ones the model must see described, or raise the budget",
				rep.Budget, count(len(rep.NameOnly), "skill is", "skills are"), someNames(rep.NameOnly))})
	}
	if rep.TooSmall {
		diags = append(diags, skill.Diagnostic{Severity: skill.Error, Code: CodeBudgetTooSmall, Agent: l.Spec.AgentID, Field: "budget",
			Message: fmt.Sprintf("the budget of %d characters cannot hold the %s format's fixed text and the line that says how to find the %d skills it leaves out (%d characters); no skill was listed and the prompt is over the budget: raise the budget to at least %d",
				rep.Budget, rep.Format, len(rep.Omitted), rep.MinBudget, rep.MinBudget)})
	}
	if len(rep.Omitted) > 0 {
		diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeBudgetOmitted, Agent: l.Spec.AgentID,
			Message: fmt.Sprintf("%s not fit the budget of %d characters even by name: the listing counts them in groups (or in one line) and says to find them with search_skills; they can still be loaded by name: %s; raise the agent's budget or narrow its available patterns",
				count(len(rep.Omitted), "skill did", "skills did"), rep.Budget, someNames(rep.Omitted))})
	}
	return text, rep, diags
}

// domainsFrom is the listing size from which a loadout keeps its
// listing's domains: smaller listings are grouped rarely and their
// domains cost little to compute in the render.
const domainsFrom = 100

// isListed reports whether the entry is in the prompt's listing: listed,
// not inline and not hidden.
func (e *Entry) isListed() bool { return !e.Inline && e.Listed && !e.Skill.Hidden() }

// domains are the domains of the loadout's listing (render.NewDomains),
// computed on first use and kept with the immutable loadout: at 10,000
// skills they take longer than the render itself.
func (l *Loadout) domains() *render.Domains {
	n := 0
	for _, e := range l.entries {
		if e.isListed() {
			n++
		}
	}
	if n < domainsFrom {
		return nil
	}
	l.domOnce.Do(func() {
		listed := make([]*skill.Skill, 0, n)
		for _, e := range l.entries {
			if e.isListed() {
				listed = append(listed, e.Skill)
			}
		}
		// The text render.NewEntry puts in the listing's entries.
		l.dom = render.NewDomainsOf(n, func(i int) (string, string, string) {
			s, cat := listed[i], ""
			if s.Meta != nil {
				cat = s.Meta.Category
			}
			return s.Name, s.Description, cat
		})
	})
	return l.dom
}

// MaxNamesInDiagnostic is how many skills a budget diagnostic names; it
// counts the rest. At 50,000 skills an 8,000-character budget leaves out
// nearly all of them, and one message naming each was a megabyte (on
// every prompt's stderr, in every diagnostics answer). Every name and its
// tier stays in the prompt's report (render.Report: Shortened, NameOnly,
// Omitted, Tiers), which the HTTP prompt route returns and `loadout prompt
// --verbose` prints one line a skill.
const MaxNamesInDiagnostic = 20

// someNames is names joined with commas, at most MaxNamesInDiagnostic of
// them, then how many more there are and where they all are.
func someNames(names []string) string {
	if len(names) <= MaxNamesInDiagnostic {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:MaxNamesInDiagnostic], ", ") + fmt.Sprintf(" and %d more (the prompt's report lists every one)", len(names)-MaxNamesInDiagnostic)
}

// count is "1 skill is" or "N skills are", as one and many say.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
