package webui

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The import / export page (admin): drop zips, portable JSON documents or
// a skill's loose files; they go to POST /ui/import as one
// multipart/form-data request and are imported in one transaction through
// the service, as POST /v1/import does: all or nothing unless "partial" is
// set, so when any skill is refused nothing is written. A zip may hold
// several skills, one per top-level folder (each is checked by
// portable.ImportZip on its own); loose files (or a chosen folder) make a
// skill of each folder holding a SKILL.md (groupLoose). Export links are GET /v1/skills/NAME/export.
//
// Why not POST /v1/import straight from the page: it takes one zip (one
// skill) or one JSON body per request, so a drop of several files, or of a
// zip of several skills, would be several transactions, and a refusal in
// one could not keep the others from being written.

// The import's limits are portable's (portable.LimitsFor, by the
// service's limits): the ones POST /v1/import and loadout import use, so
// a file is refused here exactly where it is refused there. The UI adds
// only the bounds of one request of several files.
const (
	// DefaultMaxImportBytes is Options.MaxImportBytes's default: every
	// dropped file of one import together (one file is held to
	// portable.ImportLimits.MaxUploadBytes, the same by default).
	DefaultMaxImportBytes = portable.DefaultMaxUploadBytes
	// MaxImportFiles caps the files (form parts) of one import.
	MaxImportFiles = 1000
	// MaxImportSkills caps the skills one import may hold, every file
	// together (one file is held to portable's DefaultMaxSkills, the same).
	MaxImportSkills = portable.DefaultMaxSkills
)

// importRow is one skill's result, as the page's table shows it.
type importRow struct {
	Name     string             `json:"name"`
	From     string             `json:"from"`
	Action   string             `json:"action"`
	Version  int                `json:"version,omitempty"`
	Error    string             `json:"error,omitempty"`
	Problems []skill.Diagnostic `json:"problems,omitempty"`
}

type importResponse struct {
	Results []importRow `json:"results"`
	// Written says whether anything was written to the store.
	Written bool   `json:"written"`
	Message string `json:"message"`
}

// importPageData is import.html's data.
type importPageData struct {
	Skills   []exportRow
	MaxBytes int64
	Query    string
	Matched  int  // skills matching Query
	More     bool // more matched than Skills holds
}

// maxExportRows bounds the export table; a search narrows it.
const maxExportRows = 100

type exportRow struct {
	Name, Kind string
	JSON, Zip  string
}

// importLimits are this server's import limits, the API's and the CLI's.
func (u *ui) importLimits() portable.ImportLimits { return portable.LimitsFor(u.svc.Limits()) }

func (u *ui) maxImportBytes() int64 {
	if u.opt.MaxImportBytes > 0 {
		return u.opt.MaxImportBytes
	}
	return DefaultMaxImportBytes
}

