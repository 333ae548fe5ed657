package webui

import (
	"html/template"
	"net/http"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// The skill page: one skill of the global catalog, in tabs. Each tab is a
// function of its own (tabs below), so the tabs can be built apart.

// tab is one tab of the skill page.
type tab struct {
	ID, Label string
	// render returns the tab's body; it may write an error page itself
	// and return ok false.
	render func(u *ui, w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool)
}

// skillTabs are the skill page's tabs, in order.
var skillTabs = []tab{
	{ID: "skill-md", Label: "SKILL.md", render: (*ui).tabSkillMD},
	{ID: "files", Label: "Files", render: (*ui).tabFiles},
	{ID: "preview", Label: "Preview", render: (*ui).tabPreview},
	{ID: "versions", Label: "Versions", render: (*ui).tabVersions},
	{ID: "usage", Label: "Usage", render: (*ui).tabUsage},
	{ID: "agents", Label: "Agents", render: (*ui).tabAgents},
}

// skillPage is what every tab gets: the skill as the global catalog has
// it, and whether the caller may edit it (a stored skill and an author or higher).
type skillPage struct {
	Name     string
	Entry    *catalog.Entry
	Skill    *skill.Skill
	Editable bool
	// Problems counts the diagnostics about the skill: the list's count
	// (catalog.Report), with its info lines apart.
	Problems catalog.Tally
	Tabs     []tab
	Active   string
	Body     template.HTML
}

func (u *ui) skillPageHandler(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p := principal(r)
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	e, ok := l.Lookup(name)
	if !ok {
		if b, blocked := l.BlockedName(name); blocked {
			msg := service.BlockedError(name, b.Block).Message
			if p.Admin() {
				msg += " Unblock it on the Blocks page (/ui/blocks)."
			}
			u.refuse(w, r, http.StatusForbidden, service.CodeBlocked, "Skill blocked", msg)
			return
		}
		u.fail(w, r, http.StatusNotFound, "No such skill", "There is no skill named "+name+" in the catalog: pick one from the skills list.")
		return
	}
	sp := &skillPage{Name: name, Entry: e, Skill: e.Skill, Tabs: skillTabs, Active: r.URL.Query().Get("tab")}
	sp.Editable = canWrite(p) && e.Skill.Origin.Kind == "store"
	sp.Problems = u.reportFor(r, l).Skill(name)
	var cur tab
	for _, t := range skillTabs {
		if t.ID == sp.Active {
			cur = t
		}
	}
	if cur.ID == "" {
		cur = skillTabs[0]
		sp.Active = cur.ID
	}
	body, ok := cur.render(u, w, r, sp)
	if !ok {
		return
	}
	sp.Body = body
	u.render(w, r, "skill.html", page{Title: name, Active: "skills", Data: sp})
}
