package skill

import (
	"errors"
	"fmt"
	"github.com/loadout/loadout/internal/pyrepr"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// RefProperties is what "skills-ref read-properties" reports: the fields of
// the open format, with no validation beyond the presence of a non-empty
// name and description. The optional fields hold whatever the YAML held
// (string, []any or Fields), nil when absent, because the reference prints
// them without checking their type.
type RefProperties struct {
	Name        string // stripped
	Description string // stripped
	// License, Compatibility and AllowedTools are nil when absent.
	License       any
	Compatibility any
	AllowedTools  any
	// Metadata is nil when absent. When it is a mapping, its values have
	// been turned into strings the way Python's str() does (a list prints
	// as "['a', 'b']").
	Metadata any
}

// ReadProperties reads the skill at path (a folder, or its SKILL.md) like
// "skills-ref read-properties". Errors are *StrictError with the
// reference's message ("SKILL.md not found in DIR", "Missing required
// field in frontmatter: name", a parse message), or a plain error when the
// entry file cannot be read or is not UTF-8.
func ReadProperties(path string) (*RefProperties, error) {
	dir := RefSkillDir(path)
	entry := findStrictEntry(dir)
	if entry == "" {
		return nil, &StrictError{"SKILL.md not found in " + dir}
	}
	fm, err := readStrict(filepath.Join(dir, entry))
	if err != nil {
		return nil, err
	}
	return propertiesOf(fm)
}

func propertiesOf(fm Fields) (*RefProperties, error) {
	name, ok := fm.Get("name")
	if !ok {
		return nil, &StrictError{"Missing required field in frontmatter: name"}
	}
	desc, ok := fm.Get("description")
	if !ok {
		return nil, &StrictError{"Missing required field in frontmatter: description"}
	}
	n, ok := name.(string)
	if !ok || pyStrip(n) == "" {
		return nil, &StrictError{"Field 'name' must be a non-empty string"}
	}
	d, ok := desc.(string)
	if !ok || pyStrip(d) == "" {
		return nil, &StrictError{"Field 'description' must be a non-empty string"}
	}
	p := &RefProperties{Name: pyStrip(n), Description: pyStrip(d)}
	p.License, _ = fm.Get("license")
	p.Compatibility, _ = fm.Get("compatibility")
	p.AllowedTools, _ = fm.Get("allowed-tools")
	p.Metadata, _ = fm.Get("metadata")
	if m, ok := p.Metadata.(Fields); ok {
		strs := make(Fields, len(m))
		for i, kv := range m {
			strs[i] = Field{Key: kv.Key, Value: pyStr(kv.Value)}
		}
		p.Metadata = strs
	}
	return p, nil
}

// Fields returns the properties as the reference's to_dict does: name,
// description, then license, compatibility and allowed-tools when present,
// and metadata when present and not empty.
func (p *RefProperties) Fields() Fields {
	out := Fields{{Key: "name", Value: p.Name}, {Key: "description", Value: p.Description}}
	if p.License != nil {
		out = append(out, Field{Key: "license", Value: p.License})
	}
	if p.Compatibility != nil {
		out = append(out, Field{Key: "compatibility", Value: p.Compatibility})
	}
	if p.AllowedTools != nil {
		out = append(out, Field{Key: "allowed-tools", Value: p.AllowedTools})
	}
	if pyTruthy(p.Metadata) {
		out = append(out, Field{Key: "metadata", Value: p.Metadata})
	}
	return out
}

// JSON renders the properties as the reference prints them: Python's
// json.dumps(indent=2) with non-ASCII escaped, no trailing newline.
func (p *RefProperties) JSON() string {
	var b strings.Builder
	writePyJSON(&b, p.Fields(), "")
	return b.String()
}

func pyTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case Fields:
		return len(t) > 0
	}
	return true
}

// writePyJSON writes v (string, []any or Fields) like json.dumps(v,
// indent=2, ensure_ascii=True).
func writePyJSON(b *strings.Builder, v any, indent string) {
	switch t := v.(type) {
	case string:
		writePyJSONString(b, t)
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range t {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			writePyJSON(b, e, indent+"  ")
		}
		b.WriteString("\n" + indent + "]")
	case Fields:
		if len(t) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, kv := range t {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			writePyJSONString(b, kv.Key)
			b.WriteString(": ")
			writePyJSON(b, kv.Value, indent+"  ")
		}
		b.WriteString("\n" + indent + "}")
	default:
		b.WriteString("null")
	}
}

func writePyJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			case r < 0x7f:
				b.WriteRune(r)
			case r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			}
		}
	}
	b.WriteByte('"')
}

// pyStr is Python's str() of a parsed YAML value: strings as they are,
// lists and mappings as their repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func pyRepr(v any) string {
	switch t := v.(type) {
	case string:
		return pyrepr.String(t)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Fields:
		parts := make([]string, len(t))
		for i, kv := range t {
			parts[i] = pyrepr.String(kv.Key) + ": " + pyRepr(kv.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "None"
}

// ToPrompt renders the <available_skills> block of "skills-ref to-prompt"
// for the skills at paths, in order, without validating them. Each
// location is the skill folder's absolute, symlink-free path joined with
// the entry file found (SKILL.md or skill.md). The first skill that cannot
// be read ends it with that error (see ReadProperties). The result has no
// trailing newline.
func ToPrompt(paths []string) (string, error) {
	lines := []string{"<available_skills>"}
	for _, p := range paths {
		dir := resolveDir(RefSkillDir(p))
		props, err := ReadProperties(dir)
		if err != nil {
			return "", err
		}
		lines = append(lines,
			"<skill>",
			"<name>", pyHTMLEscape(props.Name), "</name>",
			"<description>", pyHTMLEscape(props.Description), "</description>",
			"<location>", filepath.Join(dir, findStrictEntry(dir)), "</location>",
			"</skill>")
	}
	lines = append(lines, "</available_skills>")
	return strings.Join(lines, "\n"), nil
}

// resolveDir is Python's Path.resolve(): absolute, symlinks resolved as far
// as the path exists.
func resolveDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	var missing []string
	for cur := abs; ; {
		parent := filepath.Dir(cur)
		missing = append([]string{filepath.Base(cur)}, missing...)
		if parent == cur {
			return abs
		}
		if real, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(append([]string{real}, missing...)...)
		} else if !errors.Is(err, os.ErrNotExist) {
			return abs
		}
		cur = parent
	}
}

// pyHTMLEscape is Python's html.escape(s, quote=True).
func pyHTMLEscape(s string) string {
	if !strings.ContainsAny(s, `&<>"'`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#x27;")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
