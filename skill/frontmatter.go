package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Frontmatter holds every field of a SKILL.md header. The fields of the
// open format and of loadout's extensions are typed; Raw keeps every key as
// written, in order, so nothing is lost. Scalars keep their written text:
// "version: 1.0" is the string "1.0", never a float.
type Frontmatter struct {
	Name          string            `json:"name,omitempty"`
	Description   string            `json:"description,omitempty"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowedTools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`

	// loadout's extensions, read at the top level or under metadata
	// (MetadataFields).
	Version       string   `json:"version,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	Category      string   `json:"category,omitempty"`
	RequiresTools []string `json:"requiresTools,omitempty"`

	// Claude Code's switch: hide the skill from the model's listing.
	DisableModelInvocation bool `json:"disableModelInvocation,omitempty"`

	// Raw is the whole frontmatter as written: every key in order, scalars
	// as their text, sequences as []any, mappings as Fields.
	Raw Fields `json:"raw,omitempty"`
}

// Field is one key of a YAML mapping.
type Field struct {
	Key   string
	Value any // string, []any or Fields
}

// Fields is an ordered mapping. It marshals to a JSON object in key order.
type Fields []Field

// Get returns the value of key and whether it is present.
func (f Fields) Get(key string) (any, bool) {
	for _, kv := range f {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Keys lists the keys in order.
func (f Fields) Keys() []string {
	keys := make([]string, len(f))
	for i, kv := range f {
		keys[i] = kv.Key
	}
	return keys
}

// MarshalJSON writes the fields as a JSON object, in order.
func (f Fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object, keeping key order. Numbers, booleans
// and null keep their JSON text, as scalars do in YAML.
func (f *Fields) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeOrdered(dec, 0)
	if err != nil {
		return err
	}
	fs, ok := v.(Fields)
	if !ok {
		return errors.New("frontmatter must be a JSON object")
	}
	*f = fs
	return nil
}

// maxJSONDepth bounds the nesting decodeOrdered follows, as
// encoding/json bounds its own (json.Decoder.Token does not). Frontmatter
// stored before MaxFrontmatterDepth existed may nest deeper than it, so
// this is the looser bound of the JSON package.
const maxJSONDepth = 10000

func decodeOrdered(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth++; depth > maxJSONDepth {
			return nil, fmt.Errorf("frontmatter JSON nests more than %d deep", maxJSONDepth)
		}
		switch t {
		case '{':
			fs := Fields{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec, depth)
				if err != nil {
					return nil, err
				}
				fs = append(fs, Field{Key: kt.(string), Value: v})
			}
			_, err := dec.Token()
			return fs, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec, depth)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
	case string:
		return t, nil
	case json.Number:
		return t.String(), nil
	case bool:
		return strconv.FormatBool(t), nil
	case nil:
		return "", nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// Split separates a SKILL.md into its frontmatter text and its body. CRLF
// and lone CR line ends are normalised to LF first. The frontmatter sits
// between a first line "---" and the next line that is "---" (trailing
// blanks allowed); both fences are anchored at line starts. The body is
// everything after the closing fence line. hadBOM reports a UTF-8 byte
// order mark, which Split skips.
func Split(data []byte) (front, body string, hadBOM bool, err error) {
	f, b, hadBOM, err := splitBytes(data)
	if err == errNoFrontmatter {
		return "", string(b), hadBOM, err
	}
	return string(f), string(b), hadBOM, err
}

// HeaderComplete reports whether prefix, the start of a SKILL.md, holds
// everything ParseHeader needs: ParseHeader of prefix then gives the same
// document and diagnostics as ParseHeader of the whole file. That is so
// once the lines it holds whole (up to its last line break) close the
// frontmatter, or show that there is none. A reader can stop there and
// leave the body unread.
func HeaderComplete(prefix []byte) bool {
	i := bytes.LastIndexByte(prefix, '\n')
	if i < 0 {
		return false
	}
	// The lines up to a line break are the same lines in the whole file
	// (a CR before it is followed by it, so CRLF is not cut in two), and
	// splitBytes looks at nothing after the closing fence line.
	_, _, _, err := splitBytes(prefix[:i+1])
	return err != errUnclosed
}

// splitBytes is Split without copying: front and body share data's
// memory unless line ends had to be normalised.
func splitBytes(data []byte) (front, body []byte, hadBOM bool, err error) {
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	if bytes.HasPrefix(data, bom) {
		data = data[len(bom):]
		hadBOM = true
	}
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t")) != "---" {
		return nil, data, hadBOM, errNoFrontmatter
	}
	if !ok {
		return nil, nil, hadBOM, errUnclosed
	}
	pos := 0
	for pos <= len(rest) {
		end := bytes.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		if end >= 0 {
			line = rest[pos : pos+end]
		}
		if string(bytes.TrimRight(line, " \t")) == "---" {
			front = rest[:pos]
			if end >= 0 {
				body = rest[pos+end+1:]
			}
			return front, body, hadBOM, nil
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return nil, nil, hadBOM, errUnclosed
}

var bom = []byte("\uFEFF")

var (
	errNoFrontmatter = errors.New("SKILL.md must start with a frontmatter fence (---) on its first line")
	errUnclosed      = errors.New("SKILL.md frontmatter is not closed: add a line holding only --- after the last field")
)

// Document is a leniently parsed SKILL.md.
type Document struct {
	Frontmatter
	// Body is the Markdown after the frontmatter, as written.
	Body string
}

// Parse reads a SKILL.md leniently, the way discovery does. dirName is the
// name of the skill's folder (used when the name is missing and to check it).
// ok is false when the skill must be skipped: no usable description, or
// frontmatter that cannot be parsed even after quoting values that contain
// ": ". Diagnostics carry path, which may be empty.
func Parse(data []byte, path, dirName string) (doc *Document, diags []Diagnostic, ok bool) {
	return parse(data, path, dirName, true, true)
}

// ParseHeader is Parse without the body (Document.Body is empty). It is
// what discovery uses: bodies are read again on activation, so a catalog
// of many skills does not hold them.
func ParseHeader(data []byte, path, dirName string) (doc *Document, diags []Diagnostic, ok bool) {
	return parse(data, path, dirName, false, true)
}

// ParseHeaderTransient is ParseHeader for a caller that copies what it
// keeps of the Document at once (Frontmatter.TypedOnly, Batch.New), as
// loadout check and list do. ParseHeader moves the text of every field
// into one string of its own (so that a kept Document holds nothing else
// of the file), a copy such a caller would only make again; here the
// fields point into one copy of the whole frontmatter, which a kept
// Document keeps alive.
func ParseHeaderTransient(data []byte, path, dirName string) (doc *Document, diags []Diagnostic, ok bool) {
	return parse(data, path, dirName, false, false)
}

func parse(data []byte, path, dirName string, keepBody, compact bool) (doc *Document, diags []Diagnostic, ok bool) {
	report := func(sev Severity, code, field, format string, args ...any) {
		diags = append(diags, Diagnostic{Severity: sev, Code: code, Path: path, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !compact {
		// Only the Document may point into the frontmatter's text: what
		// the caller may keep beyond it (the diagnostics, and the name it
		// puts in later ones) gets text of its own.
		defer func() {
			for i := range diags {
				diags[i].Field, diags[i].Skill = strings.Clone(diags[i].Field), strings.Clone(diags[i].Skill)
			}
			if doc != nil {
				doc.Name = strings.Clone(doc.Name)
			}
		}()
	}
	frontB, bodyB, hadBOM, err := splitBytes(data)
	if hadBOM {
		report(Warning, CodeBOM, "", "file starts with a UTF-8 byte order mark; it was skipped, but other tools reject it: save the file without a BOM")
	}
	if err != nil {
		code := CodeNoFrontmatter
		if err == errUnclosed {
			code = CodeFrontmatterUnclosed
		}
		report(Error, code, "", "%v; skill skipped", err)
		return nil, diags, false
	}
	if len(frontB) > MaxFrontmatterBytes {
		report(Error, CodeFrontmatterTooLarge, "", "the frontmatter is %d bytes, over the %d-byte limit; skill skipped: keep the frontmatter to short fields and move long text into the body or a file of the skill", len(frontB), MaxFrontmatterBytes)
		return nil, diags, false
	}
	fp := getFastParser()
	defer fp.release() // after fill: the Frontmatter holds no node
	root, retried, err := parseYAML(string(frontB), fp)
	if be, over := err.(*boundError); over {
		report(Error, be.code, "", "%s; skill skipped", be.msg)
		return nil, diags, false
	}
	if err != nil {
		report(Error, CodeYAMLInvalid, "", "invalid YAML in frontmatter: %v; skill skipped%s", err, quotingHint(string(frontB)))
		return nil, diags, false
	}
	if retried != "" {
		report(Warning, CodeYAMLQuoted, retried, "frontmatter is not valid YAML as written; it loaded after quoting the value of %q: quote values that contain \": \"", retried)
	}
	doc = &Document{}
	if keepBody {
		doc.Body = string(bodyB)
	}
	if root != nil && root.Kind != yaml.MappingNode {
		report(Error, CodeNotMapping, "", "frontmatter must be a YAML mapping of fields (key: value), not a %s; skill skipped", kindName(root))
		return nil, diags, false
	}
	if compact {
		compactText(root)
	}
	fieldDiags := doc.Frontmatter.fill(root)
	for _, d := range fieldDiags {
		d.Path = path
		diags = append(diags, d)
	}
	fm := &doc.Frontmatter
	if strings.TrimSpace(fm.Description) == "" {
		if _, present := fm.Raw.Get("description"); present && !hasDiag(fieldDiags, "description") {
			report(Error, CodeDescriptionMissing, "description", "description is empty; skill skipped: say what the skill does and when to use it")
		} else if !present {
			report(Error, CodeDescriptionMissing, "description", "description is required; skill skipped: add a description field saying what the skill does and when to use it")
		}
		return doc, diags, false
	}
	if n := runeCount(fm.Description); n > MaxDescriptionLen {
		report(Warning, CodeDescriptionLong, "description", "description exceeds %d characters (%d); agents may cut it", MaxDescriptionLen, n)
	}
	if strings.TrimSpace(fm.Name) == "" {
		if !hasDiag(fieldDiags, "name") {
			report(Warning, CodeNameMissing, "name", "name is missing; using the directory name %q: add name: %s", dirName, dirName)
		}
		fm.Name = dirName
	} else {
		fm.Name = strings.TrimSpace(fm.Name)
		for _, p := range NameProblems(fm.Name) {
			report(Warning, p.Code, "name", "%s", p.Message)
		}
		if dirName != "" && !SameName(fm.Name, dirName) {
			report(Warning, CodeNameMismatch, "name", "name %q does not match parent directory %q: rename one of them", fm.Name, dirName)
		}
	}
	if i := strings.IndexFunc(fm.Name, func(r rune) bool { return isControl(r, false) || isInvisible(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(fm.Name[i:])
		report(Error, CodeControlChar, "name", "the name %q holds %s, an invisible or control character that would reach terminals and agents; skill skipped: use lowercase letters, digits and hyphens", fm.Name, describeRune(r))
		return doc, diags, false
	}
	if n := runeCount(fm.Compatibility); n > MaxCompatibilityLen {
		report(Warning, CodeCompatibilityLong, "compatibility", "compatibility exceeds %d characters (%d)", MaxCompatibilityLen, n)
	}
	for _, d := range textProblems(fm.Raw, Warning) {
		if d.Field == "name" {
			continue // the name check above had its say
		}
		d.Path = path
		diags = append(diags, d)
	}
	return doc, diags, true
}

func hasDiag(ds []Diagnostic, field string) bool {
	for _, d := range ds {
		if d.Field == field {
			return true
		}
	}
	return false
}

// compactText moves the text of every node of the decoded frontmatter
// (keys and scalar values) into one string made for it, so that what a
// parsed Frontmatter keeps (every string of it is a node's text or a part
// of one) holds neither the whole frontmatter text nor the file it was
// read from, and costs one allocation instead of one per value. Each node
// is visited once: aliases are not followed (their targets are in the
// tree), and checkBounds has refused cycles.
func compactText(root *yaml.Node) {
	if root == nil {
		return
	}
	total := 0
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		total += len(n.Value)
		for _, c := range n.Content {
			count(c)
		}
	}
	count(root)
	if total == 0 {
		return
	}
	var b strings.Builder
	b.Grow(total)
	var copyText func(n *yaml.Node)
	copyText = func(n *yaml.Node) {
		b.WriteString(n.Value)
		for _, c := range n.Content {
			copyText(c)
		}
	}
	copyText(root)
	arena := b.String()
	var assign func(n *yaml.Node)
	assign = func(n *yaml.Node) {
		l := len(n.Value)
		n.Value, arena = arena[:l], arena[l:]
		for _, c := range n.Content {
			assign(c)
		}
	}
	assign(root)
}

// parseYAML parses frontmatter text into its root node (nil when empty).
// On failure it retries once with unquoted values that contain ": " quoted;
// retried names the first key it quoted.
func parseYAML(front string, fp *fastParser) (root *yaml.Node, retried string, err error) {
	root, err = decodeNode(front, fp)
	if err == nil {
		return root, "", nil
	}
	if _, over := err.(*boundError); over {
		return nil, "", err
	}
	fixed, key := quoteColonValues(front)
	if key == "" {
		return nil, "", cleanYAMLError(err)
	}
	root, err2 := decodeNode(fixed, fp)
	if err2 == nil {
		return root, key, nil
	}
	if _, over := err2.(*boundError); over {
		return nil, "", err2
	}
	return nil, "", cleanYAMLError(err)
}

// decodeNode decodes frontmatter text. The fast path makes only flat,
// alias-free trees; what the full decoder makes is measured (checkBounds)
// before anything walks it, and a *boundError is returned when it is over
// a bound.
func decodeNode(text string, fp *fastParser) (*yaml.Node, error) {
	if n, ok := fp.parse(text); ok {
		return n, nil
	}
	n, err := decodeFull(text)
	if err != nil {
		return nil, err
	}
	if err := checkBounds(n); err != nil {
		return nil, err
	}
	return n, nil
}

func decodeFull(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

func cleanYAMLError(err error) error {
	// Line numbers count from the first line after the opening fence, so
	// they are shifted by one to match the file.
	return errors.New(fileLineYAMLError(err, 1))
}

// fileLineYAMLError is the YAML library's error text without its "yaml: "
// prefix and with its line number made a line of SKILL.md: shifted by
// the lines before the text parsed (1 for the frontmatter alone, 0 for
// validate's, which starts with a blank line for the fence), and by one
// more for parser errors, which the library counts from 0 (the line of
// the construct left open, e.g. an unclosed flow list), where it counts
// scanner errors from 1. check and validate so name the same line.
func fileLineYAMLError(err error, before int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		shift := before
		if yamlParserProblems[strings.TrimSpace(msg[m[1]:])] {
			shift++
		}
		msg = msg[:m[2]] + strconv.Itoa(n+shift) + msg[m[3]:]
	}
	return msg
}

var yamlLineRE = regexp.MustCompile(`^line (\d+):`)

// yamlParserProblems are the problems gopkg.in/yaml.v3 reports as parser
// (not scanner) errors, whose line numbers are 0-based.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// quotingHint is the advice to quote a value, given only when a top-level
// plain value is of a kind that needs quoting: it contains ": " or " #",
// ends with ":", or starts with a character YAML reserves (@ or `). It
// names the field and its line in the file; it is "" when no value is.
func quotingHint(front string) string {
	for i, line := range strings.Split(front, "\n") {
		m := plainKeyValue.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := m[2]
		switch {
		case strings.ContainsAny(v[:1], "@`"):
			return fmt.Sprintf(" (the value of %q on line %d starts with %q, which YAML reserves: put the value in double quotes)", m[1], i+2, v[:1])
		case strings.ContainsAny(v[:1], `"'[{|>&*!%`):
			continue
		case strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":"):
			return fmt.Sprintf(" (the value of %q on line %d contains \": \", \" #\" or ends with \":\": put the value in double quotes)", m[1], i+2)
		}
	}
	return ""
}

