package catalog

import (
	"context"
	"maps"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// SourceSummary is one source of the catalog as last read: what it is,
// how many skills it gave and how many problems it has.
type SourceSummary struct {
	// Kind is folder, store, plugin, git or index.
	Kind string
	// ID names it: the folder's path, "store", the plugin's id, or the
	// remote source's id.
	ID string
	// Skills is how many skills it gave (gated ones not counted).
	Skills int
	// Errors and Warnings count its diagnostics (those of its read, and
	// the safety checks' findings over its skills).
	Errors, Warnings int
}

// Sources lists every source the catalog reads, in the global catalog's
// order, with its problems counted: the diagnostics of its last read and
// the findings of the safety checks with policy p (Safety: the skills not
// checked since they changed are read now).
func (c *Catalog) Sources(ctx context.Context, p *safety.Policy) []SourceSummary {
	found := c.SafetyFindings(ctx, p)
	snap := c.snap.Load()
	var out []SourceSummary
	for _, src := range snap.global.Spec.Skills {
		res, ok := snap.results[src.key()]
		if !ok {
			continue
		}
		s := SourceSummary{Skills: len(res.Skills)}
		switch {
		case src.Store:
			s.Kind, s.ID = "store", "store"
		case src.Plugin != "":
			s.Kind, s.ID = "plugin", src.Plugin
		case src.Git != "":
			s.Kind, s.ID = "git", src.RemoteID()
		case src.Index != "":
			s.Kind, s.ID = "index", src.RemoteID()
		default:
			s.Kind, s.ID = "folder", absRoot(src.Root)
		}
		count := func(d skill.Diagnostic) {
			switch d.Severity {
			case skill.Error:
				s.Errors++
			case skill.Warning:
				s.Warnings++
			}
		}
		for _, d := range res.Diagnostics {
			count(d)
		}
		for _, sk := range res.Skills {
			for _, d := range found[sk] {
				count(d)
			}
		}
		out = append(out, s)
	}
	return out
}

// SafetyFindings runs Safety with policy p and returns its findings by
// skill value, for the skills that have some (not those of agents, such
// as descriptions too alike). The map is the caller's.
func (c *Catalog) SafetyFindings(ctx context.Context, p *safety.Policy) map[*skill.Skill][]skill.Diagnostic {
	c.Safety(ctx, p) // fills the cache read below
	c.safety.mu.Lock()
	defer c.safety.mu.Unlock()
	if c.safety.policy != p {
		return nil // changed meanwhile: the findings are another policy's
	}
	return maps.Clone(c.safety.found)
}

// SafetyFindingsReady is SafetyFindings without waiting or checking: the
// findings of the last complete run, if it was over the current snapshot
// with policy p, and true; nil and false while a run is under way or when
// none was made over this snapshot (SafetyFindings makes one). A page
// that must answer at once shows what it has rather than wait seconds for
// the checks of 10,000 skills the server starts with.
func (c *Catalog) SafetyFindingsReady(p *safety.Policy) (map[*skill.Skill][]skill.Diagnostic, bool) {
	if !c.safety.mu.TryLock() {
		return nil, false
	}
	defer c.safety.mu.Unlock()
	if c.safety.policy != p || c.safety.lastSnap == nil || c.safety.lastSnap != c.snap.Load() {
		return nil, false
	}
	return maps.Clone(c.safety.found), true
}
