package skill

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The MCP Skills extension (SEP-2640) has hosts compare a skill entry's
// frontmatter with the frontmatter they parse from the SKILL.md they read,
// field by field, numbers by value, with no coercion: "version: 1.0" must
// be the number 1 in the entry, not the string "1.0" that Frontmatter.Raw
// keeps. TypedFrontmatter gives that typed form.
//
// The verifying clients (the TypeScript SDK's SkillsClient, the Inspector)
// read a subset of YAML with YAML 1.2 core-schema typing, and refuse
// anything outside it rather than read it differently from a full parser.
// TypedFrontmatter follows the same rules, so a frontmatter it types is
// read to the same values there, and one it refuses would be refused
// there too:
//
//   - plain scalars resolve by the core schema: "", ~, null, Null, NULL
//     are null; true/True/TRUE and false/False/FALSE are booleans; decimal
//     integers ([+-]?digits, leading zeros kept decimal: 014 is 14), 0o
//     octal, 0x hexadecimal and decimal floats are numbers; everything else
//     (1_000, 0b101, 0X1F, +.nan) is a string. .inf and .nan, and numbers
//     too large for a float64, cannot be JSON and are refused;
//   - quoted, literal (|) and folded (>) scalars are strings;
//   - keys must be strings (a plain key that resolves to a number, boolean
//     or null is refused), unique within their mapping, and not __proto__;
//   - anchors, aliases, tags (!!str and the like), quoted scalars and flow
//     collections ([a, b], {a: b}) that span lines, mappings inside flow
//     sequences, block scalar indentation indicators (|2) and a plain value
//     holding ": " are refused.
//
// The bounds of Parse apply: MaxFrontmatterBytes, MaxFrontmatterDepth,
// MaxFrontmatterAliases and MaxFrontmatterExpanded.

// TypedError says why a SKILL.md's frontmatter has no typed form. Line is
// the line in SKILL.md (1 is the opening fence), 0 when it is not known.
type TypedError struct {
	Line int
	Msg  string
}

func (e *TypedError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// TypedHeadBytes is how much of a SKILL.md TypedFrontmatter may need: the
// frontmatter at its largest (CRLF line ends counted twice) and both
// fences. A caller that reads only the head of a larger file reads this
// much.
const TypedHeadBytes = 2*MaxFrontmatterBytes + 1024

// TypedFrontmatter returns the frontmatter of a SKILL.md (data, or at least
// its first TypedHeadBytes bytes) as the MCP Skills extension's clients read
// it: every key in order, scalars typed by the YAML 1.2 core schema, so
// values are string, float64, bool, nil, []any or Fields. The file is split
// the way those clients split it: CRLF line ends become LF, a byte order
// mark is skipped, the first line must be exactly "---", and the
// frontmatter ends at the next line that is "---" (trailing blanks
// allowed). A frontmatter they would refuse is a *TypedError naming the
// line and what to change.
func TypedFrontmatter(data []byte) (Fields, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	data = bytes.TrimPrefix(data, bom)
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return nil, &TypedError{Line: 1, Msg: `SKILL.md must begin with a line holding only "---" (no trailing blanks)`}
	}
	end := -1
	for pos := 0; pos <= len(rest); {
		nl := bytes.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		if nl >= 0 {
			line = rest[pos : pos+nl]
		}
		if string(bytes.TrimRight(line, " \t")) == "---" {
			end = pos
			break
		}
		if nl < 0 {
			break
		}
		pos += nl + 1
	}
	if end < 0 {
		if len(rest) > MaxFrontmatterBytes {
			return nil, &TypedError{Msg: fmt.Sprintf("no closing \"---\" line within the frontmatter's limit of %d bytes", MaxFrontmatterBytes)}
		}
		return nil, &TypedError{Msg: `the frontmatter has no closing "---" line`}
	}
	front := rest[:end]
	if len(front) > MaxFrontmatterBytes {
		return nil, &TypedError{Msg: fmt.Sprintf("the frontmatter is %d bytes, over the %d-byte limit", len(front), MaxFrontmatterBytes)}
	}
	if i := bytes.IndexByte(front, '\r'); i >= 0 {
		return nil, &TypedError{Line: 2 + bytes.Count(front[:i], []byte("\n")), Msg: "a carriage return that is not part of a CRLF line end: use LF or CRLF line ends"}
	}
	root, err := decodeFull(string(front))
	if err != nil {
		return nil, &TypedError{Msg: "not valid YAML: " + cleanYAMLError(err).Error()}
	}
	if err := checkBounds(root); err != nil {
		return nil, &TypedError{Msg: err.Error()}
	}
	if root == nil {
		return Fields{}, nil
	}
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, &TypedError{Line: root.Line + 1, Msg: "the frontmatter must be a block mapping of fields (key: value), one per line"}
	}
	t := &typer{lines: strings.Split(string(front), "\n")}
	v, err := t.value(root, false)
	if err != nil {
		return nil, err
	}
	return v.(Fields), nil
}