var plainKeyValue = regexp.MustCompile(`^([A-Za-z0-9_.-]+):[ \t]+(.*\S)[ \t]*$`)

// quoteColonValues double-quotes top-level plain values that contain ": "
// or " #", the commonest reason hand-written frontmatter fails to parse.
func quoteColonValues(front string) (string, string) {
	lines := strings.Split(front, "\n")
	first := ""
	for i, line := range lines {
		m := plainKeyValue.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := m[2]
		if strings.ContainsAny(v[:1], `"'[{|>&*!%@`+"`") {
			continue
		}
		if !strings.Contains(v, ": ") && !strings.Contains(v, " #") && !strings.HasSuffix(v, ":") {
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(v)
		if first == "" {
			first = m[1]
		}
	}
	return strings.Join(lines, "\n"), first
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// fill sets the typed fields and Raw from a mapping node. It never fails:
// a field of the wrong type is reported and left empty.
func (fm *Frontmatter) fill(root *yaml.Node) []Diagnostic {
	if root == nil {
		return nil
	}
	var diags []Diagnostic
	wrong := func(key, want string, n *yaml.Node) {
		diags = append(diags, Diagnostic{Severity: Warning, Code: CodeFieldType, Field: key,
			Message: fmt.Sprintf("field %q must be %s, not a %s (line %d); it was ignored", key, want, kindName(n), n.Line+1)})
	}
	fm.Raw = make(Fields, 0, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], resolveAlias(root.Content[i+1])
		key := kn.Value
		fm.Raw = append(fm.Raw, Field{Key: key, Value: nodeValue(vn)})
		switch key {
		case "name", "description", "license", "compatibility", "version", "category":
			s, ok := scalarText(vn)
			if !ok {
				wrong(key, "a string", vn)
				if key == "description" {
					diags[len(diags)-1].Severity = Error
					diags[len(diags)-1].Code = CodeDescriptionMissing
					diags[len(diags)-1].Message = fmt.Sprintf("description must be a string, not a %s (line %d); skill skipped: write it as one line of text", kindName(vn), vn.Line+1)
				}
				if key == "name" {
					diags[len(diags)-1].Message = fmt.Sprintf("name must be a string, not a %s (line %d); using the directory name instead", kindName(vn), vn.Line+1)
				}
				continue
			}
			switch key {
			case "name":
				fm.Name = s
			case "description":
				fm.Description = s
			case "license":
				fm.License = s
			case "compatibility":
				fm.Compatibility = s
			case "version":
				fm.Version = s
			case "category":
				fm.Category = s
			}
		case "allowed-tools", "tags", "requires-tools":
			list, ok := stringList(vn, key == "allowed-tools")
			if !ok {
				wrong(key, "a string or a list of strings", vn)
				continue
			}
			switch key {
			case "allowed-tools":
				fm.AllowedTools = list
			case "tags":
				fm.Tags = list
			case "requires-tools":
				fm.RequiresTools = list
			}
		case "metadata":
			if vn.Kind != yaml.MappingNode {
				if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
					continue
				}
				wrong(key, "a mapping of strings", vn)
				continue
			}
			fm.Metadata = make(map[string]string, len(vn.Content)/2)
			for j := 0; j+1 < len(vn.Content); j += 2 {
				v, ok := scalarText(resolveAlias(vn.Content[j+1]))
				if !ok {
					wrong("metadata."+vn.Content[j].Value, "a string", vn.Content[j+1])
					continue
				}
				fm.Metadata[vn.Content[j].Value] = v
			}
		case "disable-model-invocation":
			s, ok := scalarText(vn)
			b, err := strconv.ParseBool(strings.ToLower(s))
			if !ok || err != nil {
				wrong(key, "true or false", vn)
				continue
			}
			fm.DisableModelInvocation = b
		}
	}
	diags = append(diags, fm.fromMetadata()...)
	return diags
}

