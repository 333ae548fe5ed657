package plugin

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// hasFrontmatter reports whether SKILL.md text opens with a frontmatter
// fence: a first line "---" (after an optional byte order mark, with
// trailing blanks and any line end), as skill.Split reads it.
func hasFrontmatter(content string) bool {
	content = strings.TrimPrefix(content, "\ufeff")
	line := content
	if i := strings.IndexAny(content, "\r\n"); i >= 0 {
		line = content[:i]
	}
	return strings.TrimRight(line, " \t") == "---"
}

// synthFrontmatter writes a frontmatter block for an inline contribution
// whose content has none, from the contribution's fields. Every value is a
// YAML double-quoted scalar, so no text can break out of it.
func synthFrontmatter(c Contribution) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "name: %s\n", yamlQuote(strings.TrimSpace(c.Name)))
	fmt.Fprintf(&b, "description: %s\n", yamlQuote(c.Description))
	if len(c.Tags) > 0 {
		fmt.Fprintf(&b, "tags: %s\n", yamlList(c.Tags))
	}
	if c.Category != "" {
		fmt.Fprintf(&b, "category: %s\n", yamlQuote(c.Category))
	}
	if len(c.RequiresTools) > 0 {
		fmt.Fprintf(&b, "requires-tools: %s\n", yamlList(c.RequiresTools))
	}
	b.WriteString("---\n")
	return b.String()
}

func yamlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = yamlQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// yamlQuote writes s as a YAML double-quoted scalar on one line. Quotes
// and backslashes are escaped, and so is every character YAML treats as a
// line break or does not allow as printable: C0 and C1 controls, DEL,
// U+2028, U+2029, the byte order mark and U+FFFE/U+FFFF. Invalid UTF-8
// becomes U+FFFD.
func yamlQuote(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
