package webui

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/loadout/loadout/catalog"
)

// The New skill page (/ui/new, admin): a name, a description and a body
// (prefilled with a template of sections), created through POST
// /v1/skills by static/skill-edit.js, which then opens the new skill's
// SKILL.md tab. The page says where the skill goes: the store, and which
// agents read it.

// newData is what new.html gets.
type newData struct {
	// Agents are the agents that read the store, each with the place of
	// the store among its sources ("source 2").
	Agents []newAgent
	// Template is the body the form starts with.
	Template string
}

type newAgent struct{ ID, Source string }

// newSkillTemplate is the starting body: the sections a skill usually
// has, for the author to fill in or delete.
const newSkillTemplate = `# Skill title

## When to use
- The situation or request this skill is for.

## Steps
1. The first thing to do.
2. The next thing to do.

## Examples
- An example request, and what a good result looks like.
`

func (u *ui) newSkillPage(w http.ResponseWriter, r *http.Request) {
	if !canWrite(principal(r)) {
		u.fail(w, r, http.StatusForbidden, "Authors only", "Creating a skill needs the author role (or reviewer or admin): this session's token is "+roleName(principal(r))+". Sign in with an author token.")
		return
	}
	d := newData{Template: newSkillTemplate}
	for _, l := range u.svc.Catalog().Agents() {
		if i := slices.IndexFunc(l.Spec.Skills, func(s catalog.SourceSpec) bool { return s.Store }); i >= 0 {
			d.Agents = append(d.Agents, newAgent{ID: l.Spec.AgentID, Source: fmt.Sprintf("source %d", i+1)})
		}
	}
	u.render(w, r, "new.html", page{Title: "New skill", Active: "skills", Data: d})
}