// TypedOnly drops what only Raw and Metadata hold, for a program that
// reads the typed fields alone and keeps many of them (loadout check and
// list): Raw and Metadata are set to nil, and the typed fields' text is
// copied into one string of its own, so the text of every other key and
// value can be freed. The typed fields keep their values; what metadata
// set (version, category, tags, requires-tools,
// disable-model-invocation) is already in them.
func (fm *Frontmatter) TypedOnly() {
	fm.Raw, fm.Metadata = nil, nil
	lists := [][]string{fm.AllowedTools, fm.Tags, fm.RequiresTools}
	strs := []*string{&fm.Name, &fm.Description, &fm.License, &fm.Compatibility, &fm.Version, &fm.Category}
	total := 0
	for _, p := range strs {
		total += len(*p)
	}
	for _, l := range lists {
		for _, v := range l {
			total += len(v)
		}
	}
	var b strings.Builder
	b.Grow(total)
	for _, p := range strs {
		b.WriteString(*p)
	}
	for _, l := range lists {
		for _, v := range l {
			b.WriteString(v)
		}
	}
	arena := b.String()
	take := func(n int) string {
		s := arena[:n]
		arena = arena[n:]
		return s
	}
	for _, p := range strs {
		*p = take(len(*p))
	}
	for i, l := range lists {
		if l == nil {
			continue
		}
		out := make([]string, len(l))
		for j, v := range l {
			out[j] = take(len(v))
		}
		lists[i] = out
	}
	fm.AllowedTools, fm.Tags, fm.RequiresTools = lists[0], lists[1], lists[2]
}

