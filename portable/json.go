package portable

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/internal/jsondepth"
	"github.com/loadout/loadout/skill"
)

// SchemaVersion is the version ExportJSON writes.
const SchemaVersion = 2

// ExportMeta is the "metadata" object of an exported document.
type ExportMeta struct {
	// ExportedAt is written in UTC as RFC 3339; the zero time leaves the
	// field out.
	ExportedAt time.Time
	// ExportedFrom names the exporting system, e.g. "loadout".
	ExportedFrom string
	// Origin is the provenance of the exported skill (kind, plugin, trust,
	// version), written as "origin". On import it is a claim made by the
	// document, not a trust decision.
	Origin *skill.Origin
	// Digest is skill.Bundle.Digest of the skill. ExportJSON always writes
	// it; ImportJSON checks it when present.
	Digest string
}

type jsonDoc struct {
	SchemaVersion int       `json:"schemaVersion"`
	Skill         jsonSkill `json:"skill"`
	Metadata      jsonMeta  `json:"metadata"`
}

type jsonSkill struct {
	Name        string     `json:"name"`
	Slug        string     `json:"slug"`
	Description string     `json:"description"`
	Category    string     `json:"category"`
	Tags        []string   `json:"tags"`
	Version     string     `json:"version"`
	Content     string     `json:"content"`
	Files       []jsonFile `json:"files"`
}

type jsonFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	ContentType string `json:"contentType,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Executable  bool   `json:"executable,omitempty"`
	SHA256      string `json:"sha256,omitempty"`
}

type jsonMeta struct {
	ExportedAt   string        `json:"exportedAt,omitempty"`
	ExportedFrom string        `json:"exportedFrom,omitempty"`
	Origin       *skill.Origin `json:"origin,omitempty"`
	Digest       string        `json:"digest,omitempty"`
}

// ExportJSON writes b as a portable JSON document, schema version 2:
//
//	{"schemaVersion": 2,
//	 "skill": {"name", "slug", "description", "category", "tags", "version", "content",
//	           "files": [{"path", "content", "contentType", "encoding"?, "executable"?, "sha256"}]},
//	 "metadata": {"exportedAt", "exportedFrom", "origin"?, "digest"}}
//
// The output is indented and deterministic: the same bundle and meta give
// the same bytes. The bundle is checked first (on a copy; b is not
// changed), and a bundle Check refuses is not exported. SKILL.md must be
// UTF-8. See the package documentation for the format.
func ExportJSON(b *skill.Bundle, meta ExportMeta) ([]byte, error) {
	c, doc, err := checked("bundle", b)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(c.Content) {
		return nil, &Error{Source: "bundle", Entry: "SKILL.md", Code: CodeNotUTF8, Msg: "SKILL.md is not valid UTF-8, so a JSON document cannot carry it: save it as UTF-8"}
	}
	out := jsonDoc{
		SchemaVersion: SchemaVersion,
		Skill: jsonSkill{
			Name: doc.Name, Slug: doc.Name, Description: doc.Description,
			Category: doc.Category, Tags: append([]string{}, doc.Tags...), Version: doc.Version,
			Content: string(c.Content), Files: make([]jsonFile, len(c.Files)),
		},
		Metadata: jsonMeta{ExportedFrom: meta.ExportedFrom, Origin: meta.Origin, Digest: c.Digest()},
	}
	if !meta.ExportedAt.IsZero() {
		out.Metadata.ExportedAt = meta.ExportedAt.UTC().Format(time.RFC3339Nano)
	}
	for i, f := range c.Files {
		sum := sha256.Sum256(f.Data)
		jf := jsonFile{Path: f.Path, ContentType: f.ContentType, Executable: f.Executable, SHA256: hex.EncodeToString(sum[:])}
		if f.Binary || !utf8.Valid(f.Data) {
			jf.Encoding = "base64"
			jf.Content = base64.StdEncoding.EncodeToString(f.Data)
		} else {
			jf.Content = string(f.Data)
		}
		out.Skill.Files[i] = jf
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, &Error{Source: "bundle", Code: CodeJSONInvalid, Msg: err.Error(), Err: err}
	}
	return buf.Bytes(), nil
}

// ImportJSON reads one portable JSON document (schema version 2, or 1,
// or a document without schemaVersion, which is version 1) and returns the
// bundle, checked by skill.Bundle.Check.
func ImportJSON(data []byte) (*skill.Bundle, error) {
	b, _, err := ImportJSONMeta(data)
	return b, err
}

// ImportJSONMeta is ImportJSON that also returns the document's metadata.
// An exportedAt that is not RFC 3339 is ignored (left zero).
func ImportJSONMeta(data []byte) (*skill.Bundle, ExportMeta, error) {
	if err := checkJSONDepth(data); err != nil {
		return nil, ExportMeta{}, err
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, ExportMeta{}, jsonError("", err)
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return nil, ExportMeta{}, &Error{Source: "json", Code: CodeJSONInvalid, Msg: "the document is a JSON array, but one skill document (a JSON object) is expected here: put each skill in a file of its own, or send the array to POST /v1/import, which takes several"}
	}
	return importDoc(raw, "")
}

// ImportJSONMany reads a JSON array of documents (or a single document)
// and returns one bundle per document, in order. An error names the
// document by index, e.g. Entry "[2].skill.files[0]".
func ImportJSONMany(data []byte) ([]*skill.Bundle, error) {
	if err := checkJSONDepth(data); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, jsonError("", err)
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		b, _, err := importDoc(raw, "")
		if err != nil {
			return nil, err
		}
		return []*skill.Bundle{b}, nil
	}
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, jsonError("", err)
	}
	out := make([]*skill.Bundle, len(docs))
	for i, d := range docs {
		b, _, err := importDoc(d, fmt.Sprintf("[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// MaxJSONDepth bounds how deeply arrays and objects nest in an imported
// JSON document. A skill document needs 5 levels (an array of documents,
// the document, skill, files, a file); anything much deeper is refused
// before it is decoded. The document's size is bounded by the caller
// (the server's request body limit).
const MaxJSONDepth = 32

// checkJSONDepth refuses data whose arrays and objects nest deeper than
// MaxJSONDepth, in one pass over the bytes, before any decoding.
func checkJSONDepth(data []byte) error {
	if i := jsondepth.Over(data, MaxJSONDepth); i >= 0 {
		return &Error{Source: "json", Code: CodeJSONTooDeep, Msg: fmt.Sprintf("arrays and objects nest more than %d deep (at byte %d): a skill document needs a handful of levels; check that this is a loadout export", MaxJSONDepth, i+1)}
	}
	return nil
}

// inDoc is what import reads: like jsonDoc, with schemaVersion kept raw so
// "absent" and the wrong type can be told apart, and room for the bare
// skill object of a dumped database row.
type inDoc struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"`
	Skill         *jsonSkill      `json:"skill"`
	Metadata      *jsonMeta       `json:"metadata"`
}

