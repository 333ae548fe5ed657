package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Bundle is a whole skill in memory: its SKILL.md and every supporting
// file, as bytes. It is what the store saves, what portable formats read
// and write, and what plugins contribute.
type Bundle struct {
	// Content is the SKILL.md text, frontmatter included.
	Content []byte
	// Files are the supporting files (never SKILL.md), sorted by Path after
	// Check.
	Files []BundleFile
}

// BundleFile is one supporting file of a Bundle.
type BundleFile struct {
	Path       string
	Data       []byte
	Executable bool
	// ContentType is optional on input; Check fills it in.
	ContentType string
	// Binary is set by Check (from the name, or by sniffing the bytes).
	Binary bool
}

// Limits bound what may be stored. Zero fields take the defaults.
type Limits struct {
	MaxFileSize  int64 // default 1 MiB
	MaxTotalSize int64 // SKILL.md and all files; default 16 MiB
	MaxFiles     int   // supporting files; default 512
	// WarnTextSize raises a warning for a text file above it; default 50 KB.
	WarnTextSize int64
}

// Default storage limits: 16 MiB and 512 files are what MCP hosts must
// accept for one skill.
const (
	DefaultMaxFileSize  = 1 << 20
	DefaultMaxTotalSize = 16 << 20
	DefaultMaxFiles     = 512
	DefaultWarnTextSize = 50_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.WarnTextSize <= 0 {
		l.WarnTextSize = DefaultWarnTextSize
	}
	return l
}

// Refusal codes of Bundle.Check, besides the path codes.
const (
	CodeTooLarge      = "too-large"      // a file or the skill is over a limit
	CodeTooManyFiles  = "too-many-files" // over MaxFiles
	CodeDuplicatePath = "duplicate-path"
	CodeNameInvalid   = "name-invalid" // the name breaks the spec's rules
	CodeLargeText     = "large-text"   // warning: a text file over WarnTextSize
	CodeContentType   = "content-type-invalid"
)

// validContentType accepts a media type as mime.ParseMediaType reads it,
// written in printable ASCII: it is sent as a Content-Type header.
func validContentType(ct string) bool {
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return false
		}
	}
	_, _, err := mime.ParseMediaType(ct)
	return err == nil
}

// CheckError is a refused bundle. Every problem found is listed; Field is
// "content" for SKILL.md, "files[i]" for a file, or a frontmatter field.
type CheckError struct {
	Problems []Diagnostic
}

