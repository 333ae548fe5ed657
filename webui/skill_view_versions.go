package webui

import (
	"html/template"
	"net/http"
)

func (u *ui) tabVersions(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	return "", true
}

func (u *ui) restoreVersion(w http.ResponseWriter, r *http.Request) {}