func jsonError(prefix string, err error) error {
	e := &Error{Source: "json", Code: CodeJSONInvalid, Err: err}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		e.Msg = fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, se)
		e.Entry = prefix
	case errors.As(err, &te):
		field := te.Field
		if prefix != "" && field != "" {
			field = prefix + "." + field
		} else if field == "" {
			field = prefix
		}
		e.Entry = field
		e.Msg = fmt.Sprintf("is a JSON %s, but must be %s", te.Value, jsonTypeName(te.Type.Kind().String()))
	default:
		e.Entry = prefix
		e.Msg = err.Error()
	}
	return e
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

func importDoc(raw json.RawMessage, prefix string) (*skill.Bundle, ExportMeta, error) {
	at := func(field string) string {
		if prefix == "" {
			return field
		}
		if field == "" {
			return prefix
		}
		return prefix + "." + field
	}
	refuse := func(field, code, format string, args ...any) (*skill.Bundle, ExportMeta, error) {
		return nil, ExportMeta{}, &Error{Source: "json", Entry: at(field), Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return refuse("", CodeJSONInvalid, "a skill document must be a JSON object")
	}
	var d inDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, ExportMeta{}, jsonError(prefix, err)
	}
	version := 1
	if len(d.SchemaVersion) > 0 && string(d.SchemaVersion) != "null" {
		v, err := strconv.Atoi(string(d.SchemaVersion))
		if err != nil || v != 1 && v != 2 {
			return refuse("schemaVersion", CodeSchemaVersion, "schemaVersion %s is not supported: this version of loadout reads 1 and 2", d.SchemaVersion)
		}
		version = v
	}
	sk := d.Skill
	skillField := "skill"
	if sk == nil {
		// A dumped database row: the skill object itself, no wrapper.
		var bare jsonSkill
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, ExportMeta{}, jsonError(prefix, err)
		}
		if _, ok := keys["content"]; !ok || version == 2 {
			return refuse("skill", CodeJSONInvalid, "the document has no \"skill\" object")
		}
		if err := json.Unmarshal(raw, &bare); err != nil {
			return nil, ExportMeta{}, jsonError(prefix, err)
		}
		sk = &bare
		skillField = ""
	}
	sf := func(f string) string {
		if skillField == "" {
			return f
		}
		return skillField + "." + f
	}
	b := &skill.Bundle{Content: []byte(sk.Content)}
	if !hasFrontmatter(b.Content) {
		b.Content = synthesize(sk)
	}
	b.Files = make([]skill.BundleFile, len(sk.Files))
	for i, jf := range sk.Files {
		field := sf(fmt.Sprintf("files[%d]", i))
		f := skill.BundleFile{Path: jf.Path, Executable: jf.Executable}
		switch jf.Encoding {
		case "":
			f.Data = []byte(jf.Content)
		case "base64":
			data, err := base64.StdEncoding.Strict().DecodeString(jf.Content)
			if err != nil {
				return refuse(field, CodeBase64, "file %q: content is not valid base64: %v", jf.Path, err)
			}
			f.Data = data
		default:
			return refuse(field+".encoding", CodeEncoding, "file %q: encoding %q is unknown: use \"base64\", or leave it out for UTF-8 text", jf.Path, jf.Encoding)
		}
		if jf.SHA256 != "" {
			want, err := hex.DecodeString(strings.TrimPrefix(jf.SHA256, "sha256:"))
			if err != nil || len(want) != sha256.Size {
				return refuse(field+".sha256", CodeSHA256Invalid, "file %q: sha256 %q is not 64 hexadecimal digits", jf.Path, jf.SHA256)
			}
			got := sha256.Sum256(f.Data)
			if !bytes.Equal(got[:], want) {
				return refuse(field, CodeSHA256Mismatch, "file %q: its bytes have sha256 %x, but the document says %s: the file was changed or damaged", jf.Path, got, strings.ToLower(jf.SHA256))
			}
		}
		if jf.ContentType != "" {
			if _, _, err := mime.ParseMediaType(jf.ContentType); err == nil {
				f.ContentType = jf.ContentType
			}
		}
		b.Files[i] = f
	}
	doc, _, err := b.Check(skill.Limits{})
	if err != nil {
		e := checkError("json", err, nil).(*Error)
		var ce *skill.CheckError
		if errors.As(err, &ce) {
			p := ce.Problems[0]
			if strings.HasPrefix(p.Field, "files") {
				e.Entry = at(sf(p.Field))
				if p.Path != "" {
					e.Entry += " (" + p.Path + ")"
				}
			} else {
				e.Entry = at(sf("content"))
			}
		}
		return nil, ExportMeta{}, e
	}
	if sk.Slug != "" && sk.Slug != doc.Name {
		return refuse(sf("slug"), CodeSlugMismatch, "slug %q differs from the name %q in SKILL.md's frontmatter: make them the same", sk.Slug, doc.Name)
	}
	// category, tags and version sit beside the content too. Where the
	// frontmatter lacks one, it is added to the frontmatter (after the
	// digest check below, which is of the document as given); where the
	// two disagree, the document is refused: nothing is silently dropped.
	var extra []string
	if sk.Category != "" {
		if doc.Category == "" {
			extra = append(extra, "category: "+jsonQuote(sk.Category))
		} else if doc.Category != sk.Category {
			return refuse(sf("category"), CodeFieldMismatch, "category %q differs from the category %q in SKILL.md's frontmatter: make them the same, or leave one out", sk.Category, doc.Category)
		}
	}
	if len(sk.Tags) > 0 {
		if len(doc.Tags) == 0 {
			qs := make([]string, len(sk.Tags))
			for i, t := range sk.Tags {
				qs[i] = jsonQuote(t)
			}
			extra = append(extra, "tags: ["+strings.Join(qs, ", ")+"]")
		} else if !slices.Equal(doc.Tags, sk.Tags) {
			return refuse(sf("tags"), CodeFieldMismatch, "tags %q differ from the tags %q in SKILL.md's frontmatter: make them the same, or leave one out", sk.Tags, doc.Tags)
		}
	}
	if sk.Version != "" {
		if doc.Version == "" {
			extra = append(extra, "version: "+jsonQuote(sk.Version))
		} else if doc.Version != sk.Version {
			return refuse(sf("version"), CodeFieldMismatch, "version %q differs from the version %q in SKILL.md's frontmatter: make them the same, or leave one out", sk.Version, doc.Version)
		}
	}
	var meta ExportMeta
	if m := d.Metadata; m != nil {
		meta.ExportedFrom = m.ExportedFrom
		meta.Origin = m.Origin
		meta.Digest = m.Digest
		if t, err := time.Parse(time.RFC3339Nano, m.ExportedAt); err == nil {
			meta.ExportedAt = t
		}
		if m.Digest != "" && m.Digest != b.Digest() {
			return refuse("metadata.digest", CodeDigestMismatch, "the skill's digest is %s, but the document says %s: a file was changed, added or removed", b.Digest(), m.Digest)
		}
	}
	if len(extra) > 0 {
		content, ok := addFrontmatterLines(b.Content, extra)
		if !ok {
			return refuse(sf("content"), CodeJSONInvalid, "could not add %s to SKILL.md's frontmatter: add them there yourself", strings.Join(extra, ", "))
		}
		b.Content = content
		if _, _, err := b.Check(skill.Limits{}); err != nil {
			return nil, ExportMeta{}, checkError("json", err, nil)
		}
	}
	return b, meta, nil
}