func (e *CheckError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// Check decides whether a bundle may be stored, and normalises it: file
// paths go through CleanFilePath (the one path check, which also refuses a
// second SKILL.md at the top; one in a folder is a supporting file, with a
// nested-skill warning), files are sorted, content types and binary flags are
// filled in. It refuses what lenient loading would skip (no description,
// YAML that cannot be parsed, frontmatter over the bounds of Parse), a
// name that breaks the spec's rules, control characters in SKILL.md
// (other than tab and line breaks) or in a frontmatter key or value, two
// files whose names are equal in Unicode normal form C, a content type
// that is not a media type, and anything over the limits. Every refusal
// names the field or file at fault, and the character position for
// control characters. It is the one write gate: every store refuses the
// same bundles.
// On success it returns the parsed document and any warnings.
func (b *Bundle) Check(lim Limits) (*Document, []Diagnostic, error) {
	lim = lim.withDefaults()
	var problems, warnings []Diagnostic
	refuse := func(code, field, path, format string, args ...any) {
		problems = append(problems, Diagnostic{Severity: Error, Code: code, Field: field, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	doc, diags, ok := Parse(b.Content, "SKILL.md", "")
	for _, d := range diags {
		d.Path = "SKILL.md"
		if d.Code == CodeControlChar {
			d.Severity = Error // lenient loading warns; storing refuses
		}
		if d.Severity == Error {
			if d.Field == "" {
				d.Field = "content"
			}
			problems = append(problems, d)
		} else if d.Code != CodeNameMissing {
			warnings = append(warnings, d)
		}
	}
	if ok {
		if strings.TrimSpace(doc.Name) == "" {
			refuse(CodeNameInvalid, "name", "SKILL.md", "the frontmatter has no name: add name: with lowercase letters, digits and hyphens")
		} else {
			for _, p := range NameProblems(doc.Name) {
				refuse(CodeNameInvalid, "name", "SKILL.md", "name %q: %s", doc.Name, p.Message)
			}
		}
	}
	if d := contentControl(b.Content); d != nil {
		problems = append(problems, *d)
	}
	total := int64(len(b.Content))
	if int64(len(b.Content)) > lim.MaxFileSize {
		refuse(CodeTooLarge, "content", "SKILL.md", "SKILL.md is %d bytes, over the %d-byte limit per file", len(b.Content), lim.MaxFileSize)
	}
	if len(b.Files) > lim.MaxFiles {
		refuse(CodeTooManyFiles, "files", "", "the skill has %d files, over the limit of %d", len(b.Files), lim.MaxFiles)
	}
	seen := map[string]int{}
	// nfc holds each path in Unicode normal form C: "é" written as one
	// code point or as "e" and a combining accent are two names to Linux
	// but one to macOS and to a person reading a listing.
	nfc := map[string]int{}
	for i := range b.Files {
		f := &b.Files[i]
		field := fmt.Sprintf("files[%d]", i)
		clean, err := CleanFilePath(f.Path)
		if err != nil {
			pe := err.(*PathError)
			refuse(pe.Code, field, f.Path, "%s", err.Error())
			continue
		}
		if j, dup := seen[clean]; dup {
			refuse(CodeDuplicatePath, field, clean, "files[%d] and files[%d] both have the path %q", j, i, clean)
			continue
		}
		seen[clean] = i
		if j, dup := nfc[norm.NFC.String(clean)]; dup {
			refuse(CodeDuplicatePath, field, clean, "files[%d] %q and files[%d] %q are the same name written in different Unicode forms (composed and decomposed accents): keep one of them", j, b.Files[j].Path, i, clean)
			continue
		}
		nfc[norm.NFC.String(clean)] = i
		f.Path = clean
		if IsNestedEntry(clean) {
			warnings = append(warnings, Diagnostic{Severity: Warning, Code: CodeNestedSkill, Field: field, Path: clean,
				Message: fmt.Sprintf("%s is a SKILL.md inside this skill: it is one of this skill's files, not a separate skill. Move its folder out to make it a skill", clean)})
		}
		if f.ContentType != "" && !validContentType(f.ContentType) {
			refuse(CodeContentType, field+".contentType", clean, "%s: the content type %q is not a media type such as text/markdown: give a valid one, or leave it out to have it detected", clean, f.ContentType)
		}
		size := int64(len(f.Data))
		total += size
		if size > lim.MaxFileSize {
			refuse(CodeTooLarge, field, clean, "%s is %d bytes, over the %d-byte limit per file", clean, size, lim.MaxFileSize)
		}
		ct, bin, known := TypeByName(clean)
		if !known {
			head := f.Data
			if len(head) > 512 {
				head = head[:512]
			}
			ct, bin = Sniff(head)
		}
		if !bin && !utf8.Valid(f.Data) {
			bin = true
			if !known {
				ct = "application/octet-stream"
			}
		}
		if f.ContentType == "" {
			f.ContentType = ct
		}
		f.Binary = bin
		if !bin && size > lim.WarnTextSize {
			warnings = append(warnings, Diagnostic{Severity: Warning, Code: CodeLargeText, Field: field, Path: clean,
				Message: fmt.Sprintf("%s is a %d-byte text file; agents read text over %d bytes in pieces, so consider splitting it", clean, size, lim.WarnTextSize)})
		}
	}
	// A file cannot also be a folder of another file's path, and paths that
	// differ only in case collide on case-insensitive file systems.
	lower := map[string]string{}
	for p := range seen {
		for d := norm.NFC.String(p); ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			if j, clash := nfc[d]; clash {
				refuse(CodeDuplicatePath, fmt.Sprintf("files[%d]", j), d, "%q is a file, but %q needs it to be a folder", d, p)
			}
		}
		if other, ok := lower[strings.ToLower(p)]; ok {
			a, b := min(p, other), max(p, other)
			warnings = append(warnings, Diagnostic{Severity: Warning, Code: CodeDuplicatePath, Path: b,
				Message: fmt.Sprintf("%q and %q differ only in case; on macOS and Windows they are the same file", a, b)})
		}
		lower[strings.ToLower(p)] = p
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].Field < problems[j].Field })
	sort.Slice(warnings, func(i, j int) bool { return warnings[i].Path < warnings[j].Path })
	if total > lim.MaxTotalSize {
		refuse(CodeTooLarge, "files", "", "the skill is %d bytes in all, over the limit of %d", total, lim.MaxTotalSize)
	}
	if len(problems) > 0 {
		return nil, warnings, &CheckError{Problems: problems}
	}
	sort.Slice(b.Files, func(i, j int) bool { return b.Files[i].Path < b.Files[j].Path })
	return doc, warnings, nil
}

// Digest is "sha256:<hex>" over the exact bytes of the bundle: SKILL.md,
// then each file's path, executable bit and bytes, in path order. Two
// bundles with the same digest are byte-identical. Call it after Check.
func (b *Bundle) Digest() string {
	h := sha256.New()
	writeField := func(p []byte) {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	writeField(b.Content)
	for _, f := range b.Files {
		writeField([]byte(f.Path))
		if f.Executable {
			h.Write([]byte{'x'})
		} else {
			h.Write([]byte{'-'})
		}
		writeField(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Manifest lists the bundle's files as a skill manifest.
func (b *Bundle) Manifest() []File {
	out := make([]File, len(b.Files))
	for i, f := range b.Files {
		out[i] = File{Path: f.Path, Size: int64(len(f.Data)), ContentType: f.ContentType, Binary: f.Binary,
			Executable: f.Executable, Script: IsScript(f.Path, f.Executable)}
	}
	return out
}

// Reader returns a skill.Reader over the bundle's bytes.
func (b *Bundle) Reader() Reader { return bundleReader{b} }

type bundleReader struct{ b *Bundle }

func (r bundleReader) ReadFile(p string) ([]byte, error) {
	if p == "SKILL.md" {
		return r.b.Content, nil
	}
	i := sort.Search(len(r.b.Files), func(i int) bool { return r.b.Files[i].Path >= p })
	if i < len(r.b.Files) && r.b.Files[i].Path == p {
		return r.b.Files[i].Data, nil
	}
	return nil, fmt.Errorf("%s: %w", p, ErrNotListed)
}

// NewVirtual builds a Skill that does not live in a folder of its own on
// disk (stored or contributed skills): loc is its virtual location, such as
// "store://deploy", and reader serves its files.
func NewVirtual(doc *Document, loc string, files []File, origin *Origin, reader Reader) *Skill {
	s := New(doc, loc, "SKILL.md", files, origin, reader)
	s.Virtual = true
	return s
}

// Bundle reads every file of the skill into a Bundle: the entry file and
// each file of the manifest, with their executable bits. It is how any
// skill, whatever its source, is exported.
func (s *Skill) Bundle() (*Bundle, error) {
	content, err := s.ReadFile(s.Entry)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Content: content}
	for _, f := range s.Files {
		data, err := s.ReadFile(f.Path)
		if err != nil {
			return nil, err
		}
		b.Files = append(b.Files, BundleFile{Path: f.Path, Data: data, Executable: f.Executable, ContentType: f.ContentType, Binary: f.Binary})
	}
	return b, nil
}
