package skill

import (
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// fastNode parses the plain frontmatter almost every skill uses, without
// the full YAML decoder: top-level "key: value" lines whose values are
// plain, single- or double-quoted (no escapes) scalars, flow lists of plain
// scalars ([a, b]), block lists ("- item") and one level of nested
// "key: value" mappings. Blank lines and full-line comments are allowed.
// Anything else (block scalars, anchors, tags, multi-line scalars, escapes,
// trailing comments, duplicate keys) makes it return ok=false, and the
// caller uses the real decoder. FuzzFastYAML checks that whenever ok is
// true the result equals the real decoder's.
func fastNode(front string) (root *yaml.Node, ok bool) {
	var p fastParser
	return p.parse(front)
}

// fastParser makes the nodes of one frontmatter from a slab, as the tree
// lives only until the frontmatter is filled in (compactText copies the
// text it keeps): a few allocations per header instead of one per node.
// A parser from fastParsers reuses its slab for the next frontmatter.
type fastParser struct {
	slab []yaml.Node
}

// fastParsers holds parsers whose slabs are reused. Made afresh for every
// SKILL.md, the slabs were a quarter of all a 50,000-skill scan allocated
// (110 MB of garbage), which is what sets how often the collector runs.
var fastParsers = sync.Pool{New: func() any { return new(fastParser) }}

// maxPooledNodes bounds the slab a pooled parser keeps: one large
// frontmatter does not pin its slab for every later small one.
const maxPooledNodes = 256

// getFastParser returns a parser from the pool; put it back with release
// once nothing refers to the tree it made.
func getFastParser() *fastParser { return fastParsers.Get().(*fastParser) }

// release returns p to the pool, its nodes cleared so that the text they
// point into can be freed.
func (p *fastParser) release() {
	if cap(p.slab) > maxPooledNodes {
		p.slab = nil
	} else {
		clear(p.slab)
		p.slab = p.slab[:0]
	}
	fastParsers.Put(p)
}

// node returns a new node holding n.
func (p *fastParser) node(n yaml.Node) *yaml.Node {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]yaml.Node, 0, max(2*cap(p.slab), 16))
	}
	p.slab = append(p.slab, n)
	return &p.slab[len(p.slab)-1]
}

// nodeEstimate is about how many nodes the fast path makes of lines: two
// for a line that holds a key, one for a list item, one more for each
// comma of a flow list. It errs high for block text that holds colons, and
// node makes more room when it is low.
func nodeEstimate(lines []string) int {
	n := 1
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(t, "- ") || t == "-":
			n++
		case strings.IndexByte(t, ':') >= 0:
			n += 2
			if strings.IndexByte(t, '[') >= 0 {
				n += strings.Count(t, ",") + 1
			}
		}
	}
	return n
}

// hasKey reports whether the mapping node m already holds key.
func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// maxFastKeys is how many keys a mapping may have for the fast path; one
// with more goes to the real decoder (hasKey is linear).
const maxFastKeys = 64