// typer types a decoded frontmatter tree; lines are the frontmatter's
// lines, for the checks the tree cannot answer (where a quoted scalar or a
// flow collection closes).
type typer struct {
	lines []string
}

func (t *typer) fail(n *yaml.Node, format string, args ...any) error {
	// Node lines count from the first line after the opening fence.
	return &TypedError{Line: n.Line + 1, Msg: fmt.Sprintf(format, args...)}
}

// source returns the runes of n's line from n's column on ("" when the
// position is out of range).
func (t *typer) source(n *yaml.Node) []rune {
	if n.Line < 1 || n.Line > len(t.lines) {
		return nil
	}
	line := []rune(t.lines[n.Line-1])
	if n.Column < 1 || n.Column > len(line) {
		return nil
	}
	return line[n.Column-1:]
}

func (t *typer) value(n *yaml.Node, inFlow bool) (any, error) {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return nil, t.fail(n, "anchors and aliases (&name, *name) are not read by MCP skills clients: write the value out")
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return nil, t.fail(n, "tags such as %s are not read by MCP skills clients: remove the tag (quote the value to keep it a string)", n.Tag)
	}
	if n.Style&yaml.FlowStyle != 0 && !inFlow {
		if !flowClosesOnLine(t.source(n)) {
			return nil, t.fail(n, "a flow collection ([...] or {...}) must close on the line it opens: put it on one line, or write it as a block list or mapping")
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return t.scalar(n, inFlow)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := t.value(c, inFlow || n.Style&yaml.FlowStyle != 0)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		flow := inFlow || n.Style&yaml.FlowStyle != 0
		if flow {
			if src := t.source(n); len(src) == 0 || src[0] != '{' {
				return nil, t.fail(n, "a mapping inside a flow list ([a: b]) is not read by MCP skills clients: quote the item or write {a: b}")
			}
		}
		out := make(Fields, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := t.key(n.Content[i])
			if err != nil {
				return nil, err
			}
			if _, dup := out.Get(k); dup {
				return nil, t.fail(n.Content[i], "duplicate key %q: keep one", k)
			}
			v, err := t.value(n.Content[i+1], flow)
			if err != nil {
				return nil, err
			}
			out = append(out, Field{Key: k, Value: v})
		}
		return out, nil
	}
	return nil, t.fail(n, "a %s is not a frontmatter value", kindName(n))
}

func (t *typer) key(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", t.fail(n, "a key must be a string, not a %s", kindName(n))
	}
	if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return "", t.fail(n, "anchors, aliases and tags are not read by MCP skills clients: write the key as plain text")
	}
	v, err := t.scalar(n, false)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", t.fail(n, "the key %q is read as a %s, not a string: quote it", n.Value, jsonKind(v))
	}
	if s == "__proto__" {
		return "", t.fail(n, "the key \"__proto__\" is refused by MCP skills clients: rename it")
	}
	return s, nil
}

var typedBlockHeader = regexp.MustCompile(`^[>|][+-]?(?:[\t ]+#.*)?[\t ]*$`)

