package skill

// Strict mode: the checks, messages and YAML rules of the reference
// validator skills-ref (agentskills/agentskills), so that "loadout validate",
// "read-properties" and "to-prompt" can stand in for it. Lenient loading
// (Parse) is for serving skills; this file is for telling an author exactly
// what the reference would say. The deliberate differences are listed in
// docs/compat-skills-ref.md.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// StrictError is a problem that skills-ref reports as one message (its
// SkillError): a missing or unparsable SKILL.md, a missing required field.
// Error returns the message exactly as the reference words it.
type StrictError struct {
	Message string
}

func (e *StrictError) Error() string { return e.Message }

// The reference's parse messages.
const (
	msgStrictNoFrontmatter = "SKILL.md must start with YAML frontmatter (---)"
	msgStrictUnclosed      = "SKILL.md frontmatter not properly closed with ---"
	msgStrictNotMapping    = "SKILL.md frontmatter must be a YAML mapping"
	msgStrictInvalidYAML   = "Invalid YAML in frontmatter: "
)

// strictAllowed is the set of top-level keys the reference accepts, and
// strictAllowedList how it prints them (a sorted Python list).
var strictAllowed = map[string]bool{
	"name": true, "description": true, "license": true,
	"allowed-tools": true, "metadata": true, "compatibility": true,
}

const strictAllowedList = "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']"

// ParseStrict parses a SKILL.md the way skills-ref does and returns its
// frontmatter. Values are string, []any or Fields: every scalar is a string
// as written ("123", "yes", "" for an empty value). Flow style, anchors,
// aliases, tags, duplicate keys, mapping values indented unlike their
// siblings and tabs outside quoted or block scalars and comments are
// invalid YAML, as in the reference's strictyaml.
//
// data must be UTF-8; CRLF and lone CR are read as LF (Python's universal
// newlines). The fences are lines holding "---" (trailing blanks allowed),
// anchored at line starts; the reference splits on the first two "---"
// anywhere, which we treat as an artefact.
//
// Errors are *StrictError with the reference's message, except invalid
// UTF-8, which the reference cannot report (it crashes) and which gets a
// plain error.
func ParseStrict(data []byte) (Fields, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("SKILL.md is not valid UTF-8 text")
	}
	text := normalizeNewlines(data)
	front, err := splitStrict(text)
	if err != nil {
		return nil, err
	}
	v, err := decodeStrict(front)
	if err != nil {
		return nil, err
	}
	fm, ok := v.(Fields)
	if !ok {
		return nil, &StrictError{msgStrictNotMapping}
	}
	return fm, nil
}

// splitStrict returns the text between the opening fence (the first line)
// and the next fence line. A byte order mark or a blank first line means
// there is no frontmatter, as in the reference.
func splitStrict(text string) (string, error) {
	first, rest, ok := strings.Cut(text, "\n")
	if !isFence(first) {
		return "", &StrictError{msgStrictNoFrontmatter}
	}
	if !ok {
		return "", &StrictError{msgStrictUnclosed}
	}
	pos := 0
	for {
		end := strings.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		if end >= 0 {
			line = rest[pos : pos+end]
		}
		if isFence(line) {
			return rest[:pos], nil
		}
		if end < 0 {
			return "", &StrictError{msgStrictUnclosed}
		}
		pos += end + 1
	}
}

func isFence(line string) bool { return strings.TrimRight(line, " \t") == "---" }

// yamlProblem builds the "Invalid YAML in frontmatter" error. line is a
// line of SKILL.md (the opening fence is line 1), or 0 when unknown.
func yamlProblem(line, col int, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	switch {
	case line > 0 && col > 0:
		detail = fmt.Sprintf("line %d, column %d: %s", line, col, detail)
	case line > 0:
		detail = fmt.Sprintf("line %d: %s", line, detail)
	}
	return &StrictError{msgStrictInvalidYAML + detail}
}

// strictDoc holds the frontmatter text while its nodes are checked.
type strictDoc struct {
	text      string // "\n" + frontmatter, so YAML line numbers are file lines
	lineStart []int
	nodes     []*yaml.Node // every node, in document order
}

