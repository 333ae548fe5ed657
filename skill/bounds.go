package skill

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Frontmatter bounds. Every SKILL.md that loadout reads leniently (folder
// discovery, store writes, imports, plugins) goes through Parse, which
// checks them before any work that could grow past them: the size before
// the YAML decoder runs, then the depth and the expanded size on the
// decoded tree, counted without expanding anything, before a single value
// is built. YAML aliases (*name) repeat what an anchor (&name) holds, so a
// few hundred bytes of nested aliases can stand for gigabytes; these
// bounds are what make that impossible. They are far above what any real
// frontmatter needs (a description is at most 1,024 characters).
const (
	// MaxFrontmatterBytes bounds the text between the two --- fences.
	MaxFrontmatterBytes = 64 << 10
	// MaxFrontmatterDepth bounds how deeply lists and mappings nest, aliases
	// expanded; the top-level mapping is depth 1, so "metadata: {a: b}" is 2.
	MaxFrontmatterDepth = 32
	// MaxFrontmatterAliases bounds how many times expansion passes through
	// an alias, each use counted, nested ones included.
	MaxFrontmatterAliases = 1000
	// MaxFrontmatterExpanded bounds the size of the frontmatter with every
	// alias expanded: one unit per node plus the bytes of its text. Without
	// aliases it stays under twice the text's size, so it binds only
	// frontmatter that aliases blow up.
	MaxFrontmatterExpanded = 4 * MaxFrontmatterBytes
)

// boundError is a frontmatter over one of the bounds; code is the
// diagnostic code.
type boundError struct {
	code string
	msg  string
}

func (e *boundError) Error() string { return e.msg }

// extent is what a node would be with every alias in it expanded: its size
// (nodes plus text bytes), the alias uses it holds and its height (1 for a
// list or mapping of scalars, 0 for a scalar).
type extent struct {
	size, aliases, height int64
}

// saturate keeps sums far from overflow: 10 aliases of 10 aliases, a
// hundred levels down, are 10^100 uses.
const saturate = 1 << 50

func addSat(a, b int64) int64 { return min(a+b, saturate) }

// measurer computes extents in one walk of the decoded tree. An anchored
// node is measured once and remembered, so the work is linear in the nodes
// the decoder made, however the aliases multiply them.
type measurer struct {
	memo map[*yaml.Node]extent
	busy map[*yaml.Node]bool // anchored nodes being measured, to find cycles
}

// checkBounds measures root and returns a *boundError when the frontmatter,
// aliases expanded, would nest deeper than MaxFrontmatterDepth, pass
// through more than MaxFrontmatterAliases aliases or exceed
// MaxFrontmatterExpanded; or when an alias refers to the value that
// contains it (the YAML decoder builds such a cycle without complaint).
func checkBounds(root *yaml.Node) error {
	if root == nil {
		return nil
	}
	m := &measurer{}
	_, err := m.measure(root, 1)
	return err
}

func (m *measurer) measure(n *yaml.Node, depth int) (extent, error) {
	if n == nil {
		return extent{}, nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return extent{size: 1}, nil
		}
		if m.busy[n.Alias] {
			return extent{}, &boundError{CodeYAMLAliasLimit, fmt.Sprintf("the alias *%s (line %d) refers to the value that contains it, which would repeat forever; remove the alias", n.Value, n.Line+1)}
		}
		e, err := m.measure(n.Alias, depth)
		if err != nil {
			return e, err
		}
		e.aliases = addSat(e.aliases, 1)
		if e.aliases > MaxFrontmatterAliases {
			return e, &boundError{CodeYAMLAliasLimit, fmt.Sprintf("aliases repeat values more than %d times (at *%s, line %d), over the limit on alias uses; write the values out instead of repeating aliases", MaxFrontmatterAliases, n.Value, n.Line+1)}
		}
		return e, nil
	}
	if e, ok := m.memo[n]; ok {
		if int64(depth)-1+e.height > MaxFrontmatterDepth {
			return e, tooDeep(n)
		}
		return e, nil
	}
	e := extent{size: int64(len(n.Value)) + 1}
	if len(n.Content) > 0 || n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		if depth > MaxFrontmatterDepth {
			return e, tooDeep(n)
		}
		if n.Anchor != "" {
			if m.busy == nil {
				m.busy = map[*yaml.Node]bool{}
			}
			m.busy[n] = true
		}
		for _, c := range n.Content {
			ce, err := m.measure(c, depth+1)
			if err != nil {
				return e, err
			}
			e.size = addSat(e.size, ce.size)
			e.aliases = addSat(e.aliases, ce.aliases)
			e.height = max(e.height, ce.height)
			if e.size > MaxFrontmatterExpanded {
				return e, &boundError{CodeYAMLAliasLimit, fmt.Sprintf("with its aliases expanded the frontmatter would be over %d bytes (at line %d), over the limit on expanded size; write the values out instead of repeating aliases", MaxFrontmatterExpanded, n.Line+1)}
			}
			if e.aliases > MaxFrontmatterAliases {
				return e, &boundError{CodeYAMLAliasLimit, fmt.Sprintf("aliases repeat values more than %d times (at line %d), over the limit on alias uses; write the values out instead of repeating aliases", MaxFrontmatterAliases, n.Line+1)}
			}
		}
		e.height++
		delete(m.busy, n)
	}
	if n.Anchor != "" {
		if m.memo == nil {
			m.memo = map[*yaml.Node]extent{}
		}
		m.memo[n] = e
	}
	return e, nil
}

func tooDeep(n *yaml.Node) error {
	return &boundError{CodeFrontmatterTooDeep, fmt.Sprintf("lists and mappings nest more than %d deep (at line %d), over the nesting limit; flatten the frontmatter", MaxFrontmatterDepth, n.Line+1)}
}
