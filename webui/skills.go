package webui

import (
	"net/http"

	"github.com/loadout/loadout/skill"
)

// The skills page (the UI's home): every skill of the global catalog.

type skillRow struct {
	Name, Description string
	Origin            skill.Origin
}

func (u *ui) routesSkills(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/{$}", u.authed(u.skillsPage))
}

func (u *ui) skillsPage(w http.ResponseWriter, r *http.Request) {
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	var rows []skillRow
	for _, name := range l.Names() {
		if e, ok := l.Lookup(name); ok {
			rows = append(rows, skillRow{Name: name, Description: e.Skill.Description, Origin: e.Skill.Origin})
		}
	}
	u.render(w, r, "skills.html", page{Title: "Skills", Active: "skills", Data: rows})
}
