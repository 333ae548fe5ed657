package render

import (
	"strings"
	"unicode/utf8"
)

// layout is one prompt format. A listing is head + described entries +
// closeBlock + sections (names, groups, note; each wrapped in affixes) +
// after; the budget code measures these pieces, so they must be all the
// listing holds.
type layout interface {
	// sorted reports whether the format orders entries by name itself.
	sorted() bool
	// prepDesc turns a description into the text an entry shows, before
	// escaping and cutting.
	prepDesc(d string) string
	// escapeExtra says how many code points escaping adds to a rune; nil
	// when the format does not escape descriptions.
	escapeExtra() func(rune) int
	head(c frameCtx) string
	// entry writes one entry; desc is prepared and cut, not yet escaped,
	// and cut says whether to mark it with the ellipsis.
	entry(b *strings.Builder, e Entry, desc string, cut bool)
	// entryCost is the length of entry(e, "", false), computed.
	entryCost(e Entry) int
	// closeBlock follows the kept (described) entries.
	closeBlock(kept int) string
	// affixes go around each section after the block: the names, the
	// groups, the note about skills not listed.
	affixes() (pre, post string)
	// after ends the listing part.
	after(c frameCtx) string
	// namesHeader starts the section of skills listed by name only; then,
	// for each folder, folderPrefix(folder) and the compact names joined
	// by ", ".
	namesHeader(c frameCtx) string
	folderPrefix(folder string) string
	// compact is how entry e is named in the names section, and under
	// which folder.
	compact(e Entry) (folder, name string)
	// tailIntro starts the section of changes written after a Basis's
	// text; tailOpen and tailClose go around its described entries.
	tailIntro() string
	tailOpen() string
	tailClose() string
	// inline writes the inline entries; c.hasListing says whether a
	// listing part precedes them.
	inline(b *strings.Builder, es []Entry, c frameCtx)
}

func layoutFor(format string) layout {
	switch format {
	case FormatCatalog:
		return catalogLayout{}
	case FormatProgressive:
		return progressiveLayout{}
	}
	return piLayout{}
}

// ---- pi ----------------------------------------------------------------

// piPreamble is Pi's text before the block, byte for byte (Pi appends the
// listing to its system prompt, hence the leading blank lines).
const piPreamble = "\n\nThe following skills provide specialized instructions for specific tasks.\n" +
	"Use the read tool to load a skill's file when the task matches its description.\n" +
	"When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"

type piLayout struct{}

func (piLayout) sorted() bool                { return false }
func (piLayout) prepDesc(d string) string    { return d }
func (piLayout) escapeExtra() func(rune) int { return xmlExtra }

func (piLayout) head(c frameCtx) string {
	if !c.listVirtual {
		return piPreamble + "\n<available_skills>\n"
	}
	// Not Pi's: only listings with stored skills get this line.
	return piPreamble +
		"Skills whose location is not an absolute file path are not on disk: load one with the " +
		c.s.load + " tool, and read its other files with the " + c.s.read +
		" tool (skill name and relative path), never from the file system.\n" +
		"\n<available_skills>\n"
}

func (piLayout) entry(b *strings.Builder, e Entry, desc string, cut bool) {
	b.WriteString("  <skill>\n    <name>")
	writeXML(b, e.Name)
	b.WriteString("</name>\n    <description>")
	writeXML(b, desc)
	if cut {
		b.WriteString(Ellipsis)
	}
	b.WriteString("</description>\n    <location>")
	writeXML(b, e.Location)
	b.WriteString("</location>\n  </skill>\n")
}

func (piLayout) entryCost(e Entry) int {
	return len("  <skill>\n    <name></name>\n    <description></description>\n    <location></location>\n  </skill>\n") +
		xmlLen(e.Name) + xmlLen(e.Location)
}

func (piLayout) closeBlock(int) string     { return "</available_skills>" }
func (piLayout) affixes() (string, string) { return "\n\n", "" }
func (piLayout) after(frameCtx) string     { return "" }
func (piLayout) namesHeader(frameCtx) string {
	return "More skills, by folder (read <folder>/<name>/SKILL.md when the task matches a name):"
}

func (piLayout) folderPrefix(folder string) string {
	if folder == "" {
		return "\n- at the location given: "
	}
	return "\n- " + folder + ": "
}

// compact names a skill under its folder when its location is
// <folder>/<name>/SKILL.md, else with its location.
func (piLayout) compact(e Entry) (string, string) {
	if f, ok := strings.CutSuffix(e.Location, "/SKILL.md"); ok {
		if f, ok := strings.CutSuffix(f, e.Name); ok && len(f) > 1 && f[len(f)-1] == '/' {
			return f[:len(f)-1], e.Name
		}
	}
	return "", e.Name + " (" + e.Location + ")"
}

