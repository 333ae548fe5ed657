package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/loadout/loadout/skill"
)

// StatusBlocked: the skill is blocked by the kill switch (SetBlocks); it
// is not listed, and its loads and reads are refused, until the block is
// removed.
const StatusBlocked = "blocked"

// CodeBlocked is a blocked load's or read's code.
const CodeBlocked = "blocked"

// Block is one rule of the kill switch as the catalog applies it: a
// skill by name (every version), one version of it (Version: a stored
// skill's version number; Digest: its bundle digest, ContentDigest), or
// every skill of a source (Source: a SourceSummary's ID).
type Block struct {
	ID      string
	Skill   string
	Version int
	Digest  string
	Source  string
	Reason  string
}

// BlockedSkill is a skill a loadout would have selected but a block
// leaves out.
type BlockedSkill struct {
	Skill *skill.Skill
	Block Block
	// source is the index of the agent's skills entry it came from (-1:
	// preloaded by path).
	source int
}

// blockSet is the catalog's blocks, indexed by what they name.
type blockSet struct {
	all      []Block
	byName   map[string][]Block
	bySource map[string][]Block
}

// SetBlocks replaces the kill switch's blocks. When they differ from the
// ones in force, every loadout is built again from the sources as last
// read (nothing is read again), so that a blocked skill leaves every
// listing, search and lookup at once, and an unblocked one comes back
// exactly as it was. It reports whether anything changed.
func (c *Catalog) SetBlocks(ctx context.Context, blocks []Block) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.blocks.Load()
	if cur != nil && slices.Equal(cur.all, blocks) || cur == nil && len(blocks) == 0 {
		return false
	}
	bs := &blockSet{all: slices.Clone(blocks), byName: map[string][]Block{}, bySource: map[string][]Block{}}
	for _, b := range blocks {
		if b.Source != "" {
			bs.bySource[b.Source] = append(bs.bySource[b.Source], b)
		} else {
			bs.byName[b.Skill] = append(bs.byName[b.Skill], b)
		}
	}
	c.blocks.Store(bs)
	prev := c.snap.Load()
	if prev == nil {
		return true
	}
	// Only the skills of the names whose blocks changed are made again
	// (apply patches each loadout, as for a write to one stored skill):
	// at 10,000 skills, rebuilding every loadout took 270 ms a change.
	// A change to a source's block touches all its skills: everything is
	// built again.
	var old []Block
	if cur != nil {
		old = cur.all
	}
	names := map[string]bool{}
	for _, b := range symmetricDiff(old, blocks) {
		if b.Source != "" {
			c.apply(ctx, nil, maps.Clone(prev.results), nil)
			return true
		}
		names[b.Skill] = true
	}
	changed := map[string]map[string]*skill.Skill{}
	for key, res := range prev.results {
		for _, sk := range res.Skills {
			if names[sk.Name] {
				if changed[key] == nil {
					changed[key] = map[string]*skill.Skill{}
				}
				changed[key][sk.Name] = sk
			}
		}
	}
	if len(changed) == 0 {
		return true // no skill of those names is read: nothing to build
	}
	c.apply(ctx, prev, maps.Clone(prev.results), changed)
	return true
}

// symmetricDiff returns the blocks in one of a and b but not the other.
func symmetricDiff(a, b []Block) []Block {
	var out []Block
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// Blocks returns the blocks in force.
func (c *Catalog) Blocks() []Block {
	if bs := c.blocks.Load(); bs != nil {
		return slices.Clone(bs.all)
	}
	return nil
}

// blockOf returns the block that leaves sk out when source i of spec
// selects it (i is -1 for a skill preloaded by path), or nil.
func (c *Catalog) blockOf(spec AgentSpec, i int, sk *skill.Skill) *Block {
	bs := c.blocks.Load()
	if bs == nil {
		return nil
	}
	var src string
	if i >= 0 && i < len(spec.Skills) {
		src = spec.Skills[i].SourceID()
	} else if o := sk.OriginValue(); o.Kind == "folder" {
		src = absRoot(o.Root)
	}
	if bl := bs.bySource[src]; len(bl) > 0 && src != "" {
		return &bl[0]
	}
	for j, b := range bs.byName[sk.Name] {
		switch {
		case b.Version > 0:
			if o := sk.OriginValue(); o.Kind != "store" || o.Version != b.Version {
				continue
			}
		case b.Digest != "":
			if sk.ContentDigest() != b.Digest {
				continue
			}
		}
		return &bs.byName[sk.Name][j]
	}
	return nil
}

// SourceID is the source's id as SourceSummary names it: "store", the
// plugin's id, the remote source's id, or the folder's absolute path.
func (s SourceSpec) SourceID() string {
	switch {
	case s.Store:
		return "store"
	case s.Plugin != "":
		return s.Plugin
	case s.Remote():
		return s.RemoteID()
	}
	return absRoot(s.Root)
}

// noteBlocked records that a block leaves sk out of l (the first block
// of a name is kept).
func (l *Loadout) noteBlocked(sk *skill.Skill, b *Block, source int) {
	if l.blocked == nil {
		l.blocked = map[string]BlockedSkill{}
	}
	if _, ok := l.blocked[sk.Name]; !ok {
		l.blocked[sk.Name] = BlockedSkill{Skill: sk, Block: *b, source: source}
	}
}

// Blocked lists the skills the agent would have but for a block, by name,
// leaving out names another source serves; the UI marks them.
func (l *Loadout) Blocked() []BlockedSkill {
	out := make([]BlockedSkill, 0, len(l.blocked))
	for name, b := range l.blocked {
		if _, served := l.byName[name]; !served {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b BlockedSkill) int {
		if a.Skill.Name < b.Skill.Name {
			return -1
		}
		if a.Skill.Name > b.Skill.Name {
			return 1
		}
		return 0
	})
	return out
}

// BlockedName returns the block that leaves the skill called name out of
// the agent's loadout, when no other source serves that name.
func (l *Loadout) BlockedName(name string) (BlockedSkill, bool) {
	if _, served := l.byName[name]; served {
		return BlockedSkill{}, false
	}
	b, ok := l.blocked[name]
	return b, ok
}

// BlockedText is the refusal of a blocked skill, for a model and for
// people: what is blocked, why, and how to lift it.
func BlockedText(name string, b Block) string {
	what := "Skill " + fmt.Sprintf("%q", name)
	switch {
	case b.Source != "":
		what += fmt.Sprintf(" (from source %q)", b.Source)
	case b.Version > 0:
		what += fmt.Sprintf(" (version %d)", b.Version)
	case b.Digest != "":
		what += " (" + b.Digest + ")"
	}
	return fmt.Sprintf("%s is blocked by an operator: %q. It is not served until the block is removed (block %s: `loadout unblock %s`, or DELETE /v1/blocks/%s). Do not use it; tell the user.",
		what, b.Reason, b.ID, b.ID, b.ID)
}
