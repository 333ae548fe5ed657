package webui

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The Versions tab: a stored skill's history with digests and dates, a
// diff between any two versions (SKILL.md and every file: added, removed,
// changed, with a line diff for text), and restore (a form post checked
// for CSRF, with the version the page was loaded at, so a restore that
// lost a race is refused rather than overwriting).

type versionsData struct {
	Name     string
	Stored   bool
	Source   string // where a folder or plugin skill comes from
	Origin   skill.Origin
	Editable bool
	Err      string
	Versions []versionRow
	Current  int
	// Digest is a folder or plugin skill's current content digest (what
	// a receipt records), "" when a file could not be read.
	Digest   string
	From, To int
	Diff     []fileDiff
	DiffErr  string
	Same     bool
	CSRF     string
	Restored int
	// PushTarget is the registry prefix the Push action pushes to ("":
	// no publish configured, no action); Pushed is the reference a push
	// just wrote, shown once.
	PushTarget string
	Pushed     string
}

// versionRow is a version with the one before it (0 for the first), for
// its "changes" link.
type versionRow struct {
	Version, Files, Prev int
	Digest, Note         string
	Provenance           string
	Size                 int64
	CreatedAt            time.Time
}

// fileDiff is one file's change between two versions.
type fileDiff struct {
	Path             string
	Status           string // added, removed, changed
	Binary           bool
	Note             string // e.g. the executable bit, or why there is no line diff
	OldSize, NewSize int
	Hunks            []hunk
}

// OldBytes and NewBytes are the sizes for people.
func (d fileDiff) OldBytes() string { return humanBytes(int64(d.OldSize)) }
func (d fileDiff) NewBytes() string { return humanBytes(int64(d.NewSize)) }

func (d *versionsData) DiffURL(from, to int) string {
	return fmt.Sprintf("/ui/skills/%s?tab=versions&from=%d&to=%d#diff", url.PathEscape(d.Name), from, to)
}

func (u *ui) tabVersions(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	p := principal(r)
	o := sp.Skill.OriginValue()
	d := &versionsData{Name: sp.Name, Origin: o, Source: sourceText(o), Stored: o.Kind == "store", Editable: sp.Editable, CSRF: csrfToken(r), Current: o.Version}
	d.Restored, _ = strconv.Atoi(r.URL.Query().Get("restored"))
	d.PushTarget = u.svc.PublishTarget()
	if pushed := r.URL.Query().Get("pushed"); pushed != "" && len(pushed) <= 512 && utf8.ValidString(pushed) {
		d.Pushed = pushed
	}
	if !d.Stored {
		d.Digest = sp.Skill.ContentDigest()
		return u.tabFragment(w, r, "frag_versions.html", d)
	}
	if !canRead(p) {
		d.Err = "The version history is shown to viewers and up only: sign in with a role token (viewer, author, reviewer or admin) to see it."
		return u.tabFragment(w, r, "frag_versions.html", d)
	}
	vs, err := u.svc.Versions(r.Context(), p, sp.Name)
	if err != nil {
		d.Err = service.AsError(err).Message
		return u.tabFragment(w, r, "frag_versions.html", d)
	}
	slices.SortFunc(vs, func(a, b store.Version) int { return cmp.Compare(b.Version, a.Version) })
	for i, v := range vs {
		row := versionRow{Version: v.Version, Files: v.Files, Digest: v.Digest, Note: v.Note, Provenance: v.Provenance, Size: v.Size, CreatedAt: v.CreatedAt}
		if i+1 < len(vs) {
			row.Prev = vs[i+1].Version
		}
		d.Versions = append(d.Versions, row)
	}
	if len(vs) > 0 && d.Current == 0 {
		d.Current = vs[0].Version
	}
	q := r.URL.Query()
	d.From, _ = strconv.Atoi(q.Get("from"))
	d.To, _ = strconv.Atoi(q.Get("to"))
	if len(vs) >= 2 && d.From == 0 && d.To == 0 {
		d.From, d.To = vs[1].Version, vs[0].Version
	}
	if d.From > 0 && d.To > 0 {
		d.Diff, d.DiffErr = u.diffVersions(r, sp.Name, d.From, d.To)
		d.Same = d.DiffErr == "" && len(d.Diff) == 0
	}
	return u.tabFragment(w, r, "frag_versions.html", d)
}

// diffVersions compares two versions of a stored skill, SKILL.md first.
func (u *ui) diffVersions(r *http.Request, name string, from, to int) ([]fileDiff, string) {
	p := principal(r)
	a, _, err := u.svc.Bundle(r.Context(), p, name, from)
	if err != nil {
		return nil, fmt.Sprintf("version %d: %s", from, service.AsError(err).Message)
	}
	b, _, err := u.svc.Bundle(r.Context(), p, name, to)
	if err != nil {
		return nil, fmt.Sprintf("version %d: %s", to, service.AsError(err).Message)
	}
	return diffBundles(a, b), ""
}

