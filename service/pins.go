package service

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/store"
)

// Exact versions per agent: pins set through the API are kept in the
// store (so they survive restarts and every instance shares them) and win
// over the config's "versions". See catalog/versions.go.

// SetPin pins agent's view of the stored skill name to pin (reviewer role
// for the skill: moving what an agent is served is a publish for that
// agent). A withdrawn skill takes no new exact pin.
func (s *Service) SetPin(ctx context.Context, p Principal, agent, name string, pin catalog.VersionPin) (store.Pin, error) {
	d, err := s.drafts()
	if err != nil {
		return store.Pin{}, err
	}
	rec, err := s.opt.Store.Get(ctx, name)
	if err != nil {
		return store.Pin{}, AsError(err)
	}
	if !p.Allows(RoleReviewer, name, rec.Tags) {
		return store.Pin{}, errorf(CodeForbidden, "pinning %q needs the reviewer role for it", name)
	}
	if _, ok := s.cat.Agent(agent); !ok || agent == catalog.GlobalID {
		return store.Pin{}, errorf(CodeNotFound, "no agent %q: agents are the config's (%v)", agent, s.cat.AgentIDs())
	}
	was := s.cat.Pins()[agent][name]
	sp := store.Pin{Agent: agent, Skill: name, Follow: store.FollowPublished, Actor: actorLabel(p)}
	switch {
	case pin.Version > 0:
		sp.Follow, sp.Version = store.FollowVersion, pin.Version
	case pin.Latest:
		sp.Follow = store.FollowLatest
	}
	got, err := d.SetPin(ctx, sp)
	if err != nil {
		return store.Pin{}, AsError(err)
	}
	if err := s.audit(ctx, p, store.AuditRecord{Action: "pin", Target: "skill:" + name,
		Detail: fmt.Sprintf("agent %s: %s -> %s", agent, was, pin)}); err != nil {
		s.log.Warn("audit", "action", "pin", "err", err)
	}
	s.Refresh(ctx, nil, "pin "+agent+" "+name)
	return got, nil
}

func actorLabel(p Principal) string {
	if p.Name != "" {
		return p.Name
	}
	return p.TokenID
}

// PendingPin is an agent pinned to a version older than the published one.
type PendingPin struct {
	Agent     string `json:"agent"`
	Skill     string `json:"skill"`
	Version   int    `json:"version"`
	Published int    `json:"published"`
	// From says where the pin is set: "config" or "api".
	From string `json:"from"`
}

