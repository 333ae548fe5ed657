package webui

import (
	"html/template"
	"net/http"
)

// Placeholders for the tabs, each replaced by its own file.

func (u *ui) tabSkillMD(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return template.HTML("<pre>" + template.HTMLEscapeString(sp.Skill.Description) + "</pre>"), true
}
func (u *ui) tabFiles(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
func (u *ui) tabPreview(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
func (u *ui) tabVersions(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
func (u *ui) tabUsage(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
func (u *ui) tabAgents(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
