package webui

import (
	"html/template"
	"net/http"
)

func (u *ui) tabUsage(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}

func (u *ui) tabAgents(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}