// inline writes Pi's <skill name location> blocks. Like Pi, it escapes the
// attributes and leaves the reference line and the body as they are.
func (piLayout) inline(b *strings.Builder, es []Entry, c frameCtx) {
	for _, e := range es {
		b.WriteString("\n\n<skill name=\"")
		writeXML(b, e.Name)
		b.WriteString("\" location=\"")
		writeXML(b, e.Location)
		b.WriteString("\">\n")
		if e.Virtual {
			b.WriteString(virtualRefs(e, c.s))
		} else {
			b.WriteString("References are relative to ")
			b.WriteString(e.Dir)
			b.WriteString(".")
		}
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(e.Body))
		b.WriteString("\n</skill>")
	}
}

// virtualRefs tells the model where a stored skill's files are.
func virtualRefs(e Entry, s settings) string {
	return "This skill is not on the file system: read the files it references with the " +
		s.read + " tool, giving the skill name \"" + e.Name + "\" and the path as written."
}

// tailXML is the tail's start in the XML formats.
const tailXML = "Changed since the list above (an entry here replaces one of the same name):"

func (piLayout) tailIntro() string { return tailXML }
func (piLayout) tailOpen() string  { return "<available_skills>\n" }
func (piLayout) tailClose() string { return "</available_skills>" }

// ---- catalog -------------------------------------------------------------

type catalogLayout struct{}

func (catalogLayout) sorted() bool                { return false }
func (catalogLayout) escapeExtra() func(rune) int { return nil }

// prepDesc puts a description on one line, so it stays one bullet.
func (catalogLayout) prepDesc(d string) string {
	if !strings.ContainsAny(d, "\r\n") {
		return d
	}
	return strings.Join(strings.Fields(d), " ")
}

func (catalogLayout) head(frameCtx) string {
	return "## Agent Skills\n\n### Skill Catalog\n\n"
}

func (catalogLayout) entry(b *strings.Builder, e Entry, desc string, cut bool) {
	b.WriteString("- **")
	b.WriteString(e.Name)
	b.WriteString("**: ")
	b.WriteString(desc)
	if cut {
		b.WriteString(Ellipsis)
	}
	b.WriteString("\n")
}

func (catalogLayout) entryCost(e Entry) int {
	return len("- ****: \n") + runes(e.Name)
}

func (progressiveLayout) entryCost(e Entry) int {
	return len("  <skill>\n    <id></id>\n    <description></description>\n  </skill>\n") + xmlLen(e.Name)
}

func (catalogLayout) closeBlock(kept int) string {
	if kept > 0 {
		return "\n"
	}
	return ""
}
func (catalogLayout) affixes() (string, string)            { return "", "\n\n" }
func (catalogLayout) namesHeader(frameCtx) string          { return namesLine }
func (catalogLayout) folderPrefix(string) string           { return "" }
func (catalogLayout) compact(e Entry) (string, string)     { return "", e.Name }
func (progressiveLayout) namesHeader(frameCtx) string      { return namesLine }
func (progressiveLayout) folderPrefix(string) string       { return "" }
func (progressiveLayout) compact(e Entry) (string, string) { return "", e.Name }
func (progressiveLayout) closeBlock(int) string            { return "</available_skills>" }
func (progressiveLayout) affixes() (string, string)        { return "\n\n", "" }
func (progressiveLayout) after(frameCtx) string            { return "" }

// namesLine starts the one line of skills listed by name only.
const namesLine = "Also available (load by name): "

func (catalogLayout) after(c frameCtx) string {
	var b strings.Builder
	if c.hasInline {
		b.WriteString("To load a skill not shown in detail below, use the `" + c.s.load + "` tool.")
	} else {
		b.WriteString("To load a skill's full instructions, call the `" + c.s.load + "` tool with its name.")
	}
	b.WriteString("\n\n")
	b.WriteString(catalogRules(c))
	return b.String()
}

// catalogRules explains how to turn a skill's relative paths into absolute
// ones, the step models most often get wrong.
func catalogRules(c frameCtx) string {
	r := "### Critical Rules for Using Skills\n\n" +
		"> **Resolve skill file paths before you use them**\n" +
		">\n" +
		"> A skill's instructions name its own files by relative paths, such as `./scripts/run.sh` or `references/guide.md`.\n" +
		"> Your tools resolve relative paths against the user's workspace, not against the skill folder.\n" +
		">\n" +
		"> So before you read or run any file of a skill, make its path absolute:\n" +
		"> `Root Path` + `Relative Path` = `Absolute Path`\n" +
		">\n" +
		"> **Examples:**\n" +
		">\n" +
		"> 1. Root Path: `/path/to/skill`\n" +
		">    Relative: `./scripts/run.sh`\n" +
		">    Result: `/path/to/skill/scripts/run.sh`\n" +
		">\n" +
		"> 2. Root Path: `/path/to/skill`\n" +
		">    Relative: `references/guide.md`\n" +
		">    Result: `/path/to/skill/references/guide.md`"
	if c.listVirtual || c.inlineVirtual {
		r += "\n>\n" +
			"> **Stored skills** are not on the file system. For them, do not build a path: read each file with the `" +
			c.s.read + "` tool, giving the skill name and the relative path as written."
	}
	return r
}

