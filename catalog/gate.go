package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// CodeSafetyGated: a skill of a gated source kind (Options.Gate) that is
// not served, because the safety policy refuses a finding of it. The
// findings follow it, one diagnostic each.
const CodeSafetyGated = "safety-gated"

// Gate makes the safety policy refuse the skills of local sources, as it
// refuses store writes and remote snapshots: a skill of a kind in Kinds
// ("folder", "plugin") with a finding Policy refuses is left out of every
// loadout, and reported.
type Gate struct {
	Policy *safety.Policy
	Kinds  []string
}

// gateCache keeps each gated source's verdicts by skill value, so a
// reload checks only the skills that changed; it is used under Catalog.mu.
type gateCache struct {
	policy *safety.Policy
	bySrc  map[string]map[*skill.Skill][]skill.Diagnostic // source key -> skill -> refused findings (nil: none)
}

// gates reports whether skills of kind are gated.
func (c *Catalog) gates(kind string) bool {
	return c.opt.Gate != nil && slices.Contains(c.opt.Gate.Kinds, kind)
}

// gate returns res without its skills the policy refuses, each reported
// (CodeSafetyGated and its findings), when kind is gated; else res.
func (c *Catalog) gate(key, kind string, res *source.Result) *source.Result {
	if !c.gates(kind) {
		return res
	}
	p := c.opt.Gate.Policy
	if c.gated.policy != p || c.gated.bySrc == nil {
		c.gated = gateCache{policy: p, bySrc: map[string]map[*skill.Skill][]skill.Diagnostic{}}
	}
	old := c.gated.bySrc[key]
	now := make(map[*skill.Skill][]skill.Diagnostic, len(res.Skills))
	var todo []*skill.Skill
	for _, sk := range res.Skills {
		if v, ok := old[sk]; ok {
			now[sk] = v
		} else {
			todo = append(todo, sk)
		}
	}
	for i, v := range refusedAll(todo, p) {
		now[todo[i]] = v
	}
	out := &source.Result{Diagnostics: res.Diagnostics}
	keep := make(map[*skill.Skill][]skill.Diagnostic, len(now))
	for i, sk := range res.Skills {
		v := now[sk]
		if !unread(v) {
			keep[sk] = v // an unread skill is checked again next time
		}
		if len(v) == 0 {
			out.Skills = append(out.Skills, sk)
			if i < len(res.Dirs) {
				out.Dirs = append(out.Dirs, res.Dirs[i])
			}
			continue
		}
		out.Diagnostics = append(out.Diagnostics, gatedDiag(sk, kind, v))
		out.Diagnostics = append(out.Diagnostics, v...)
	}
	c.gated.bySrc[key] = keep
	if len(out.Skills) == len(res.Skills) {
		return res
	}
	return out
}

// gateRefuses reports whether the gate refuses one skill of a gated kind
// (a folder skill read again after an edit).
func (c *Catalog) gateRefuses(sk *skill.Skill) bool {
	if !c.gates(sk.Origin.Kind) {
		return false
	}
	v, _ := checkSkill(sk, c.opt.Gate.Policy, nil, nil, nil, nil)
	return len(refusedOf(v, c.opt.Gate.Policy)) > 0
}

func gatedDiag(sk *skill.Skill, kind string, refused []skill.Diagnostic) skill.Diagnostic {
	codes := make([]string, 0, len(refused))
	for _, d := range refused {
		if !slices.Contains(codes, d.Code) {
			codes = append(codes, d.Code)
		}
	}
	return skill.Diagnostic{Severity: skill.Error, Code: CodeSafetyGated, Skill: sk.Name, Path: sk.Location,
		Message: fmt.Sprintf("skill %q is not served: the safety policy refuses its findings (%s), and \"safety\": {\"gate\"} names %q sources; fix the files, or accept a finding with an allow entry in the config's \"safety\" policy",
			sk.Name, strings.Join(codes, ", "), kind)}
}

// unread reports whether a verdict is that the skill could not be read.
func unread(v []skill.Diagnostic) bool {
	return len(v) > 0 && v[0].Code == CodeSafetyUnread
}

// refusedOf are the findings p refuses; a skill that could not be read is
// refused (its one diagnostic says why), as a gate fails closed.
func refusedOf(ds []skill.Diagnostic, p *safety.Policy) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, d := range ds {
		if d.Code == CodeSafetyUnread || p.Refuses(d) {
			out = append(out, d)
		}
	}
	return out
}

// refusedAll checks skills on every core and returns each one's refused
// findings.
func refusedAll(sks []*skill.Skill, p *safety.Policy) [][]skill.Diagnostic {
	out := make([][]skill.Diagnostic, len(sks))
	checkAll(context.Background(), sks, p, nil, nil, func(i int, ds []skill.Diagnostic) { out[i] = refusedOf(ds, p) })
	return out
}
