package catalog

import (
	"fmt"
	"strings"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// PromptOptions override the agent's own format and budget.
type PromptOptions struct {
	Format string
	// Budget in characters; 0 keeps the agent's (or the default).
	Budget int
}

// Prompt renders the agent's system-prompt section. It reads no files:
// listed skills need only metadata, and inline bodies were read when the
// catalog was built. The diagnostics say exactly which skills the budget
// shortened or left out.
func (l *Loadout) Prompt(opt PromptOptions) (string, render.Report, []skill.Diagnostic) {
	ro := render.Options{Format: l.Spec.Format, Budget: l.Spec.Budget}
	if opt.Format != "" {
		ro.Format = opt.Format
	}
	if opt.Budget != 0 {
		ro.Budget = opt.Budget
	}
	var listing, inline []render.Entry
	for _, e := range l.entries {
		re := render.Entry{Name: e.Skill.Name, Description: e.Skill.Description, Location: e.Skill.Location,
			Dir: e.Skill.Dir, Virtual: e.Skill.Virtual, Origin: e.Skill.Origin}
		switch {
		case e.Inline:
			re.Body = e.body
			inline = append(inline, re)
		case e.Listed && !e.Skill.Hidden():
			listing = append(listing, re)
		}
	}
	text, rep := render.Prompt(listing, inline, ro)
	var diags []skill.Diagnostic
	if len(rep.Shortened) > 0 {
		diags = append(diags, skill.Diagnostic{Severity: skill.Info, Code: CodeBudgetShortened, Agent: l.Spec.AgentID,
			Message: fmt.Sprintf("the listing was over the budget of %d characters; the descriptions of %d skills were shortened: %s",
				rep.Budget, len(rep.Shortened), strings.Join(rep.Shortened, ", "))})
	}
	if rep.TooSmall {
		diags = append(diags, skill.Diagnostic{Severity: skill.Error, Code: CodeBudgetTooSmall, Agent: l.Spec.AgentID, Field: "budget",
			Message: fmt.Sprintf("the budget of %d characters cannot hold the %s format's fixed text and the line that says how to find the %d skills it leaves out (%d characters); no skill was listed and the prompt is over the budget: raise the budget to at least %d",
				rep.Budget, rep.Format, len(rep.Omitted), rep.MinBudget, rep.MinBudget)})
	}
	if len(rep.Omitted) > 0 {
		diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeBudgetOmitted, Agent: l.Spec.AgentID,
			Message: fmt.Sprintf("%d skills did not fit the budget of %d characters and were left out of the listing (they can still be found with search_skills and loaded by name): %s; raise the agent's budget or narrow its available patterns",
				len(rep.Omitted), rep.Budget, strings.Join(rep.Omitted, ", "))})
	}
	return text, rep, diags
}