// decodeStrict decodes frontmatter text into string, []any or Fields. An
// empty document decodes to "" (the reference then sees no mapping).
func decodeStrict(front string) (v any, err error) {
	defer func() {
		// The YAML decoder is third-party code fed arbitrary text; a panic
		// in it must not take the validator down.
		if r := recover(); r != nil {
			v, err = nil, yamlProblem(0, 0, "the YAML parser failed: %v", r)
		}
	}()
	d := &strictDoc{text: "\n" + front}
	dec := yaml.NewDecoder(strings.NewReader(d.text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		// strictyaml accepts an empty key (a line starting ": "); the Go
		// decoder does not. Retry with such keys written as "".
		fixed, ok := quoteEmptyKeys(d.text)
		if !ok {
			return nil, yamlProblem(0, 0, "%s", fileLineYAMLError(err, 0))
		}
		d.text = fixed
		dec = yaml.NewDecoder(strings.NewReader(d.text))
		doc = yaml.Node{}
		if err2 := dec.Decode(&doc); err2 != nil {
			return nil, yamlProblem(0, 0, "%s", fileLineYAMLError(err, 0))
		}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlProblem(0, 0, "%s", fileLineYAMLError(err, 0))
		}
		return nil, yamlProblem(next.Line, 0, "expected a single document, but found another")
	}
	if len(doc.Content) == 0 {
		return "", nil
	}
	root := doc.Content[0]
	d.lineStart = []int{0}
	for i := 0; i < len(d.text); i++ {
		if d.text[i] == '\n' {
			d.lineStart = append(d.lineStart, i+1)
		}
	}
	d.collect(root)
	for _, n := range d.nodes {
		if err := d.checkNode(n); err != nil {
			return nil, err
		}
	}
	if err := d.checkTabs(); err != nil {
		return nil, err
	}
	return d.value(root, true)
}

var emptyKeyLine = regexp.MustCompile(`^( *(?:- +)*):( |$)`)