func (t *typer) scalar(n *yaml.Node, inFlow bool) (any, error) {
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		if !quoteClosesOnLine(t.source(n)) {
			return nil, t.fail(n, "a quoted value must close on the line it opens (MCP skills clients do not read multi-line quoted values): put it on one line, or use a block scalar (|)")
		}
		return n.Value, nil
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if !typedBlockHeader.MatchString(string(t.source(n))) {
			return nil, t.fail(n, "block scalar indentation indicators (|2, >-1) are not read by MCP skills clients: write | or > alone")
		}
		return n.Value, nil
	}
	s := n.Value
	if s == "" && inFlow {
		return nil, t.fail(n, "an empty value in a flow collection is not read by MCP skills clients: write null or \"\"")
	}
	if s != "" && strings.ContainsRune("%@`,]}|>", rune(s[0])) {
		return nil, t.fail(n, "%q cannot start a plain value: quote the value", s[:1])
	}
	if strings.Contains(s, ": ") || strings.Contains(s, ":\t") || strings.HasSuffix(s, ":") {
		return nil, t.fail(n, "a plain value cannot contain \": \": quote the value")
	}
	v, err := ResolvePlain(s)
	if err != nil {
		return nil, t.fail(n, "%v", err)
	}
	return v, nil
}

// The YAML 1.2 core schema, as the MCP skills clients apply it.
var (
	coreNull    = regexp.MustCompile(`^(?:~|null|Null|NULL)$`)
	coreTrue    = regexp.MustCompile(`^(?:true|True|TRUE)$`)
	coreFalse   = regexp.MustCompile(`^(?:false|False|FALSE)$`)
	coreInt     = regexp.MustCompile(`^[+-]?[0-9]+$`)
	coreOctal   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex     = regexp.MustCompile(`^0x[0-9A-Fa-f]+$`)
	coreFloat   = regexp.MustCompile(`^[+-]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[Ee][+-]?[0-9]+)?$`)
	coreSpecial = regexp.MustCompile(`^(?:[+-]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// ResolvePlain types the text of a plain (unquoted, untagged) YAML scalar
// by the YAML 1.2 core schema: nil, a bool, a float64 or the string itself.
// A number JSON cannot hold (.inf, .nan, 1e400) is an error.
func ResolvePlain(s string) (any, error) {
	switch {
	case s == "" || coreNull.MatchString(s):
		return nil, nil
	case coreTrue.MatchString(s):
		return true, nil
	case coreFalse.MatchString(s):
		return false, nil
	}
	var f float64
	switch {
	case coreInt.MatchString(s) || coreFloat.MatchString(s):
		// Decimal, whatever the leading zeros: 014 is 14.
		// The patterns admit only what ParseFloat reads; out of range it
		// gives ±Inf (refused below) or 0, as JavaScript's Number does.
		f, _ = strconv.ParseFloat(s, 64)
	case coreOctal.MatchString(s):
		f = bigFloat(s[2:], 8)
	case coreHex.MatchString(s):
		f = bigFloat(s[2:], 16)
	case coreSpecial.MatchString(s):
		f = math.NaN()
	default:
		return s, nil
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("%q is a number JSON cannot hold: quote it to keep it as text", s)
	}
	return f, nil
}

// bigFloat is the float64 nearest the integer of digits in base.
func bigFloat(digits string, base int) float64 {
	i, _ := new(big.Int).SetString(digits, base)
	f, _ := new(big.Float).SetInt(i).Float64()
	return f
}

// quoteClosesOnLine reports whether the quoted scalar src starts with
// closes on this line.
func quoteClosesOnLine(src []rune) bool {
	_, ok := skipQuoted(src, 0)
	return ok
}

// skipQuoted returns the index just past the quoted scalar at src[i].
func skipQuoted(src []rune, i int) (int, bool) {
	if i >= len(src) {
		return 0, false
	}
	q := src[i]
	if q != '"' && q != '\'' {
		return 0, false
	}
	for j := i + 1; j < len(src); j++ {
		switch {
		case q == '"' && src[j] == '\\':
			j++
		case src[j] == q:
			if q == '\'' && j+1 < len(src) && src[j+1] == '\'' {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

// flowClosesOnLine reports whether the flow collection src starts with
// closes on this line.
func flowClosesOnLine(src []rune) bool {
	if len(src) == 0 || (src[0] != '[' && src[0] != '{') {
		return false
	}
	depth := 0
	prev := ' ' // the last non-blank rune before i
	for i := 0; i < len(src); i++ {
		r := src[i]
		switch r {
		case '"', '\'':
			if strings.ContainsRune("[{,: \t", prev) {
				end, ok := skipQuoted(src, i)
				if !ok {
					return false
				}
				i = end - 1
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return true
			}
		case '#':
			if i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
				return false
			}
		}
		if r != ' ' && r != '\t' {
			prev = r
		}
	}
	return false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return "value"
}