func (p *fastParser) parse(front string) (root *yaml.Node, ok bool) {
	// Split's frontmatter always ends with a line break; block scalar
	// chomping depends on it, so other text goes to the real decoder.
	if !strings.HasSuffix(front, "\n") || !yamlPrintable(front) {
		return nil, false
	}
	lines := strings.Split(front, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := nodeEstimate(lines)
	if cap(p.slab) >= n {
		p.slab = p.slab[:0]
	} else {
		p.slab = make([]yaml.Node, 0, n)
	}
	root = p.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1})
	root.Content = make([]*yaml.Node, 0, n)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if blankOrComment(line) {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, false
		}
		key, rest, found := strings.Cut(line, ":")
		if !found || !plainKey(key) || hasKey(root, key) || len(root.Content) >= 2*maxFastKeys {
			return nil, false
		}
		if len(root.Content) == 0 {
			root.Line = i + 1
		}
		k := p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: i + 1, Column: 1})
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return nil, false
		}
		val := strings.Trim(rest, " \t")
		col := len(line) - len(strings.TrimLeft(rest, " \t")) + 1
		if val == ">" || val == ">-" || val == "|" || val == "|-" {
			v, next, ok := p.fastBlockScalar(lines, i+1, val, i+1, col)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, v)
			i = next - 1
			continue
		}
		if val != "" {
			v, ok := p.fastValue(val, i+1, col, true)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, v)
			continue
		}
		// An empty value: a block list, a nested mapping, or null.
		j := i + 1
		for j < len(lines) && blankOrComment(lines[j]) {
			j++
		}
		if j == len(lines) || !(strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "- ") || lines[j] == "-") {
			root.Content = append(root.Content, k, p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: i + 1, Column: col}))
			continue
		}
		child, next, ok := p.fastBlock(lines, j)
		if !ok {
			return nil, false
		}
		root.Content = append(root.Content, k, child)
		i = next - 1
	}
	if len(root.Content) == 0 {
		return nil, false
	}
	return root, true
}

// fastBlock reads a block list or a nested mapping starting at line j; it
// returns the node and the index of the first line after it.
func (p *fastParser) fastBlock(lines []string, j int) (*yaml.Node, int, bool) {
	first := lines[j]
	indent := len(first) - len(strings.TrimLeft(first, " "))
	body := first[indent:]
	if strings.HasPrefix(body, "- ") || body == "-" {
		seq := p.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: j + 1, Column: indent + 1})
		for ; j < len(lines); j++ {
			l := lines[j]
			if blankOrComment(l) {
				continue
			}
			in := len(l) - len(strings.TrimLeft(l, " "))
			if in != indent || !(strings.HasPrefix(l[in:], "- ") || l[in:] == "-") {
				if in > indent || in < indent && in != 0 || in == indent && indent > 0 {
					return nil, 0, false
				}
				break
			}
			item := strings.Trim(l[in+1:], " \t")
			if item == "" {
				return nil, 0, false
			}
			v, ok := p.fastValue(item, j+1, in+3, false)
			if !ok || v.Kind != yaml.ScalarNode {
				return nil, 0, false
			}
			seq.Content = append(seq.Content, v)
		}
		return seq, j, true
	}
	if indent == 0 {
		return nil, 0, false
	}
	m := p.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: j + 1, Column: indent + 1})
	for ; j < len(lines); j++ {
		l := lines[j]
		if blankOrComment(l) {
			continue
		}
		in := len(l) - len(strings.TrimLeft(l, " "))
		if in == 0 {
			break
		}
		if in != indent {
			return nil, 0, false
		}
		key, rest, found := strings.Cut(l[in:], ":")
		if !found || !plainKey(key) || hasKey(m, key) || len(m.Content) >= 2*maxFastKeys || rest == "" || rest[0] != ' ' {
			return nil, 0, false
		}
		val := strings.Trim(rest, " \t")
		if val == "" {
			return nil, 0, false
		}
		v, ok := p.fastValue(val, j+1, in+len(key)+3, false)
		if !ok || v.Kind != yaml.ScalarNode {
			return nil, 0, false
		}
		m.Content = append(m.Content, p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: j + 1, Column: in + 1}), v)
	}
	return m, j, true
}

func blankOrComment(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return t == "" || t[0] == '#'
}

func plainKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