// PendingPins lists the agents whose exact pins lag the published
// version ("update pending"), by agent then skill.
func (s *Service) PendingPins(ctx context.Context, p Principal) ([]PendingPin, error) {
	if !p.Allows(RoleViewer, "", nil) {
		return nil, errorf(CodeForbidden, "listing pins needs the viewer role")
	}
	if s.opt.Store == nil {
		return []PendingPin{}, nil
	}
	cfg := s.cat.ConfigPins()
	out := []PendingPin{}
	pins := s.cat.Pins()
	for _, agent := range sortedAgents(pins) {
		for name, pin := range pins[agent] {
			if pin.Version == 0 {
				continue
			}
			rec, err := s.opt.Store.Get(ctx, name)
			if store.ErrorCode(err) == store.NotFound {
				continue
			}
			if err != nil {
				return nil, AsError(err)
			}
			if rec.Published > pin.Version {
				from := "api"
				if c, ok := cfg[agent][name]; ok && c == pin {
					from = "config"
				}
				out = append(out, PendingPin{Agent: agent, Skill: name, Version: pin.Version, Published: rec.Published, From: from})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Agent != out[j].Agent {
			return out[i].Agent < out[j].Agent
		}
		return out[i].Skill < out[j].Skill
	})
	return out, nil
}

func sortedAgents(m map[string]map[string]catalog.VersionPin) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AdvancePins moves the pending pins (of agent and skill when set; all of
// them when both are "") to the published version, each kept as an exact
// pin. It returns the pins it moved.
func (s *Service) AdvancePins(ctx context.Context, p Principal, agent, name string) ([]PendingPin, error) {
	pending, err := s.PendingPins(ctx, p)
	if err != nil {
		return nil, err
	}
	moved := []PendingPin{}
	for _, pp := range pending {
		if agent != "" && pp.Agent != agent || name != "" && pp.Skill != name {
			continue
		}
		if _, err := s.SetPin(ctx, p, pp.Agent, pp.Skill, catalog.VersionPin{Version: pp.Published}); err != nil {
			return moved, err
		}
		moved = append(moved, pp)
	}
	return moved, nil
}

// Withdraw withdraws a stored skill (or restores it, with withdrawn
// false): it leaves every listing and takes no new exact pins, while
// existing pins keep being served until they are moved (reviewer role).
func (s *Service) Withdraw(ctx context.Context, p Principal, name string, withdrawn bool) error {
	d, err := s.drafts()
	if err != nil {
		return err
	}
	rec, err := s.opt.Store.Get(ctx, name)
	if err != nil {
		return AsError(err)
	}
	if !p.Allows(RoleReviewer, name, rec.Tags) {
		return errorf(CodeForbidden, "withdrawing %q needs the reviewer role for it", name)
	}
	if err := d.Withdraw(ctx, name, withdrawn); err != nil {
		return AsError(err)
	}
	action := "withdraw"
	if !withdrawn {
		action = "unwithdraw"
	}
	if err := s.audit(ctx, p, store.AuditRecord{Action: action, Target: "skill:" + name, Before: rec.Digest, After: rec.Digest}); err != nil {
		s.log.Warn("audit", "action", action, "err", err)
	}
	s.RefreshStored(ctx, action+" "+name, name)
	return nil
}

// VersionUse is one agent's use of one version of a skill.
type VersionUse struct {
	Agent   string `json:"agent"`
	Version int    `json:"version"`
	// How: "lists" (the agent's listing serves this version), "pins"
	// (an exact pin, or latest) and "loaded" (a receipt of a load or read
	// within the window).
	How []string `json:"how"`
	// Loads counts the loads and reads of the window; LastLoaded is the
	// newest.
	Loads      int64     `json:"loads,omitempty"`
	LastLoaded time.Time `json:"lastLoaded,omitzero"`
}

// SkillUsage is where a stored skill is used, per agent and version.
type SkillUsage struct {
	Skill     string       `json:"skill"`
	Published int          `json:"published"`
	Latest    int          `json:"latest"`
	Withdrawn bool         `json:"withdrawn"`
	Since     time.Time    `json:"since"`
	Uses      []VersionUse `json:"uses"`
}

// UsageWindow is how far back Usage looks for loads.
const UsageWindow = 30 * 24 * time.Hour

// WhereUsed answers "where is this version used": every agent that lists,
// pins or lately loaded each version of the stored skill name.
func (s *Service) WhereUsed(ctx context.Context, p Principal, name string) (*SkillUsage, error) {
	if s.opt.Store == nil {
		return nil, errorf(CodeNotFound, "no stored skill %q (this server has no store)", name)
	}
	rec, err := s.opt.Store.Get(ctx, name)
	if err != nil {
		return nil, AsError(err)
	}
	if !p.Allows(RoleViewer, name, rec.Tags) {
		return nil, errorf(CodeForbidden, "this needs the viewer role for %q", name)
	}
	vs, err := s.opt.Store.Versions(ctx, name)
	if err != nil {
		return nil, AsError(err)
	}
	byDigest := map[string]int{}
	for _, v := range vs {
		if _, ok := byDigest[v.Digest]; !ok {
			byDigest[v.Digest] = v.Version // the newest version of those bytes
		}
	}
	u := &SkillUsage{Skill: name, Published: rec.Published, Latest: rec.Version, Withdrawn: rec.Withdrawn,
		Since: time.Now().Add(-UsageWindow).UTC(), Uses: []VersionUse{}}
	type key struct {
		agent   string
		version int
	}
	uses := map[key]*VersionUse{}
	get := func(agent string, v int) *VersionUse {
		k := key{agent, v}
		if uses[k] == nil {
			uses[k] = &VersionUse{Agent: agent, Version: v}
		}
		return uses[k]
	}
	pins := s.cat.Pins()
	for _, agent := range s.cat.AgentIDs() {
		l, ok := s.cat.Agent(agent)
		if !ok {
			continue
		}
		if e, ok := l.Lookup(name); ok && e.Skill.Origin != nil && e.Skill.Origin.Kind == "store" {
			u := get(agent, e.Skill.Origin.Version)
			u.How = append(u.How, "lists")
			if pin, ok := pins[agent][name]; ok && pin != (catalog.VersionPin{}) {
				u.How = append(u.How, "pins")
			}
		}
	}
	if s.opt.Server != nil {
		s.rcpt.flush()
		rs, err := s.opt.Server.Receipts(ctx, store.ReceiptQuery{Skill: name, Since: u.Since, Limit: 10000})
		if err != nil {
			return nil, AsError(err)
		}
		for _, r := range rs {
			v, ok := byDigest[r.Digest]
			if r.Source != "store" || !ok || r.Outcome != "ok" {
				continue
			}
			vu := get(r.Agent, v)
			if vu.Loads == 0 {
				vu.How = append(vu.How, "loaded")
			}
			vu.Loads += max(r.Count, 1)
			if r.Time.After(vu.LastLoaded) {
				vu.LastLoaded = r.Time
			}
		}
	}
	for _, vu := range uses {
		u.Uses = append(u.Uses, *vu)
	}
	sort.Slice(u.Uses, func(i, j int) bool {
		if u.Uses[i].Agent != u.Uses[j].Agent {
			return u.Uses[i].Agent < u.Uses[j].Agent
		}
		return u.Uses[i].Version > u.Uses[j].Version
	})
	return u, nil
}

// StorePins is catalog.Options.Pins for a store that keeps pins: the
// pins set through the API. When the store cannot be read, the last pins
// read are kept, so a failed read never moves a pinned agent.
func StorePins(st store.Store) func(ctx context.Context) map[string]map[string]catalog.VersionPin {
	d, ok := st.(store.Drafts)
	if !ok {
		return nil
	}
	var mu sync.Mutex
	var last map[string]map[string]catalog.VersionPin
	return func(ctx context.Context) map[string]map[string]catalog.VersionPin {
		mu.Lock()
		defer mu.Unlock()
		ps, err := d.Pins(ctx, "")
		if err != nil {
			return last
		}
		out := map[string]map[string]catalog.VersionPin{}
		for _, p := range ps {
			if out[p.Agent] == nil {
				out[p.Agent] = map[string]catalog.VersionPin{}
			}
			switch p.Follow {
			case store.FollowVersion:
				out[p.Agent][p.Skill] = catalog.VersionPin{Version: p.Version}
			case store.FollowLatest:
				out[p.Agent][p.Skill] = catalog.VersionPin{Latest: true}
			default: // published, over the config's pin
				out[p.Agent][p.Skill] = catalog.VersionPin{}
			}
		}
		last = out
		return out
	}
}
