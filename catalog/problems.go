package catalog

import (
	"context"
	"slices"
	"sync"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// One count of problems for every surface (the UI's list, its filter, the
// skill page, the Diagnostics page, GET /v1/diagnostics and `loadout
// check`): each asks Report and counts with Tally, so none can count
// differently. See docs/problems.md.
//
// A skill's problems are the errors and warnings among the diagnostics
// whose Skill is its name: the loader's, the agents' selection ones and
// the safety and quality checks' findings over every file of the skill.
// Info lines (a description without "use when", a file SKILL.md does not
// name) are advice, not problems: they are counted apart (Tally.Infos) and
// shown, never added to the problem count.

// Tally counts diagnostics by severity.
type Tally struct {
	Errors, Warnings, Infos int
}

// Problems is what every surface shows as a count of problems: errors and
// warnings. Infos are not problems.
func (t Tally) Problems() int { return t.Errors + t.Warnings }

// Add counts d.
func (t *Tally) Add(d skill.Diagnostic) {
	switch d.Severity {
	case skill.Error:
		t.Errors++
	case skill.Warning:
		t.Warnings++
	default:
		t.Infos++
	}
}

// IsProblem reports whether d counts as a problem (Tally.Problems).
func IsProblem(d skill.Diagnostic) bool {
	return d.Severity == skill.Error || d.Severity == skill.Warning
}

// Report is a set of diagnostics counted once: in all, and by the skill
// they are about. It is immutable; its slices are shared, not copied.
type Report struct {
	// Diagnostics: every diagnostic, in the order they were given.
	Diagnostics []skill.Diagnostic
	// Safety is the safety and quality checks' findings among them (the
	// end of Diagnostics), for a caller that handles them apart.
	Safety []skill.Diagnostic
	// Total counts them all, skill or not.
	Total Tally
	// bySkill is made on the first call of Skill: loadout check never
	// asks, and at 50,000 skills with findings the map was 9 MB at its
	// peak.
	bySkillOnce sync.Once
	bySkill     map[string]Tally

	// What a per-agent report is made from (ForLoadout): the safety
	// checks' findings by skill value, and the agents' similarity ones.
	found   map[*skill.Skill][]skill.Diagnostic
	similar []skill.Diagnostic
	key     reportKey
}

// NewReport counts ds.
func NewReport(ds []skill.Diagnostic) *Report {
	r := &Report{Diagnostics: ds[:len(ds):len(ds)]}
	for _, d := range ds {
		r.Total.Add(d)
	}
	return r
}

// Skill is the tally of the diagnostics about the skill named name.
func (r *Report) Skill(name string) Tally {
	r.bySkillOnce.Do(func() {
		r.bySkill = map[string]Tally{}
		for _, d := range r.Diagnostics {
			if d.Skill != "" {
				t := r.bySkill[d.Skill]
				t.Add(d)
				r.bySkill[d.Skill] = t
			}
		}
	})
	return r.bySkill[name]
}

// Of returns the diagnostics about the skill named name, in order.
func (r *Report) Of(name string) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, d := range r.Diagnostics {
		if d.Skill == name {
			out = append(out, d)
		}
	}
	return out
}

// reportKey is what a report depends on: the catalog's snapshot (its
// generation moves with every snapshot), the diagnostics added beside it
// (only ever appended, so their count) and the safety policy.
type reportKey struct {
	gen    uint64
	added  int
	policy *safety.Policy
}

// reportCache keeps the last global report.
type reportCache struct {
	mu sync.Mutex // held while a report is made, so one request makes it
	r  *Report
}

// Report returns every diagnostic of the catalog: those added with
// AddDiagnostics, each source's, each agent's selection ones, and the
// safety and quality checks' findings with policy p (nil: the default)
// over every skill of every source. It is what GET /v1/diagnostics,
// `loadout check` and the UI show. It is made once per catalog
// generation and policy: the safety checks walk every skill, which at 400
// skills took half a second a page.
func (c *Catalog) Report(ctx context.Context, p *safety.Policy) *Report {
	c.reports.mu.Lock()
	defer c.reports.mu.Unlock()
	k := reportKey{gen: c.Generation(), added: len(c.Added()), policy: p}
	if r := c.reports.r; r != nil && r.key == k {
		return r
	}
	// Diagnostics' parts, not a copy of them: safetyRun puts them first.
	added, diags := c.Added(), c.snap.Load().diags
	all, bySkill := c.safetyRun(ctx, p, added, diags)
	base := all[:len(added)+len(diags)]
	found := all[len(base):]
	r := NewReport(all)
	r.key = k
	r.Safety = r.Diagnostics[len(base):]
	for _, d := range found {
		if d.Agent != "" {
			r.similar = append(r.similar, d)
		}
	}
	r.found = bySkill
	// A report with a skill not read (it changed under the checks) or
	// checks cut short is not kept: the next call checks again.
	if ctx.Err() == nil && !slices.ContainsFunc(found, func(d skill.Diagnostic) bool { return d.Code == CodeSafetyUnread }) {
		c.reports.r = r
	}
	return r
}

// ReportReady is Report without waiting or checking: the kept report of
// the current generation and policy p, and true; nil and false while one
// is being made or when none was made for this generation (Report makes
// it). A page that must answer at once shows what it has rather than wait
// for the checks of 10,000 skills the server starts with.
func (c *Catalog) ReportReady(p *safety.Policy) (*Report, bool) {
	if !c.reports.mu.TryLock() {
		return nil, false
	}
	defer c.reports.mu.Unlock()
	k := reportKey{gen: c.Generation(), added: len(c.Added()), policy: p}
	if r := c.reports.r; r != nil && r.key == k {
		return r, true
	}
	return nil, false
}

// ForLoadout is the report of one agent's loadout l, for a caller that
// may see that agent only: l's diagnostics, the safety findings of the
// skills it is served (the winner of each name) and its own similarity
// findings. The global loadout's is the whole report.
func (r *Report) ForLoadout(l *Loadout) *Report {
	if l.Spec.AgentID == GlobalID {
		return r
	}
	ds := l.Diagnostics()
	for _, e := range l.Entries() {
		if w, ok := l.Lookup(e.Skill.Name); ok && w == e {
			ds = append(ds, r.found[e.Skill]...)
		}
	}
	for _, d := range r.similar {
		if d.Agent == l.Spec.AgentID {
			ds = append(ds, d)
		}
	}
	out := NewReport(ds)
	out.key = r.key
	return out
}