func (catalogLayout) inline(b *strings.Builder, es []Entry, c frameCtx) {
	if c.hasListing {
		b.WriteString("\n\n")
	} else {
		b.WriteString("## Agent Skills\n\n")
		b.WriteString(catalogRules(c))
		b.WriteString("\n\n")
	}
	b.WriteString("### Skill Details")
	for _, e := range es {
		b.WriteString("\n\n#### ")
		b.WriteString(e.Name)
		b.WriteString("\n\n**Root Path:** `")
		b.WriteString(e.Dir)
		b.WriteString("`")
		if e.Virtual {
			b.WriteString(" (stored skill, not on the file system: read its files with the `" +
				c.s.read + "` tool, giving the skill name and the relative path)")
		}
		if body := strings.TrimSpace(e.Body); body != "" {
			b.WriteString("\n\n")
			b.WriteString(body)
		}
	}
}

func (catalogLayout) tailIntro() string {
	return "### Changed since the catalog above\n\nAn entry here replaces one of the same name above."
}
func (catalogLayout) tailOpen() string  { return "" }
func (catalogLayout) tailClose() string { return "" }

// ---- progressive ---------------------------------------------------------

type progressiveLayout struct{}

func (progressiveLayout) sorted() bool                { return true }
func (progressiveLayout) prepDesc(d string) string    { return d }
func (progressiveLayout) escapeExtra() func(rune) int { return xmlExtra }

func progressiveVirtual(s settings) string {
	return " Some skills are stored by the server, not on disk (the `" + s.load +
		"` result says so): read their files only with the `" + s.read +
		"` tool, giving the skill id and the relative path."
}

func (progressiveLayout) head(c frameCtx) string {
	h := "## Agent Skills\n\n" +
		"Skills hold specialized instructions for specific tasks. When a task matches a skill's description, " +
		"call the `" + c.s.load + "` tool with the skill's id to get its full instructions, then follow them."
	if c.listVirtual || c.inlineVirtual {
		h += progressiveVirtual(c.s)
	}
	return h + "\n\n<available_skills>\n"
}

func (progressiveLayout) entry(b *strings.Builder, e Entry, desc string, cut bool) {
	b.WriteString("  <skill>\n    <id>")
	writeXML(b, e.Name)
	b.WriteString("</id>\n    <description>")
	writeXML(b, desc)
	if cut {
		b.WriteString(Ellipsis)
	}
	b.WriteString("</description>\n  </skill>\n")
}

func (progressiveLayout) tailIntro() string { return tailXML }
func (progressiveLayout) tailOpen() string  { return "<available_skills>\n" }
func (progressiveLayout) tailClose() string { return "</available_skills>" }

func (progressiveLayout) inline(b *strings.Builder, es []Entry, c frameCtx) {
	if c.hasListing {
		b.WriteString("\n\n")
	} else {
		b.WriteString("## Agent Skills\n\n")
	}
	b.WriteString("These skills are already loaded; follow them when a task matches:")
	for _, e := range es {
		b.WriteString("\n\n<skill id=\"")
		writeXML(b, e.Name)
		b.WriteString("\" root=\"")
		writeXML(b, e.Dir)
		b.WriteString("\">\n")
		if e.Virtual {
			b.WriteString(virtualRefs(e, c.s))
		} else {
			b.WriteString("Relative paths in this skill resolve against ")
			b.WriteString(e.Dir)
			b.WriteString(".")
		}
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(e.Body))
		b.WriteString("\n</skill>")
	}
}

// ---- escaping ------------------------------------------------------------

// writeXML writes s with & < > " ' escaped as Pi escapes them (&apos; for
// the apostrophe, where Go's html package writes &#39;).
func writeXML(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&quot;"
		case '\'':
			rep = "&apos;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// xmlLen is the length of s escaped by writeXML, in code points.
func xmlLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		n += int(xmlLenTab[s[i]])
	}
	return n
}

// xmlLenTab is what each byte adds to a string's length over one: -1 for a
// UTF-8 continuation byte (not a code point of its own), xmlExtra for the
// characters writeXML escapes.
var xmlLenTab = func() (t [256]int8) {
	for b := range 256 {
		switch {
		case b&0xC0 == 0x80:
			t[b] = -1
		case b < utf8.RuneSelf:
			t[b] = int8(xmlExtra(rune(b)))
		}
	}
	return t
}()

// xmlExtra is how many code points writeXML adds for r.
func xmlExtra(r rune) int {
	switch r {
	case '&':
		return 4
	case '<', '>':
		return 3
	case '"', '\'':
		return 5
	}
	return 0
}