func (u *ui) importPage(w http.ResponseWriter, r *http.Request) {
	if !canWrite(principal(r)) {
		u.fail(w, r, http.StatusForbidden, "Authors only", "Importing needs the author role (or reviewer or admin): this session's token is "+roleName(principal(r))+". Sign in with an author token.")
		return
	}
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	d := importPageData{MaxBytes: u.maxImportBytes(), Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	q := strings.ToLower(d.Query)
	for _, name := range l.Names() {
		if q != "" && !strings.Contains(strings.ToLower(name), q) {
			continue
		}
		d.Matched++
		if len(d.Skills) >= maxExportRows {
			d.More = true
			continue
		}
		e, _ := l.Lookup(name)
		base := "/v1/skills/" + escapeName(name) + "/export?format="
		d.Skills = append(d.Skills, exportRow{Name: name, Kind: e.Skill.Origin.Kind, JSON: base + "json", Zip: base + "zip"})
	}
	u.render(w, r, "import.html", page{Title: "Import / Export", Active: "import", Data: d})
}

// importJSON answers the import request: JSON, like the API.
func importJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func importRefuse(w http.ResponseWriter, status int, code, field, msg string) {
	importJSON(w, status, map[string]any{"error": map[string]string{"code": code, "field": field, "message": msg}})
}

// importPart is one skill to import, or why it cannot be.
type importPart struct {
	from   string
	name   string // a fallback name for a refusal
	bundle *skill.Bundle
	err    error
}

func (u *ui) importPost(w http.ResponseWriter, r *http.Request) {
	if !canWrite(principal(r)) {
		importRefuse(w, http.StatusForbidden, service.CodeForbidden, "", "importing needs the author role (or reviewer or admin): this session's token is "+roleName(principal(r))+"; sign in with an author token")
		return
	}
	if err := u.checkCSRF(r); err != nil {
		importRefuse(w, http.StatusForbidden, "csrf", "X-CSRF-Token", err.Error())
		return
	}
	limit, lim := u.maxImportBytes(), u.importLimits()
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	mr, err := r.MultipartReader()
	if err != nil {
		importRefuse(w, http.StatusBadRequest, "bad_request", "Content-Type", "send the files as multipart/form-data, one part named file per file: "+err.Error())
		return
	}
	partial := false
	var parts []importPart
	var loose []looseFile // files that are neither zips nor JSON, by their full path
	nfiles := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			importBodyErr(w, err, limit)
			return
		}
		data, err := io.ReadAll(io.LimitReader(p, lim.MaxUploadBytes+1))
		if err != nil {
			importBodyErr(w, err, limit)
			return
		}
		switch p.FormName() {
		case "partial":
			partial, _ = strconv.ParseBool(strings.TrimSpace(string(data)))
			continue
		case "file":
		default:
			continue
		}
		nfiles++
		if nfiles > MaxImportFiles {
			importRefuse(w, http.StatusRequestEntityTooLarge, "too_large", "file", fmt.Sprintf("more than %d files in one import: import them in smaller batches", MaxImportFiles))
			return
		}
		name := partFileName(p)
		switch {
		case int64(len(data)) > lim.MaxUploadBytes:
			parts = append(parts, importPart{from: name, name: name, err: portable.TooLargeError(name, -1, lim)})
		case portable.IsZip(name, data) || portable.IsJSON(name, data):
			parts = append(parts, uploadParts(name, data, lim)...)
		default:
			loose = append(loose, looseFile{strings.TrimLeft(name, "/"), data})
		}
	}
	dirs, groups := groupLoose(loose)
	for _, dir := range dirs {
		parts = append(parts, looseParts(dir, groups[dir], lim))
	}
	if len(parts) == 0 {
		importRefuse(w, http.StatusBadRequest, "bad_request", "file", "no files were sent: drop a zip, a portable JSON document, or a skill's files")
		return
	}
	if len(parts) > MaxImportSkills {
		importRefuse(w, http.StatusRequestEntityTooLarge, "too_large", "file", fmt.Sprintf("%d skills in one import, over the cap of %d: import them in smaller batches", len(parts), MaxImportSkills))
		return
	}
	items := make([]store.ImportItem, len(parts))
	for i, p := range parts {
		if p.err != nil {
			items[i] = store.ImportItem{Err: p.err, Provenance: "UI import: " + p.from}
		} else {
			items[i] = store.ImportItem{Bundle: p.bundle, Source: "import", Provenance: "UI import: " + p.from}
		}
	}
	res, err := u.svc.Import(r.Context(), principal(r), items, service.ImportOptions{Partial: partial})
	if err != nil {
		e := service.AsError(err)
		importJSON(w, statusOf(e), map[string]any{"error": e})
		return
	}
	out := importResponse{Results: make([]importRow, 0, len(res))}
	refused, written := 0, 0
	for i, ir := range res {
		row := importRow{Name: ir.Name, Action: ir.Action, Version: ir.Version, Problems: ir.Problems}
		if i < len(parts) {
			row.From = parts[i].from
			if row.Name == "" {
				row.Name = parts[i].name
			}
			if parts[i].err != nil {
				row.Error, row.Problems = errText(parts[i].err), errProblems(parts[i].err)
			}
		}
		if row.Error == "" && ir.Error != nil {
			row.Error = errText(ir.Error)
		}
		switch ir.Action {
		case store.ActionRefused:
			refused++
		case store.ActionCreated, store.ActionUpdated:
			written++
		}
		out.Results = append(out.Results, row)
	}
	out.Written = written > 0
	status := http.StatusOK
	switch {
	case refused == 0:
		out.Message = fmt.Sprintf("%s imported: %d written, %d unchanged", count(len(res), "skill", "skills"), written, len(res)-written)
	case partial:
		status = http.StatusUnprocessableEntity
		out.Message = fmt.Sprintf("%d of %s refused; the accepted ones were imported (partial import)", refused, count(len(res), "skill", "skills"))
	default:
		status = http.StatusUnprocessableEntity
		out.Message = fmt.Sprintf("nothing was written: %d of %s refused; fix %s and import again, or tick \"import the accepted skills anyway\"", refused, count(len(res), "skill", "skills"), noun(refused, "it", "them"))
	}
	importJSON(w, status, out)
}