// diffBundles lists every file that differs between a and b: SKILL.md,
// then the supporting files by path.
func diffBundles(a, b *skill.Bundle) []fileDiff {
	var out []fileDiff
	budget := MaxDiffTotalLines
	diffFile := func(path string, x, y []byte, added, removed, exA, exB bool) (fileDiff, bool) {
		return diffOne(path, x, y, added, removed, exA, exB, &budget)
	}
	if d, ok := diffFile("SKILL.md", a.Content, b.Content, false, false, false, false); ok {
		out = append(out, d)
	}
	old := map[string]skill.BundleFile{}
	for _, f := range a.Files {
		old[f.Path] = f
	}
	seen := map[string]bool{}
	for _, f := range b.Files {
		seen[f.Path] = true
		o, had := old[f.Path]
		if !had {
			d, _ := diffFile(f.Path, nil, f.Data, true, false, false, f.Executable)
			d.Status = "added"
			out = append(out, d)
			continue
		}
		if d, ok := diffFile(f.Path, o.Data, f.Data, false, false, o.Executable, f.Executable); ok {
			out = append(out, d)
		}
	}
	for _, f := range a.Files {
		if !seen[f.Path] {
			d, _ := diffFile(f.Path, f.Data, nil, false, true, f.Executable, false)
			d.Status = "removed"
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out[min(1, len(out)):], func(x, y fileDiff) int { return cmp.Compare(x.Path, y.Path) })
	if len(out) > 0 && out[0].Path != "SKILL.md" {
		slices.SortStableFunc(out, func(x, y fileDiff) int { return cmp.Compare(x.Path, y.Path) })
	}
	return out
}

// isText is whether data is shown as text: valid UTF-8 without NUL.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// diffOne diffs one file; ok is false when nothing changed. budget is
// the lines the diff may still compare (MaxDiffTotalLines in all).
func diffOne(path string, a, b []byte, added, removed, exA, exB bool, budget *int) (fileDiff, bool) {
	d := fileDiff{Path: path, Status: "changed", OldSize: len(a), NewSize: len(b)}
	same := bytes.Equal(a, b) && !added && !removed
	if exA != exB && !added && !removed {
		if exB {
			d.Note = "made executable"
		} else {
			d.Note = "no longer executable"
		}
	}
	if same && d.Note == "" {
		return d, false
	}
	if same {
		return d, true
	}
	if !isText(a) || !isText(b) {
		d.Binary = true
		return d, true
	}
	if len(a) > MaxDiffFileBytes || len(b) > MaxDiffFileBytes {
		d.Note = fmt.Sprintf("over %s: no line diff", humanBytes(MaxDiffFileBytes))
		return d, true
	}
	la, lb := splitLines(string(a)), splitLines(string(b))
	if len(la)+len(lb) > *budget {
		d.Note = fmt.Sprintf("no line diff: this comparison has compared its %d lines already", MaxDiffTotalLines)
		return d, true
	}
	*budget -= len(la) + len(lb)
	lines, ok := lineDiff(la, lb)
	if !ok {
		d.Note = fmt.Sprintf("too different for a line diff (more than %d lines or %d changed lines)", MaxDiffLines, MaxDiffEdits)
		return d, true
	}
	d.Hunks = hunks(lines)
	return d, true
}

// restoreVersion is the Versions tab's restore form: the version to make
// current again, and the version the page showed as current (if_version),
// so a restore over a newer save is refused with the conflict.
func (u *ui) restoreVersion(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	v, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil || v <= 0 {
		u.fail(w, r, http.StatusBadRequest, "No version to restore", "The form's field version must be a version number from the Versions tab: reload the tab and pick one.")
		return
	}
	ifv, err := strconv.Atoi(r.PostFormValue("if_version"))
	if err != nil || ifv <= 0 {
		u.fail(w, r, http.StatusBadRequest, "No current version", "The form's field if_version must be the version the page was loaded at: reload the tab and try again.")
		return
	}
	rec, err := u.svc.Restore(r.Context(), principal(r), name, v, ifv)
	if err != nil {
		e := service.AsError(err)
		if e.Code == service.CodeConflict {
			u.fail(w, r, http.StatusConflict, "Restore refused: the skill changed",
				fmt.Sprintf("%s: the Versions tab was loaded at version %d, and the skill has been saved since. Nothing was restored: reload the tab, look at the newer version, and restore again if you still want version %d.", e.Message, ifv, v))
			return
		}
		u.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/ui/skills/%s?tab=versions&restored=%d", url.PathEscape(name), rec.Version), http.StatusSeeOther)
}

// pushVersion is the Versions tab's "Push to registry" form: one stored
// version, pushed to the configured registry as an OCI artifact
// (docs/oci.md). The result (the reference with its digest) is shown on
// the tab; a refusal says what the registry said.
func (u *ui) pushVersion(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	v, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil || v <= 0 {
		u.fail(w, r, http.StatusBadRequest, "No version to push", "The form's field version must be a version number from the Versions tab: reload the tab and pick one.")
		return
	}
	ref, err := u.svc.PublishVersion(r.Context(), principal(r), name, v)
	if err != nil {
		e := service.AsError(err)
		if e.Code == service.CodeUpstream {
			u.fail(w, r, http.StatusBadGateway, "Push refused by the registry",
				fmt.Sprintf("Version %d of %s was not pushed: %s. Nothing changed in loadout; check the registry's address and credentials (\"publish\" in the config) and push again.", v, name, e.Message))
			return
		}
		u.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/ui/skills/%s?tab=versions&pushed=%s", url.PathEscape(name), url.QueryEscape(ref)), http.StatusSeeOther)
}