// fastValue parses one scalar, or (when flow is allowed) a flow list of
// plain scalars.
func (p *fastParser) fastValue(v string, line, col int, flow bool) (*yaml.Node, bool) {
	switch v[0] {
	case '"':
		if len(v) < 2 || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], "\"\\") {
			return nil, false
		}
		return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: v[1 : len(v)-1], Line: line, Column: col}), true
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return nil, false
		}
		inner := v[1 : len(v)-1]
		if strings.Count(inner, "'")%2 != 0 || strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return nil, false
		}
		return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.SingleQuotedStyle, Value: strings.ReplaceAll(inner, "''", "'"), Line: line, Column: col}), true
	case '[':
		if !flow || v[len(v)-1] != ']' {
			return nil, false
		}
		seq := p.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: col})
		inner := strings.TrimSpace(v[1 : len(v)-1])
		if inner == "" {
			return seq, true
		}
		for _, item := range strings.Split(inner, ",") {
			item = strings.Trim(item, " \t")
			if item == "" || strings.ContainsAny(item, "[]{}") {
				return nil, false
			}
			n, ok := p.plainScalar(item, line, col, true)
			if !ok {
				return nil, false
			}
			seq.Content = append(seq.Content, n)
		}
		return seq, true
	}
	return p.plainScalar(v, line, col, false)
}

// plainScalar accepts a plain scalar that cannot mean anything but its
// text (or null).
func (p *fastParser) plainScalar(v string, line, col int, inFlow bool) (*yaml.Node, bool) {
	if strings.ContainsAny(v[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return nil, false
	}
	if strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":") || strings.Contains(v, "\t") {
		return nil, false
	}
	// In a flow list the YAML decoder also refuses a '?' anywhere in a
	// plain scalar ([a?b] is "did not find expected ',' or ']'").
	if inFlow && strings.ContainsAny(v, ":'\"?") {
		return nil, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return nil, false
		}
	}
	if strings.ContainsRune(v, '\uFEFF') || !validUTF8([]byte(v)) {
		return nil, false
	}
	switch v {
	case "~", "null", "Null", "NULL":
		return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: v, Line: line, Column: col}), true
	}
	return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line, Column: col}), true
}

// yamlPrintable reports whether text is valid UTF-8 made only of the
// characters YAML allows, without tabs (which YAML treats specially).
func yamlPrintable(text string) bool {
	for i, r := range text {
		switch {
		case r == '\n':
		case r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD"):
			return false
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
			return false
		case r == 0x2028, r == 0x2029: // YAML 1.1 line breaks, to the real decoder
			return false
		}
	}
	return true
}

// fastBlockScalar reads a literal (|) or folded (>) block scalar whose lines
// all share one indentation, with clip or strip chomping. It returns the
// node and the index of the first line after it.
func (p *fastParser) fastBlockScalar(lines []string, j int, header string, line, col int) (*yaml.Node, int, bool) {
	if j >= len(lines) || strings.TrimLeft(lines[j], " ") == "" {
		return nil, 0, false
	}
	indent := len(lines[j]) - len(strings.TrimLeft(lines[j], " "))
	if indent == 0 {
		return nil, 0, false
	}
	var content []string // "" for a blank line
	for ; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimLeft(l, " ") == "" {
			if len(l) > indent {
				return nil, 0, false
			}
			content = append(content, "")
			continue
		}
		in := len(l) - len(strings.TrimLeft(l, " "))
		if in < indent {
			if l[in] == '#' || in > 0 {
				return nil, 0, false
			}
			break
		}
		if in > indent {
			return nil, 0, false
		}
		content = append(content, l[indent:])
	}
	// Trailing blank lines belong to chomping, not content.
	for len(content) > 0 && content[len(content)-1] == "" {
		content = content[:len(content)-1]
	}
	var b strings.Builder
	folded := header[0] == '>'
	for i, c := range content {
		if i > 0 {
			switch {
			case !folded:
				b.WriteByte('\n')
			case c == "":
				b.WriteByte('\n')
			case content[i-1] != "":
				b.WriteByte(' ')
			}
		}
		b.WriteString(c)
	}
	if !strings.HasSuffix(header, "-") && len(content) > 0 {
		b.WriteByte('\n')
	}
	style := yaml.LiteralStyle
	if folded {
		style = yaml.FoldedStyle
	}
	return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: style, Value: b.String(), Line: line, Column: col}), j, true
}