// quoteEmptyKeys writes the empty implicit keys of text as "". A ":" line
// right after a "?" line at the same indentation is the value of that
// explicit key and is left alone. ok is false when nothing was changed.
func quoteEmptyKeys(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	changed := false
	prev := ""
	for i, line := range lines {
		if m := emptyKeyLine.FindStringSubmatchIndex(line); m != nil {
			indent := line[:m[3]]
			if !strings.HasPrefix(prev, indent+"?") {
				lines[i] = indent + `"":` + line[m[3]+1:]
				changed = true
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return strings.Join(lines, "\n"), changed
}

func (d *strictDoc) collect(n *yaml.Node) {
	d.nodes = append(d.nodes, n)
	for _, c := range n.Content {
		d.collect(c)
	}
}

// offset converts a node's 1-based line and rune column into a byte offset
// in d.text, or -1.
func (d *strictDoc) offset(line, col int) int {
	if line < 1 || line > len(d.lineStart) || col < 1 {
		return -1
	}
	off := d.lineStart[line-1]
	for i := 1; i < col; i++ {
		if off >= len(d.text) || d.text[off] == '\n' {
			return -1
		}
		_, size := utf8.DecodeRuneInString(d.text[off:])
		off += size
	}
	if off >= len(d.text) {
		return -1
	}
	return off
}

// checkNode refuses what strictyaml refuses in a single node.
func (d *strictDoc) checkNode(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.AliasNode:
		return yamlProblem(n.Line, n.Column, "aliases (*%s) are not allowed", n.Value)
	case n.Anchor != "":
		return yamlProblem(n.Line, n.Column, "anchors (&%s) are not allowed; quote the value if the & is text", n.Anchor)
	case n.Style&yaml.TaggedStyle != 0 || d.startsWith(n, '!'):
		return yamlProblem(n.Line, n.Column, "tags (!) are not allowed: do not give types in the markup; quote the value if the ! is text")
	case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && !d.blockHeaderOK(n):
		return yamlProblem(n.Line, n.Column, "a block scalar indicator (| or >) may be followed only by +, - or an indentation digit, then a space or the end of the line")
	case n.Style&yaml.FlowStyle != 0:
		what := "sequence ([...])"
		if n.Kind == yaml.MappingNode {
			what = "mapping ({...})"
		}
		return yamlProblem(n.Line, n.Column, "flow-style %s is not allowed: use block style, or quote the value if the brackets are text", what)
	}
	return nil
}

var blockHeader = regexp.MustCompile(`^[|>](?:[+-]?[1-9]?|[1-9][+-])(?: |$)`)

// blockHeaderOK checks the header of a block scalar the way strictyaml's
// scanner does: "|#" or ">x" is an error there, though the Go decoder
// accepts some of them.
func (d *strictDoc) blockHeaderOK(n *yaml.Node) bool {
	off := d.offset(n.Line, n.Column)
	if off < 0 {
		return true
	}
	line := d.text[off:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return blockHeader.MatchString(line)
}

// startsWith reports whether the source text at n's position is c. The
// decoder does not mark the non-specific tag "!" on the node, but the node
// then starts at the "!", which no untagged node can.
func (d *strictDoc) startsWith(n *yaml.Node, c byte) bool {
	off := d.offset(n.Line, n.Column)
	return off >= 0 && d.text[off] == c
}

// checkTabs refuses tabs where strictyaml's scanner finds "a character that
// cannot start any token": anywhere but inside quoted scalars, block scalar
// content and comments.
func (d *strictDoc) checkTabs() error {
	if !strings.Contains(d.text, "\t") {
		return nil
	}
	protected := make([]bool, len(d.text))
	for i, n := range d.nodes {
		if n.Kind != yaml.ScalarNode {
			continue
		}
		start := d.offset(n.Line, n.Column)
		if start < 0 {
			continue
		}
		switch {
		case n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
			end := quotedEnd(d.text, start)
			for j := start; j < end; j++ {
				protected[j] = true
			}
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			stop := len(d.lineStart) + 1
			for _, m := range d.nodes[i+1:] {
				if m.Line > n.Line {
					stop = m.Line
					break
				}
			}
			d.protectBlock(protected, n.Line+1, stop)
		}
	}
	for line := 1; line <= len(d.lineStart); line++ {
		start := d.lineStart[line-1]
		end := len(d.text)
		if line < len(d.lineStart) {
			end = d.lineStart[line] - 1
		}
		for j := start; j < end; j++ {
			if protected[j] {
				continue
			}
			c := d.text[j]
			if c == '#' && (j == start || d.text[j-1] == ' ' || d.text[j-1] == '\t') {
				break // a comment runs to the end of the line
			}
			if c == '\t' {
				col := utf8.RuneCountInString(d.text[start:j]) + 1
				return yamlProblem(line, col, "found a tab character that cannot start any token: indent and separate with spaces, or quote the value")
			}
		}
	}
	return nil
}

// protectBlock marks the content lines of a block scalar, from line first up
// to (not including) line stop: lines indented at least as far as the first
// non-blank one, and blank lines. A line indented less ends the content.
func (d *strictDoc) protectBlock(protected []bool, first, stop int) {
	indent := -1
	for line := first; line < stop && line <= len(d.lineStart); line++ {
		start := d.lineStart[line-1]
		end := len(d.text)
		if line < len(d.lineStart) {
			end = d.lineStart[line] - 1
		}
		text := d.text[start:end]
		spaces := len(text) - len(strings.TrimLeft(text, " "))
		if spaces < len(text) { // something besides spaces
			if indent < 0 {
				indent = spaces
			}
			if spaces < indent || indent == 0 {
				return
			}
		}
		for j := start; j < end; j++ {
			protected[j] = true
		}
	}
}

// quotedEnd returns the offset just past the quoted scalar starting at
// text[start] (a ' or "), or len(text) if it is not closed.
func quotedEnd(text string, start int) int {
	q := text[start]
	for j := start + 1; j < len(text); j++ {
		switch {
		case q == '"' && text[j] == '\\':
			j++
		case text[j] == q:
			if q == '\'' && j+1 < len(text) && text[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// value converts a checked node. top is true for the root mapping: the
// reference drops merge keys ("<<") there but merges them below.
func (d *strictDoc) value(n *yaml.Node, top bool) (any, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c, false)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return d.mapping(n, top)
	}
	return nil, yamlProblem(n.Line, n.Column, "unexpected YAML node")
}

func (d *strictDoc) mapping(n *yaml.Node, top bool) (Fields, error) {
	out := Fields{}
	seen := map[string]bool{}
	var merges []Fields
	mergeSeen := false
	mapCol := -1
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, yamlProblem(k.Line, k.Column, "keys must be text, not a list or mapping")
		}
		if k.Tag == "!!merge" && k.Style == 0 {
			if mergeSeen {
				return nil, yamlProblem(k.Line, k.Column, "duplicate key '<<'")
			}
			mergeSeen = true
			ms, err := d.mergeValue(k, v)
			if err != nil {
				return nil, err
			}
			merges = append(merges, ms...)
			continue
		}
		if seen[k.Value] {
			return nil, yamlProblem(k.Line, k.Column, "duplicate key '%s'", k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.MappingNode {
			if mapCol < 0 {
				mapCol = v.Column
			} else if v.Column != mapCol {
				return nil, yamlProblem(v.Line, v.Column, "mapping indented unlike the mapping before it")
			}
		}
		val, err := d.value(v, false)
		if err != nil {
			return nil, err
		}
		out = append(out, Field{Key: k.Value, Value: val})
	}
	if !top {
		for _, m := range merges {
			for _, kv := range m {
				if !seen[kv.Key] {
					seen[kv.Key] = true
					out = append(out, kv)
				}
			}
		}
	}
	return out, nil
}

// mergeValue reads the value of a merge key: a mapping or a list of them.
func (d *strictDoc) mergeValue(k, v *yaml.Node) ([]Fields, error) {
	var nodes []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		nodes = []*yaml.Node{v}
	case yaml.SequenceNode:
		nodes = v.Content
	}
	if len(nodes) == 0 {
		return nil, yamlProblem(v.Line, v.Column, "expected a mapping or list of mappings for merging")
	}
	var out []Fields
	for _, m := range nodes {
		if m.Kind != yaml.MappingNode {
			return nil, yamlProblem(m.Line, m.Column, "expected a mapping for merging")
		}
		f, err := d.mapping(m, false)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ValidateFields runs the reference's checks on parsed frontmatter, in its
// order, and returns its messages (nil when valid). dirName is the skill
// folder's name for the name check; "" skips that check.
func ValidateFields(fm Fields, dirName string) []string {
	var problems []string
	var extra []string
	for _, kv := range fm {
		if !strictAllowed[kv.Key] {
			extra = append(extra, kv.Key)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		problems = append(problems, fmt.Sprintf("Unexpected fields in frontmatter: %s. Only %s are allowed.",
			strings.Join(extra, ", "), strictAllowedList))
	}

	if v, ok := fm.Get("name"); !ok {
		problems = append(problems, "Missing required field in frontmatter: name")
	} else {
		problems = append(problems, strictNameProblems(v, dirName)...)
	}

	if v, ok := fm.Get("description"); !ok {
		problems = append(problems, "Missing required field in frontmatter: description")
	} else if s, isStr := v.(string); !isStr || pyStrip(s) == "" {
		problems = append(problems, "Field 'description' must be a non-empty string")
	} else if n := utf8.RuneCountInString(s); n > MaxDescriptionLen {
		problems = append(problems, fmt.Sprintf("Description exceeds %d character limit (%d chars)", MaxDescriptionLen, n))
	}

	if v, ok := fm.Get("compatibility"); ok {
		if s, isStr := v.(string); !isStr {
			problems = append(problems, "Field 'compatibility' must be a string")
		} else if n := utf8.RuneCountInString(s); n > MaxCompatibilityLen {
			problems = append(problems, fmt.Sprintf("Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLen, n))
		}
	}
	return problems
}

func strictNameProblems(v any, dirName string) []string {
	s, ok := v.(string)
	if !ok || pyStrip(s) == "" {
		return []string{"Field 'name' must be a non-empty string"}
	}
	name := NormalizeName(pyStrip(s))
	var out []string
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		out = append(out, fmt.Sprintf("Skill name '%s' exceeds %d character limit (%d chars)", name, MaxNameLen, n))
	}
	if !isPyLower(name) {
		out = append(out, fmt.Sprintf("Skill name '%s' must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, "Skill name cannot start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		out = append(out, "Skill name cannot contain consecutive hyphens")
	}
	for _, r := range name {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			out = append(out, fmt.Sprintf("Skill name '%s' contains invalid characters. Only letters, digits, and hyphens are allowed.", name))
			break
		}
	}
	if dirName != "" && NormalizeName(dirName) != name {
		out = append(out, fmt.Sprintf("Directory name '%s' must match skill name '%s'", dirName, name))
	}
	return out
}

// isPyLower reports whether lowercasing s leaves it unchanged (Python's
// s == s.lower(); its one multi-rune mapping, U+0130, changes either way).
func isPyLower(s string) bool {
	for _, r := range s {
		if unicode.ToLower(r) != r {
			return false
		}
	}
	return true
}

// pyIsSpace is Python's str.isspace for one rune: Go's unicode.IsSpace
// plus the four ASCII separators U+001C..U+001F.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// Validate checks the skill at path the way "skills-ref validate" does and
// returns its messages, in its order; an empty list means valid. path is a
// skill folder or its SKILL.md (or skill.md) file. err is set only when the
// entry file exists but cannot be read or is not UTF-8 (the reference
// crashes there); problems is then nil.
func Validate(path string) (problems []string, err error) {
	dir := RefSkillDir(path)
	info, statErr := os.Stat(dir)
	if statErr != nil {
		return []string{"Path does not exist: " + dir}, nil
	}
	if !info.IsDir() {
		return []string{"Not a directory: " + dir}, nil
	}
	entry := findStrictEntry(dir)
	if entry == "" {
		return []string{"Missing required file: SKILL.md"}, nil
	}
	fm, err := readStrict(filepath.Join(dir, entry))
	if err != nil {
		var se *StrictError
		if errors.As(err, &se) {
			return []string{se.Message}, nil
		}
		return nil, err
	}
	return ValidateFields(fm, strictDirName(dir)), nil
}

func readStrict(file string) (Fields, error) {
	data, err := readRegular(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(file), unwrapPathError(err))
	}
	fm, err := ParseStrict(data)
	if err != nil {
		var se *StrictError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(file), err)
		}
	}
	return fm, err
}

// readRegular reads a regular file whole. The open does not block
// (O_NONBLOCK) and the type is checked on the handle, so a FIFO named
// SKILL.md is refused instead of hanging the command (internal/safefile's
// rule; skill cannot import it, as it imports skill).
func readRegular(file string) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: file, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	return io.ReadAll(f)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// strictDirName is the folder name the skill name must match. The
// reference takes the last component of the path as given, so "." and ".."
// (and "/") never match; we use the real folder's name for those.
func strictDirName(dir string) string {
	name := refPathName(dir)
	if name == "" || name == ".." {
		if abs, err := filepath.Abs(dir); err == nil {
			name = filepath.Base(abs)
		}
	}
	return name
}

// findStrictEntry returns "SKILL.md" or, failing that, "skill.md" if dir
// holds one (following symlinks, like Python's Path.exists), else "".
func findStrictEntry(dir string) string {
	for _, name := range []string{"SKILL.md", "skill.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return name
		}
	}
	return ""
}

// RefSkillDir turns a path given to a skills-ref command into the skill
// folder it means, written as Python's pathlib writes it (the reference
// prints paths that way): "./a//b/" is "a/b", "" is ".". A path to a regular
// file named SKILL.md or skill.md, in any case, means its folder.
func RefSkillDir(path string) string {
	clean := refPathClean(path)
	if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() && pyLowerString(refPathName(clean)) == "skill.md" {
		return refPathParent(clean)
	}
	return clean
}

// pyLowerString is Python's str.lower for the comparison RefSkillDir makes.
func pyLowerString(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// refPathClean, refPathName and refPathParent follow pathlib.PurePosixPath.
func refPathClean(p string) string {
	root := ""
	switch {
	case strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///"):
		root = "//"
	case strings.HasPrefix(p, "/"):
		root = "/"
	}
	parts := refPathParts(p)
	if root == "" && len(parts) == 0 {
		return "."
	}
	return root + strings.Join(parts, "/")
}

func refPathParts(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	return parts
}

func refPathName(p string) string {
	parts := refPathParts(p)
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

func refPathParent(p string) string {
	clean := refPathClean(p)
	i := strings.LastIndexByte(clean, '/')
	switch {
	case len(refPathParts(clean)) == 0:
		return clean
	case i < 0:
		return "."
	case strings.Trim(clean[:i+1], "/") == "":
		return clean[:i+1] // the root itself
	}
	return clean[:i]
}
