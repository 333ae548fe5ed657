package webui

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/loadout/loadout/skill"
)

// The SKILL.md tab: the editor (static/editor.js) with the skill's text,
// the frontmatter form kept in sync with it, validation through POST
// /v1/check as the author types, and Save through the API with the ETag
// the page was loaded with (static/skill-edit.js). Read-only skills get
// the same editor, read-only, with where they come from.

// editData is what the editing tabs' templates get.
type editData struct {
	Name     string
	Editable bool
	// Admin may copy a folder or plugin skill to the store.
	CanCopy bool
	Origin  skill.Origin
	// Where says where a read-only skill comes from; Why says why it
	// cannot be edited here and what to do instead.
	Where, Why string
	Content    string
	// ETag is the stored skill's version as the API's ETag ("v3"); the
	// page's writes send it as If-Match.
	ETag    string
	Version int
	Files   []*fileNode
	Count   int
	// WarnSize is the size over which a text file (SKILL.md too) is
	// warned about.
	WarnSize int64
}

// editState reads what both editing tabs need: for an editable skill the
// store's record (its content, files and version, as fresh as the store
// has them), else the catalog's skill.
func (u *ui) editState(w http.ResponseWriter, r *http.Request, sp *skillPage) (*editData, bool) {
	p := principal(r)
	sk := sp.Skill
	d := &editData{Name: sp.Name, Editable: sp.Editable, Origin: sk.OriginValue(), WarnSize: skill.DefaultWarnTextSize}
	d.CanCopy = canWrite(p) && sk.Origin.Kind != "store"
	switch sk.Origin.Kind {
	case "plugin":
		d.Where = fmt.Sprintf("plugin %s (trust %s)", sk.Origin.Plugin, sk.Origin.Trust)
		if sk.Origin.Provenance != "" {
			d.Where += ", " + sk.Origin.Provenance
		}
		d.Why = "Plugin skills are read-only: change the plugin, or copy the skill to the store to edit a copy."
	case "git", "index", "oci":
		d.Where = "remote source " + sk.Origin.RemoteText()
		d.Why = "Remote skills are read-only: change them at their source and sync (loadout sync, or POST /v1/sources/{id}/sync), or copy the skill to the store to edit a copy."
	case "folder":
		d.Where = "folder " + sk.Dir
		d.Why = "Folder skills are read-only here: edit the files on disk (changes show up live), or copy the skill to the store to edit a copy."
	default:
		d.Where = "the store, version " + strconv.Itoa(sk.Origin.Version)
		if !sp.Editable {
			d.Why = "Your sign-in is read-only (" + roleName(p) + "): sign in with an author token (or reviewer or admin) to edit stored skills."
		}
	}
	if sp.Editable {
		rec, err := u.svc.Get(r.Context(), p, sp.Name)
		if err != nil {
			u.failErr(w, r, err)
			return nil, false
		}
		d.Content, d.Version, d.ETag = string(rec.Content), rec.Version, `"v`+strconv.Itoa(rec.Version)+`"`
		d.Files, d.Count = fileTree(rec.Files, true), len(rec.Files)
		return d, true
	}
	content, err := sk.ReadFile(sk.Entry)
	if err != nil {
		u.fail(w, r, http.StatusConflict, "SKILL.md could not be read", fmt.Sprintf("%s: %v. Check the skill on the Diagnostics page.", sk.Location, err))
		return nil, false
	}
	d.Content, d.Version = string(content), sk.Origin.Version
	d.Files, d.Count = fileTree(sk.Files, false), len(sk.Files)
	return d, true
}

func (u *ui) tabSkillMD(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	d, ok := u.editState(w, r, sp)
	if !ok {
		return "", false
	}
	return u.fragOrFail(w, r, "frag_skillmd.html", d)
}

// fragOrFail renders a fragment, or the error page when it cannot.
func (u *ui) fragOrFail(w http.ResponseWriter, r *http.Request, name string, d any) (template.HTML, bool) {
	h, err := u.fragment(name, d)
	if err != nil {
		u.log.Error("ui: rendering a tab failed", "frag", name, "err", err)
		u.fail(w, r, http.StatusInternalServerError, "This tab could not be shown", "The server could not render it; the log says why.")
		return "", false
	}
	return h, true
}
