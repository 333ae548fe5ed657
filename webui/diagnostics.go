package webui

import (
	"bytes"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
)

// The diagnostics page: every diagnostic of every source (what GET
// /v1/diagnostics serves: catalog.Diagnostics), grouped by severity and
// then by code, each linked to its skill (and the SKILL.md line of its
// field, when it names one), with filters by severity and code. An
// agent:ID token sees its agent's diagnostics.

// maxLineLookups bounds the SKILL.md files one page reads to find the
// line of a diagnostic's field; past it diagnostics are shown without a
// line. Each read is at most skill.TypedHeadBytes.
const maxLineLookups = 200

// diagView is a diagnostic as the pages show it.
type diagView struct {
	skill.Diagnostic
	// SkillName is the catalog skill the diagnostic is about, when it is
	// one the caller can open; Link is its page (and line).
	SkillName string
	Link      string
	Line      int
}

// diagGroup is the diagnostics of one severity and code.
type diagGroup struct {
	Code  string
	Items []diagView
	// Folded: a summary line of Count lines and a link to them (ShowURL)
	// instead of the lines. Info lines are folded unless the filter asks
	// for them: on a real collection they are most of the page (39 of 44
	// lines on awesome-copilot, 142 of 146 on anthropics/skills), and
	// they are advice, not problems.
	Folded  bool
	Count   int
	ShowURL string
}

// severityGroup is the diagnostics of one severity, by code.
type severityGroup struct {
	Severity string
	Count    int
	Codes    []diagGroup
}

type diagnosticsPage struct {
	Total, Shown int
	// Folded counts the info lines shown as one summary line per rule;
	// InfoURL shows them.
	Folded  int
	InfoURL string
	// Counts tallies the diagnostics the page is about (one skill's, with
	// ?skill=): the same count of problems as the skills list's.
	Counts     catalog.Tally
	Groups     []severityGroup
	Severity   string // the filter, "" for all
	Code       string
	Skill      string // ?skill=: one skill's diagnostics
	Severities []string
	Codes      []string
}

// reportFor is the count of problems the caller may see: the whole
// catalog's for an admin, else that of the agent its token names (l, its
// visible loadout). Every page that counts problems uses it, so the list,
// the skill page and this page agree with /v1/diagnostics and check.
func (u *ui) reportFor(r *http.Request, l *catalog.Loadout) *catalog.Report {
	rep := u.svc.Report(r.Context())
	if canRead(principal(r)) {
		return rep
	}
	return rep.ForLoadout(l)
}

var severityOrder = []string{string(skill.Error), string(skill.Warning), string(skill.Info)}

func (u *ui) diagnosticsPage(w http.ResponseWriter, r *http.Request) {
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	rep := u.reportFor(r, l)
	q := r.URL.Query()
	pg := &diagnosticsPage{Severity: q.Get("severity"), Code: q.Get("code"), Skill: q.Get("skill"), Severities: severityOrder}
	if pg.Severity != "" && !slices.Contains(severityOrder, pg.Severity) {
		u.fail(w, r, http.StatusBadRequest, "Unknown severity", "severity="+pg.Severity+" is not a severity: use error, warning or info.")
		return
	}
	pg.Counts = rep.Total
	if pg.Skill != "" {
		pg.Counts = rep.Skill(pg.Skill)
	}
	// Folded lines are counted, not rendered.
	fold := pg.Severity == "" && pg.Code == ""
	folded := map[string]int{}
	codes := map[string]bool{}
	var views []diagView
	for _, v := range u.linked(rep, l) {
		if pg.Skill != "" && v.Skill != pg.Skill {
			continue
		}
		pg.Total++
		codes[v.Code] = true
		if (pg.Severity == "" || string(v.Severity) == pg.Severity) && (pg.Code == "" || v.Code == pg.Code) {
			pg.Shown++
			if fold && v.Severity == skill.Info {
				folded[v.Code]++
			} else {
				views = append(views, v)
			}
		}
	}
	for c := range codes {
		pg.Codes = append(pg.Codes, c)
	}
	slices.Sort(pg.Codes)
	// The info lines' SKILL.md lines: linked leaves them out.
	withLines(l, views, func(d skill.Diagnostic) bool { return !catalog.IsProblem(d) })
	for _, sev := range severityOrder {
		g := severityGroup{Severity: sev}
		byCode := map[string]int{}
		for _, v := range views {
			if string(v.Severity) != sev {
				continue
			}
			i, ok := byCode[v.Code]
			if !ok {
				i = len(g.Codes)
				byCode[v.Code] = i
				g.Codes = append(g.Codes, diagGroup{Code: v.Code})
			}
			g.Codes[i].Items = append(g.Codes[i].Items, v)
			g.Codes[i].Count++
			g.Count++
		}
		if sev == string(skill.Info) {
			for code, n := range folded {
				show := url.Values{"severity": {sev}, "code": {code}}
				if pg.Skill != "" {
					show.Set("skill", pg.Skill)
				}
				g.Codes = append(g.Codes, diagGroup{Code: code, Folded: true, Count: n, ShowURL: "/ui/diagnostics?" + show.Encode()})
				g.Count += n
				pg.Folded += n
			}
			info := url.Values{"severity": {sev}}
			if pg.Skill != "" {
				info.Set("skill", pg.Skill)
			}
			pg.InfoURL = "/ui/diagnostics?" + info.Encode()
		}
		slices.SortFunc(g.Codes, func(a, b diagGroup) int { return strings.Compare(a.Code, b.Code) })
		if g.Count > 0 {
			pg.Groups = append(pg.Groups, g)
		}
	}
	u.render(w, r, "diagnostics.html", page{Title: "Diagnostics", Active: "diagnostics", Data: pg})
}