func jsonQuote(s string) string {
	out, _ := json.Marshal(s)
	return string(out)
}

// addFrontmatterLines inserts lines (each a "key: value" of JSON strings,
// which YAML reads as double-quoted scalars) just before the closing fence
// of content's frontmatter, with content's own line ending.
func addFrontmatterLines(content []byte, lines []string) ([]byte, bool) {
	nl := "\n"
	if bytes.Contains(content, []byte("\r\n")) {
		nl = "\r\n"
	}
	// Skip the opening fence line.
	i := bytes.IndexByte(content, '\n')
	if i < 0 {
		return nil, false
	}
	pos := i + 1
	for pos < len(content) {
		end := bytes.IndexByte(content[pos:], '\n')
		line := content[pos:]
		if end >= 0 {
			line = content[pos : pos+end]
		}
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			var out bytes.Buffer
			out.Grow(len(content) + 64*len(lines))
			out.Write(content[:pos])
			for _, l := range lines {
				out.WriteString(l)
				out.WriteString(nl)
			}
			out.Write(content[pos:])
			return out.Bytes(), true
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return nil, false
}

// hasFrontmatter reports whether content opens with a "---" line (after an
// optional byte order mark), as skill.Split requires.
func hasFrontmatter(content []byte) bool {
	content = bytes.TrimPrefix(content, []byte("\uFEFF"))
	first, _, _ := bytes.Cut(content, []byte("\n"))
	return string(bytes.TrimRight(first, " \t\r")) == "---"
}

// synthesize gives a SKILL.md to content without frontmatter (database
// rows keep name and description beside the text): the
// frontmatter is built from slug (or name), description, category, tags
// and version, every value a JSON string (which YAML reads as a
// double-quoted scalar).
func synthesize(sk *jsonSkill) []byte {
	var b bytes.Buffer
	q := jsonQuote
	name := sk.Slug
	if name == "" {
		name = sk.Name
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "name: %s\n", q(name))
	fmt.Fprintf(&b, "description: %s\n", q(sk.Description))
	if sk.Category != "" {
		fmt.Fprintf(&b, "category: %s\n", q(sk.Category))
	}
	if len(sk.Tags) > 0 {
		qs := make([]string, len(sk.Tags))
		for i, t := range sk.Tags {
			qs[i] = q(t)
		}
		fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(qs, ", "))
	}
	if sk.Version != "" {
		fmt.Fprintf(&b, "version: %s\n", q(sk.Version))
	}
	b.WriteString("---\n")
	b.WriteString(sk.Content)
	return b.Bytes()
}
