package webui

import (
	"html/template"
	"net/http"
)

// Placeholders for the editing tabs (SKILL.md, Files) until they are built.

func (u *ui) routesSkillEdit(mux *http.ServeMux) {}

func (u *ui) tabSkillMD(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return template.HTML("<pre>" + template.HTMLEscapeString(sp.Skill.Description) + "</pre>"), true
}

func (u *ui) tabFiles(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