// diagLinks is a report's diagnostics linked to the skills of a loadout.
type diagLinks struct {
	rep   *catalog.Report
	l     *catalog.Loadout
	views []diagView
}

// linked returns rep's diagnostics linked to l's skills, kept for the
// last report and loadout: both change only with the catalog, so the
// page reads SKILL.md files for their lines once per generation, not on
// every request. Only errors and warnings get their lines here: info
// lines are folded on the page by default, so their lines are looked up
// when they are shown.
func (u *ui) linked(rep *catalog.Report, l *catalog.Loadout) []diagView {
	if c := u.diagLinks.Load(); c != nil && c.rep == rep && c.l == l {
		return c.views
	}
	views := linkDiagnostics(l, rep.Diagnostics, 0)
	withLines(l, views, catalog.IsProblem)
	u.diagLinks.Store(&diagLinks{rep: rep, l: l, views: views})
	return views
}

// withLines looks up the SKILL.md lines of the views whose diagnostic
// want says, at most maxLineLookups files.
func withLines(l *catalog.Loadout, views []diagView, want func(skill.Diagnostic) bool) {
	var idx []int
	var ds []skill.Diagnostic
	for i, v := range views {
		if want(v.Diagnostic) {
			idx = append(idx, i)
			ds = append(ds, v.Diagnostic)
		}
	}
	if len(ds) == 0 {
		return
	}
	for j, v := range linkDiagnostics(l, ds, maxLineLookups) {
		views[idx[j]] = v
	}
}

// diagViewsFor links diagnostics to the skills of the caller's visible
// loadout (the global catalog for an admin, else its agent's).
func (u *ui) diagViewsFor(r *http.Request, diags []skill.Diagnostic, lookups int) []diagView {
	l, err := u.visible(r)
	if err != nil {
		return linkDiagnostics(nil, diags, 0)
	}
	return linkDiagnostics(l, diags, lookups)
}

// linkDiagnostics finds each diagnostic's skill in l (by its path, else
// by name) and, for a field of a skill's frontmatter, the line of SKILL.md
// that holds it, reading at most lookups files.
func linkDiagnostics(l *catalog.Loadout, diags []skill.Diagnostic, lookups int) []diagView {
	byLoc := map[string]*skill.Skill{}
	if l != nil && len(diags) > 0 {
		for _, e := range l.Entries() {
			if win, ok := l.Lookup(e.Skill.Name); ok && win == e {
				byLoc[e.Skill.Location] = e.Skill
			}
		}
	}
	type key struct{ name, field string }
	lines := map[key]int{}
	out := make([]diagView, 0, len(diags))
	for _, d := range diags {
		v := diagView{Diagnostic: d}
		sk := byLoc[d.Path]
		if sk == nil && l != nil && d.Skill != "" {
			if e, ok := l.Lookup(d.Skill); ok && (d.Path == "" || d.Path == e.Skill.Location || path.Base(d.Path) == e.Skill.Entry || inDir(d.Path, e.Skill.Dir)) {
				sk = e.Skill
			}
		}
		if sk != nil {
			v.SkillName = sk.Name
			v.Link = "/ui/skills/" + url.PathEscape(sk.Name)
			if d.Field != "" && d.Field != "content" && !configField(d) {
				k := key{sk.Name, d.Field}
				line, seen := lines[k]
				if !seen && lookups > 0 {
					lookups--
					line = fieldLine(sk, d.Field)
					lines[k] = line
				}
				v.Line = line
			}
			if v.Line > 0 {
				v.Link += "?tab=skill-md#L" + strconv.Itoa(v.Line)
			}
		}
		out = append(out, v)
	}
	return out
}

// fieldLine is the line of SKILL.md (1 is the opening ---) where the
// frontmatter key that a diagnostic's field names starts ("metadata.x"
// and "tags[2]" are found at "metadata:" and "tags:"), 0 when it is not
// there or the file cannot be read.
func fieldLine(sk *skill.Skill, field string) int {
	key := field
	if i := strings.IndexAny(key, ".["); i > 0 {
		key = key[:i]
	}
	data, err := sk.ReadFile(sk.Entry)
	if err != nil {
		return 0
	}
	if len(data) > skill.TypedHeadBytes {
		data = data[:skill.TypedHeadBytes]
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(string(data), "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r") != "---" {
		return 0
	}
	for i, ln := range lines[1:] {
		ln = strings.TrimRight(ln, "\r")
		if ln == "---" {
			return 0
		}
		k, _, ok := strings.Cut(ln, ":")
		if !ok || strings.HasPrefix(ln, " ") || strings.HasPrefix(ln, "\t") {
			continue
		}
		if strings.Trim(strings.TrimSpace(k), `"'`) == key {
			return i + 2
		}
	}
	return 0
}

// configField reports whether a diagnostic's field is one of the agent's
// config (skills[0], preload[1], budget) rather than of the skill's
// frontmatter.
func configField(d skill.Diagnostic) bool {
	if d.Agent == "" {
		return false
	}
	return strings.HasPrefix(d.Field, "skills[") || strings.HasPrefix(d.Field, "preload[") || d.Field == "budget"
}

// inDir reports whether p is a file under dir (a skill's folder, or its
// store://NAME): a finding about one of the skill's files (a script, a
// reference, a nested SKILL.md) is about that skill, not a namesake's.
func inDir(p, dir string) bool {
	if dir == "" {
		return false
	}
	rest, ok := strings.CutPrefix(p, dir)
	return ok && (strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, string(filepath.Separator)))
}