// MetadataFields are loadout's extension fields that may also be written
// under metadata (as strings), which keeps a skill to the open format's
// top-level fields, as skills-ref validate (loadout validate) requires: a
// top-level field wins over its metadata copy. tags and requires-tools
// there are comma-separated lists; disable-model-invocation is "true" or
// "false".
var MetadataFields = []string{"version", "category", "tags", "requires-tools", "disable-model-invocation"}

// fromMetadata fills the extension fields the top level does not have from
// metadata.
func (fm *Frontmatter) fromMetadata() []Diagnostic {
	if len(fm.Metadata) == 0 {
		return nil
	}
	top := map[string]bool{}
	for _, f := range fm.Raw {
		top[f.Key] = true
	}
	list := func(v string) []string {
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	var diags []Diagnostic
	for _, key := range MetadataFields {
		v, ok := fm.Metadata[key]
		if !ok || top[key] {
			continue
		}
		switch key {
		case "version":
			fm.Version = v
		case "category":
			fm.Category = v
		case "tags":
			fm.Tags = list(v)
		case "requires-tools":
			fm.RequiresTools = list(v)
		case "disable-model-invocation":
			b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(v)))
			if err != nil {
				diags = append(diags, Diagnostic{Severity: Warning, Code: CodeFieldType, Field: "metadata." + key,
					Message: fmt.Sprintf("metadata.%s must be \"true\" or \"false\", not %q; it was ignored", key, v)})
				continue
			}
			fm.DisableModelInvocation = b
		}
	}
	return diags
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// scalarText returns the written text of a scalar; null is "" and ok.
func scalarText(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Tag == "!!null" && n.Style == 0 {
		return "", true
	}
	return n.Value, true
}

// stringList accepts a list of scalars or one string; a string is split on
// whitespace when spaceSep, else on commas and whitespace.
func stringList(n *yaml.Node, spaceSep bool) ([]string, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		s, _ := scalarText(n)
		var parts []string
		if spaceSep {
			parts = strings.Fields(s)
		} else {
			parts = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		}
		return parts, true
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			s, ok := scalarText(resolveAlias(c))
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// nodeValue converts a node to string, []any or Fields.
func nodeValue(n *yaml.Node) any {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = nodeValue(c)
		}
		return out
	case yaml.MappingNode:
		out := make(Fields, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, Field{Key: n.Content[i].Value, Value: nodeValue(n.Content[i+1])})
		}
		return out
	}
	s, _ := scalarText(n)
	return s
}

// normalizeNewlines returns data as text with CRLF and lone CR made LF.
func normalizeNewlines(data []byte) string {
	if bytes.IndexByte(data, '\r') < 0 {
		return string(data)
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