func statusOf(e *service.Error) int {
	switch e.Code {
	case service.CodeForbidden:
		return http.StatusForbidden
	case service.CodeNoStore:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func importBodyErr(w http.ResponseWriter, err error, limit int64) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		importRefuse(w, http.StatusRequestEntityTooLarge, "too_large", "file", fmt.Sprintf("the import is over %d bytes, every file together: import fewer files at a time", limit))
		return
	}
	importRefuse(w, http.StatusBadRequest, "bad_request", "file", "the upload could not be read: "+err.Error())
}

// partFileName is a part's file name with its folders (a dropped folder's
// files are sent as "skill/scripts/run.sh"); Part.FileName keeps only the
// last element.
func partFileName(p *multipart.Part) string {
	if _, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return strings.TrimLeft(strings.ReplaceAll(params["filename"], "\\", "/"), "/")
	}
	return p.FileName()
}

// uploadParts are the skills of one dropped zip or JSON file, read as
// POST /v1/import and loadout import read them (portable.ReadUpload).
func uploadParts(name string, data []byte, lim portable.ImportLimits) []importPart {
	ups, err := portable.ReadUpload(name, portable.KindAuto, data, lim)
	if err != nil {
		return []importPart{{from: name, name: name, err: err}}
	}
	out := make([]importPart, len(ups))
	for i, up := range ups {
		out[i] = importPart{from: up.From, name: up.Name, bundle: up.Bundle, err: up.Err}
	}
	return out
}

type looseFile struct {
	rel  string
	data []byte
}

// groupLoose sorts loose files into skills: each SKILL.md (or skill.md)
// makes its folder a skill, and every file belongs to the deepest such
// folder above it, with its path made relative to it. A file under no
// SKILL.md goes to a group of its first folder, which the zip check then
// refuses for want of a SKILL.md, naming it.
func groupLoose(files []looseFile) ([]string, map[string][]looseFile) {
	skillDirs := map[string]bool{}
	for _, f := range files {
		if b := path.Base(f.rel); b == "SKILL.md" || b == "skill.md" {
			d := path.Dir(f.rel)
			if d == "." {
				d = ""
			}
			skillDirs[d] = true
		}
	}
	groups := map[string][]looseFile{}
	var order []string
	for _, f := range files {
		dir, best := "", -1
		for d := range skillDirs {
			if (d == "" || strings.HasPrefix(f.rel, d+"/")) && len(d) > best {
				dir, best = d, len(d)
			}
		}
		rel := f.rel
		if best < 0 {
			dir, rel, _ = strings.Cut(f.rel, "/")
			if rel == "" {
				dir, rel = "", f.rel
			}
		} else if dir != "" {
			rel = strings.TrimPrefix(f.rel, dir+"/")
		}
		if _, ok := groups[dir]; !ok {
			order = append(order, dir)
		}
		groups[dir] = append(groups[dir], looseFile{rel, f.data})
	}
	sort.Strings(order)
	return order, groups
}

// looseParts makes one skill of loose files, through a zip so that the
// one set of zip checks (paths, sizes, SKILL.md) applies.
func looseParts(dir string, files []looseFile, lim portable.ImportLimits) importPart {
	from := "dropped files"
	top := path.Base(dir)
	if dir != "" {
		from = dir + "/"
	} else {
		top = "skill"
		for _, f := range files {
			if strings.EqualFold(f.rel, "SKILL.md") {
				if doc, _, ok := skill.ParseHeader(f.data, "SKILL.md", ""); ok && doc != nil && doc.Frontmatter.Name != "" {
					top = doc.Frontmatter.Name
				}
			}
		}
	}
	slices.SortFunc(files, func(a, b looseFile) int { return strings.Compare(a.rel, b.rel) })
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		fw, err := zw.Create(top + "/" + f.rel)
		if err != nil {
			return importPart{from: from, name: top, err: &portable.Error{Source: from, Entry: f.rel, Code: "path-invalid", Msg: err.Error()}}
		}
		fw.Write(f.data)
	}
	zw.Close()
	ps := uploadParts(from, b.Bytes(), lim) // one top folder: one skill
	ps[0].name = top
	return ps[0]
}

func errText(err error) string {
	return err.Error()
}

// errProblems are the diagnostics of a refusal: a check's problems, or the
// portable format's one coded problem.
func errProblems(err error) []skill.Diagnostic {
	var ce *skill.CheckError
	if errors.As(err, &ce) {
		return ce.Problems
	}
	var pe *portable.Error
	if errors.As(err, &pe) {
		return []skill.Diagnostic{{Severity: skill.Error, Code: pe.Code, Message: pe.Msg, Path: pe.Entry}}
	}
	return nil
}

// escapeName is a skill name as one path segment of a URL.
func escapeName(name string) string { return url.PathEscape(name) }
