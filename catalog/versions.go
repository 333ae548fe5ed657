package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/loadout/loadout/skill"
)

// Exact versions per agent. An agent is served the published version of
// each stored skill unless a pin says otherwise: an exact version, kept
// through every later publish, or "latest" (drafts included). Pins come
// from the agent's "versions" in the config and from Options.Pins (the
// store's, set through the API), which win.

// VersionPin is the version of one stored skill an agent is served:
// Version when set, the latest version when Latest, else the published one.
type VersionPin struct {
	Version int
	Latest  bool
}

// String is the pin as the config writes it: "3", "latest" or "published".
func (v VersionPin) String() string {
	switch {
	case v.Version > 0:
		return strconv.Itoa(v.Version)
	case v.Latest:
		return "latest"
	}
	return "published"
}

// ParseVersionPin reads a pin: a version number (1, 2, …), "published" or
// "latest".
func ParseVersionPin(s string) (VersionPin, error) {
	switch s {
	case "published":
		return VersionPin{}, nil
	case "latest":
		return VersionPin{Latest: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return VersionPin{}, fmt.Errorf("%q: give a version number (1, 2, …), \"published\" or \"latest\"", s)
	}
	return VersionPin{Version: n}, nil
}

// MarshalJSON writes a number, or "published" or "latest".
func (v VersionPin) MarshalJSON() ([]byte, error) {
	if v.Version > 0 {
		return []byte(strconv.Itoa(v.Version)), nil
	}
	return json.Marshal(v.String())
}

// UnmarshalJSON reads a number, or "published" or "latest".
func (v *VersionPin) UnmarshalJSON(data []byte) error {
	s := strings.TrimSpace(string(data))
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	p, err := ParseVersionPin(s)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// VersionProvider is a store Provider that can serve one skill at an
// exact version (store.Provider is one): version 0 is the latest. A
// withdrawn skill is still served, so pins of it keep working. sk is nil
// when there is no such skill or version.
type VersionProvider interface {
	SkillAt(ctx context.Context, name string, version int) (*skill.Skill, []skill.Diagnostic, error)
}

// CodeVersionPin reports a pin that cannot be served (no such skill or
// version, or a store that keeps no versions); the agent is served what
// it would be without the pin.
const CodeVersionPin = "version-pin"

// pinsOf is the pins of every agent: the config's, with Options.Pins over
// them. Agents without pins are left out.
func (c *Catalog) pinsOf(ctx context.Context) map[string]map[string]VersionPin {
	out := map[string]map[string]VersionPin{}
	for _, spec := range c.specs {
		if len(spec.Versions) > 0 {
			out[spec.AgentID] = maps.Clone(spec.Versions)
		}
	}
	if c.opt.Pins != nil {
		for agent, pins := range c.opt.Pins(ctx) {
			for name, p := range pins {
				if out[agent] == nil {
					out[agent] = map[string]VersionPin{}
				}
				out[agent][name] = p
			}
		}
	}
	for agent, pins := range out {
		for name, p := range pins {
			if p == (VersionPin{}) {
				delete(pins, name) // published: the default
			}
		}
		if len(pins) == 0 {
			delete(out, agent)
		}
	}
	return out
}

// pinned replaces, in the skills a store source gave agent, each pinned
// skill with the version its pin names (adding it when the source left it
// out: a withdrawn skill, or one with nothing published). A pin that
// cannot be served is reported and leaves the skill as it was.
func (c *Catalog) pinned(agent string, skills []*skill.Skill) ([]*skill.Skill, []skill.Diagnostic) {
	pins := c.curPins[agent]
	if len(pins) == 0 {
		return skills, nil
	}
	vp, ok := c.opt.Store.(VersionProvider)
	var diags []skill.Diagnostic
	for _, name := range sortedKeys(pins) {
		p := pins[name]
		if !ok {
			diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeVersionPin, Skill: name, Agent: agent, Field: "versions",
				Message: fmt.Sprintf("agent %s pins %q to %s, but the store keeps no versions: the published one is served", agent, name, p)})
			continue
		}
		sk, ds, err := vp.SkillAt(c.ctx, name, p.Version)
		if err == nil && sk == nil {
			err = fmt.Errorf("no such skill or version")
		}
		if err != nil {
			diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: CodeVersionPin, Skill: name, Agent: agent, Field: "versions",
				Message: fmt.Sprintf("agent %s pins %q to %s, which cannot be served (%v): it is served what it would be without the pin", agent, name, p, err)})
			continue
		}
		diags = append(diags, ds...)
		found := false
		for i, s := range skills {
			if s.Name == name {
				skills[i], found = sk, true
			}
		}
		if !found {
			skills = append(skills, sk)
		}
	}
	return skills, diags
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// samePins reports whether two agents' pins are equal.
func samePins(a, b map[string]VersionPin) bool { return maps.Equal(a, b) }

// Pins returns the version pins the current loadouts were built with, by
// agent then skill (the config's and Options.Pins'); agents following
// "published" for everything are left out.
func (c *Catalog) Pins() map[string]map[string]VersionPin {
	out := map[string]map[string]VersionPin{}
	for agent, pins := range c.snap.Load().pins {
		out[agent] = maps.Clone(pins)
	}
	return out
}

// ConfigPins returns the pins of the agents' "versions" in the config.
func (c *Catalog) ConfigPins() map[string]map[string]VersionPin {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]VersionPin{}
	for _, spec := range c.specs {
		if len(spec.Versions) > 0 {
			out[spec.AgentID] = maps.Clone(spec.Versions)
		}
	}
	return out
}
