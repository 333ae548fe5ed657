package webui

import (
	"fmt"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// The Agents tab: for every agent the caller may see, whether it has this
// skill and in which mode (listed, inline, preloaded, hidden), or why not
// (no source of the agent holds it, its patterns do not select it, another
// source's skill of the same name wins), from the agents' loadouts as the
// service gives them.

type agentsData struct {
	Name   string
	Err    string
	Agents []agentMode
	// Pins (stored skills, reviews.go): the version each agent is served
	// and its pin, with a form to set it.
	Pins *pinsData
}

// agentMode is one agent's view of the skill.
type agentMode struct {
	Agent, Display string
	// Mode is listed, inline, preloaded, hidden, shadowed or absent.
	Mode   string
	Why    string
	Source string // the agent's source the skill comes through
	// Served is the stored version the agent is served (0: none), Pin
	// its pin ("published", "latest" or a number).
	Served int
	Pin    string
}

func (u *ui) tabAgents(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	p := principal(r)
	d := &agentsData{Name: sp.Name}
	var ids []string
	if canRead(p) {
		ids = u.svc.Catalog().AgentIDs()
	} else {
		for _, s := range p.Scopes {
			if id, ok := strings.CutPrefix(s, "agent:"); ok {
				ids = append(ids, id)
			}
		}
	}
	for _, id := range ids {
		l, err := u.agentLoadout(r, id)
		if err != nil {
			d.Agents = append(d.Agents, agentMode{Agent: id, Mode: "absent", Why: service.AsError(err).Message})
			continue
		}
		d.Agents = append(d.Agents, modeIn(l, sp.Skill))
	}
	u.agentPins(r, sp, d)
	if len(ids) == 0 {
		d.Err = "No agents are configured: every skill is served to the global catalog only. Add agents to the config file to give each its own loadout."
	}
	return u.tabFragment(w, r, "frag_agents.html", d)
}

// modeIn is how loadout l has sk (the global catalog's skill of a name).
func modeIn(l *catalog.Loadout, sk *skill.Skill) agentMode {
	m := agentMode{Agent: l.Spec.AgentID, Display: l.Spec.DisplayName}
	e, ok := l.Lookup(sk.Name)
	if ok && e.Skill.Location != sk.Location {
		m.Mode = "other"
		m.Why = fmt.Sprintf("this agent gets the skill of this name from %s (%s), not this one", sourceText(e.Skill.OriginValue()), e.Skill.Location)
		m.Source = sourceOf(l, e)
		for _, x := range l.Entries() {
			if x.Skill.Location == sk.Location {
				m.Mode = "shadowed"
				m.Why = fmt.Sprintf("selected through %s, but shadowed: %s comes first and its %s wins the name", sourceOf(l, x), sourceOf(l, e), e.Skill.Location)
				break
			}
		}
		return m
	}
	if ok {
		m.Source = sourceOf(l, e)
		switch {
		case e.Inline && (e.Source < 0 || slices.Contains(l.Spec.Preload, sk.Name)):
			m.Mode, m.Why = "preloaded", "named in the agent's preload list: its whole text is in the prompt"
		case e.Inline:
			m.Mode, m.Why = "inline", "matched by an inline pattern: its whole text is in the prompt"
		case sk.Hidden():
			m.Mode, m.Why = "hidden", "selected, but its frontmatter sets disable-model-invocation: left out of the listing; it can still be loaded by name"
		default:
			m.Mode, m.Why = "listed", "in the agent's skill listing"
		}
		return m
	}
	// Not selected: does a source of the agent hold it?
	m.Mode = "absent"
	for i, src := range l.Spec.Skills {
		if !holds(src, sk) {
			continue
		}
		avail := src.Available
		if avail == nil && src.Inline == nil {
			avail = []string{"*"}
		}
		m.Source = sourceLabel(i, src)
		m.Why = fmt.Sprintf("%s holds it, but its patterns do not select it (available: %s; inline: %s)", sourceLabel(i, src), patterns(avail), patterns(src.Inline))
		return m
	}
	var srcs []string
	for i, src := range l.Spec.Skills {
		srcs = append(srcs, sourceLabel(i, src))
	}
	if len(srcs) == 0 {
		m.Why = "the agent has no sources"
	} else {
		m.Why = "no source of this agent holds it (its sources: " + strings.Join(srcs, "; ") + ")"
	}
	return m
}

func patterns(p []string) string {
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, ", ")
}

// sourceOf names the agent's source an entry comes through.
func sourceOf(l *catalog.Loadout, e *catalog.Entry) string {
	if e.Source < 0 || e.Source >= len(l.Spec.Skills) {
		return "the agent's preload list (a skill folder by path)"
	}
	return sourceLabel(e.Source, l.Spec.Skills[e.Source])
}

// holds reports whether source src serves skill sk.
func holds(src catalog.SourceSpec, sk *skill.Skill) bool {
	o := sk.Origin
	switch {
	case src.Store:
		return o.Kind == "store"
	case src.Plugin != "":
		return o.Kind == "plugin" && o.Plugin == src.Plugin
	case src.Remote():
		return o.Kind == src.RemoteKind() && o.Root == src.RemoteLocation() && o.Ref == src.RemoteRef()
	}
	if o.Kind != "folder" {
		return false
	}
	root, err := filepath.Abs(expandHome(src.Root))
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return o.Root == root || strings.HasPrefix(sk.Dir, root+string(filepath.Separator))
}

// expandHome replaces a leading ~ with the user's home folder, as the
// catalog does with a source's root.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
