package webui

import "net/http"

// The New skill page (/ui/new, admin): a name, a description and a body,
// created through POST /v1/skills by static/skill-edit.js, which then
// opens the new skill's SKILL.md tab.

func (u *ui) newSkillPage(w http.ResponseWriter, r *http.Request) {
	if !principal(r).Admin() {
		u.fail(w, r, http.StatusForbidden, "Admins only", "Creating a skill needs an admin sign-in: your token is read-only.")
		return
	}
	u.render(w, r, "new.html", page{Title: "New skill", Active: "skills"})
}
