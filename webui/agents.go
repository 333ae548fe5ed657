package webui

import (
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// The agents pages: every agent the caller may read (/ui/agents), and one
// agent's loadout (/ui/agents/{id}): its sources in order with their
// patterns, each skill's mode, the prompt section in each format with its
// budget and what the budget cut, and the agent's diagnostics. An
// agent:ID token sees its own agent only.

// Skill modes, as the agents pages name them.
const (
	modeListed    = "listed"
	modeInline    = "inline"
	modePreloaded = "preloaded"
	modeHidden    = "hidden"
)

// agentSummary is one row of the agents list.
type agentSummary struct {
	ID, DisplayName, Description string
	Format                       string
	Budget                       int // -1: none
	Skills                       int
	Modes                        map[string]int
	Errors, Warnings             int
}

// agentSkill is one selected skill of an agent.
type agentSkill struct {
	Name, Description string
	Mode              string
	Origin            skill.Origin
	// ShadowedBy is the location of the entry that wins this name, when
	// this one is selected too but loses activation by name.
	ShadowedBy string
}

// agentSource is one entry of the agent's skills list, with what it
// selected.
type agentSource struct {
	Index int
	Kind  string // folder, store, plugin, git, index, preload
	Where string // the root path, plugin id, or the remote's URL
	// A git or index source's ref, folders and id (the lock's and the
	// API's name for it).
	Ref, ID   string
	Paths     []string
	Label     string // sourceLabel: how other pages name this source
	Available []string
	Inline    []string
	Default   bool // neither pattern given: available is ["*"]
	Skills    []agentSkill
}

// agentPage is the data of agent.html.
type agentPage struct {
	agentSummary
	Spec    catalog.AgentSpec
	Sources []agentSource
	// The prompt in the chosen format and budget.
	Prompt       string
	Report       render.Report
	PromptFormat string
	BudgetParam  string // the ?budget= the page was asked with, "" for the agent's
	Meter        int    // characters counted against the budget (Report.Chars)
	MeterMax     int    // the budget, 0 when there is none
	Over         bool
	Diagnostics  []diagView
	PromptDiags  []diagView
	ModeCounts   []modeCount
	FormatLinks  []formatLink
}

type modeCount struct {
	Mode  string
	Count int
}

type formatLink struct {
	Format, URL string
	Current     bool
}

// readableAgents are the loadouts the caller may read, in config order.
func (u *ui) readableAgents(r *http.Request) []*catalog.Loadout {
	p := principal(r)
	var out []*catalog.Loadout
	for _, l := range u.svc.Catalog().Agents() {
		if canRead(p) || p.CanAgent(l.Spec.AgentID) {
			out = append(out, l)
		}
	}
	return out
}

// agentLoadout is the agent's loadout for its page: a viewer or higher
// reads every agent's page, as it reads every skill (reading it here is
// no agent right: the API's and MCP's agent routes still need agent:ID or
// admin); an agent token reads its own.
func (u *ui) agentLoadout(r *http.Request, id string) (*catalog.Loadout, error) {
	if canRead(principal(r)) {
		if l, ok := u.svc.Catalog().Agent(id); ok {
			return l, nil
		}
		return u.svc.Loadout(service.Principal{Open: true}, id) // the not-found answer, with the agents' names
	}
	return u.svc.Loadout(principal(r), id)
}

func (u *ui) agentsPage(w http.ResponseWriter, r *http.Request) {
	var rows []agentSummary
	rep := u.svc.Report(r.Context())
	for _, l := range u.readableAgents(r) {
		rows = append(rows, summarize(l, rep))
	}
	u.render(w, r, "agents.html", page{Title: "Agents", Active: "agents", Data: rows})
}

func effectiveFormat(f string) string {
	if f == "" {
		return render.FormatPi
	}
	return f
}

// summarize counts an agent's skills by how it gets them, and its
// problems: the errors and warnings of its report (catalog.Report's
// ForLoadout: the loadout's diagnostics, and the safety checks' findings
// about the skills it is served).
func summarize(l *catalog.Loadout, rep *catalog.Report) agentSummary {
	s := agentSummary{ID: l.Spec.AgentID, DisplayName: l.Spec.DisplayName, Description: l.Spec.Description,
		Format: effectiveFormat(l.Spec.Format), Budget: render.EffectiveBudget(l.Spec.Budget), Skills: len(l.Names()), Modes: map[string]int{}}
	t := rep.ForLoadout(l).Total
	s.Errors, s.Warnings = t.Errors, t.Warnings
	for _, e := range l.Entries() {
		s.Modes[entryMode(l, e)]++
	}
	return s
}

// entryMode is how an agent gets a skill: preloaded (its preload list
// names it, by name or by folder: an inline entry that no inline pattern
// of its source selects), inline (an inline pattern selects it), hidden
// (listed, but disable-model-invocation keeps it out of the listing) or
// listed.
func entryMode(l *catalog.Loadout, e *catalog.Entry) string {
	switch {
	case e.Inline && (e.Source < 0 || e.Source >= len(l.Spec.Skills) || slices.Contains(l.Spec.Preload, e.Skill.Name) ||
		!matchesAny(l.Spec.Skills[e.Source].Inline, e.Skill.Name)):
		return modePreloaded
	case e.Inline:
		return modeInline
	case e.Skill.Hidden():
		return modeHidden
	}
	return modeListed
}

// matchesAny reports whether a name matches one of an agent's patterns
// (* and ?, where / is an ordinary character), as the catalog matches.
func matchesAny(pats []string, name string) bool {
	for _, p := range pats {
		if wildcard(p, name) {
			return true
		}
	}
	return false
}

// wildcard is the catalog's match: path.Match with / made ordinary.
func wildcard(p, s string) bool {
	ok, _ := path.Match(strings.ReplaceAll(p, "/", "\x00"), strings.ReplaceAll(s, "/", "\x00"))
	return ok
}

func (u *ui) agentPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == catalog.GlobalID {
		u.fail(w, r, http.StatusNotFound, "No such agent", "* is the global catalog, not an agent: pick an agent from the list.")
		return
	}
	l, err := u.agentLoadout(r, id)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = effectiveFormat(l.Spec.Format)
	}
	if !render.ValidFormat(format) {
		u.fail(w, r, http.StatusBadRequest, "Unknown format", "format="+format+" is not a prompt format: use pi, catalog or progressive.")
		return
	}
	budget := 0
	if b := q.Get("budget"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil || n < -1 || n > 1<<30 {
			u.fail(w, r, http.StatusBadRequest, "Bad budget", "budget="+b+" is not a budget: give a number of characters, or -1 for none.")
			return
		}
		budget = n
	}
	pg := &agentPage{agentSummary: summarize(l, u.svc.Report(r.Context())), Spec: l.Spec, PromptFormat: format, BudgetParam: q.Get("budget")}
	// The same options as every transport: the agent's usage snapshot
	// decides which skills keep their descriptions.
	text, rep, _ := u.svc.Prompt(l, catalog.PromptOptions{Format: format, Budget: budget})
	pg.Prompt, pg.Report = text, rep
	pg.Meter = rep.Chars
	if rep.Budget > 0 {
		pg.MeterMax = rep.Budget
		pg.Over = rep.Chars > rep.Budget
	}
	// The agent's diagnostics with its skills' safety findings: what its
	// summary counts (catalog.Report.ForLoadout).
	pg.Diagnostics = u.diagViewsFor(r, u.svc.Report(r.Context()).ForLoadout(l).Diagnostics, maxLineLookups)
	for _, f := range []string{render.FormatPi, render.FormatCatalog, render.FormatProgressive} {
		v := "/ui/agents/" + l.Spec.AgentID + "?format=" + f
		if pg.BudgetParam != "" {
			v += "&budget=" + pg.BudgetParam
		}
		pg.FormatLinks = append(pg.FormatLinks, formatLink{Format: f, URL: v, Current: f == format})
	}
	for _, m := range []string{modeListed, modeInline, modePreloaded, modeHidden} {
		pg.ModeCounts = append(pg.ModeCounts, modeCount{m, pg.Modes[m]})
	}
	// The sources in order, each with what it selected; preloads by path
	// after them.
	for i, src := range l.Spec.Skills {
		as := agentSource{Index: i, Available: src.Available, Inline: src.Inline, Default: src.Available == nil && src.Inline == nil, Label: sourceLabel(i, src)}
		as.Kind, as.Where = sourceKind(src)
		if src.Remote() {
			as.Ref, as.ID, as.Paths = src.RemoteRef(), src.RemoteID(), src.Paths
		}
		pg.Sources = append(pg.Sources, as)
	}
	var byPath []agentSkill
	for _, e := range l.Entries() {
		s := agentSkill{Name: e.Skill.Name, Description: e.Skill.Description, Mode: entryMode(l, e), Origin: e.Skill.OriginValue()}
		if win, ok := l.Lookup(e.Skill.Name); ok && win != e {
			s.ShadowedBy = win.Skill.Location
		}
		if e.Source >= 0 && e.Source < len(pg.Sources) {
			pg.Sources[e.Source].Skills = append(pg.Sources[e.Source].Skills, s)
		} else {
			byPath = append(byPath, s)
		}
	}
	if len(byPath) > 0 {
		pg.Sources = append(pg.Sources, agentSource{Index: len(pg.Sources), Kind: "preload", Where: "the agent's preload list (skill folders)", Skills: byPath})
	}
	u.render(w, r, "agent.html", page{Title: "Agent " + l.Spec.AgentID, Active: "agents", Data: pg})
}

// sourceKind is what kind of source an agent's skills entry is, and where
// it reads from: the folder, the plugin id, the git or index URL.
func sourceKind(src catalog.SourceSpec) (kind, where string) {
	switch {
	case src.Store:
		return "store", ""
	case src.Plugin != "":
		return "plugin", src.Plugin
	case src.Remote():
		return src.RemoteKind(), src.RemoteLocation()
	}
	return "folder", src.Root
}

// sourceLabel names an agent's source i (from 0) for people, numbered
// from 1 as the agent page lists them: "the store", "source 1: folder
// /srv/skills", "source 3: git https://example.com/s.git at main".
func sourceLabel(i int, src catalog.SourceSpec) string {
	kind, where := sourceKind(src)
	switch kind {
	case "store":
		return fmt.Sprintf("the store (source %d)", i+1)
	case "git", "index", "oci":
		s := fmt.Sprintf("source %d: %s %s", i+1, kind, where)
		if ref := src.RemoteRef(); ref != "" {
			s += " at " + ref
		}
		return s
	}
	return fmt.Sprintf("source %d: %s %s", i+1, kind, where)
}
