package webui

import (
	"html/template"
	"net/http"
)

// Placeholders for the viewing tabs (Preview, Versions, Usage, Agents).

func (u *ui) routesSkillViews(mux *http.ServeMux) {}

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
