package portable

import (
	"errors"
	"strings"

	"github.com/loadout/loadout/skill"
)

// Error is a refused import or export. It names what is at fault:
//
//	&Error{Source: "x.zip", Entry: "skill/../evil", Code: "path-dotdot", Msg: ...}
//
// Code is stable; programs should switch on it, never on Msg. When the
// write-time gate (skill.Bundle.Check) refused the bundle, Code and Entry are
// those of its first problem and Err is the *skill.CheckError listing them
// all (errors.As finds it).
type Error struct {
	// Source is the archive, folder or document: a file name, a folder
	// path, or "zip", "json" or "bundle" when there is no name.
	Source string
	// Entry is the zip entry, file path or JSON field at fault; empty when
	// the whole source is.
	Entry string
	Code  string
	Msg   string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.Entry != "" {
		b.WriteString(e.Entry)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Refusal codes. Path refusals carry skill's path codes (skill.CodePathDotDot
// "path-dotdot", skill.CodePathAbsolute "path-absolute", skill.CodePathChars
// "path-invalid-chars", skill.CodePathSegment, skill.CodePathLong,
// skill.CodePathEmpty, skill.CodePathSkillMD), and refusals by Bundle.Check
// carry its codes (skill.CodeTooLarge, skill.CodeTooManyFiles,
// skill.CodeNameInvalid, skill.CodeDescriptionMissing, ...).
const (
	CodeJSONInvalid    = "json-invalid"     // not JSON, or a field of the wrong type
	CodeJSONTooDeep    = "json-too-deep"    // arrays and objects nested over MaxJSONDepth
	CodeSchemaVersion  = "schema-version"   // schemaVersion other than 1 or 2
	CodeEncoding       = "encoding-unknown" // a file's encoding is neither absent nor "base64"
	CodeBase64         = "base64-invalid"   // a base64 file that does not decode
	CodeSHA256Invalid  = "sha256-invalid"   // a sha256 that is not 64 hex digits
	CodeSHA256Mismatch = "sha256-mismatch"  // a file's bytes do not match its sha256
	CodeDigestMismatch = "digest-mismatch"  // metadata.digest does not match the bundle
	CodeSlugMismatch   = "slug-mismatch"    // skill.slug differs from the frontmatter name
	CodeFieldMismatch  = "field-mismatch"   // skill.category, tags or version differs from the frontmatter's
	CodeNotUTF8        = "content-not-utf8" // SKILL.md is not UTF-8, so JSON cannot carry it

	CodeZipInvalid     = "zip-invalid"      // not a zip, or an entry is corrupt
	CodeEncrypted      = "zip-encrypted"    // an encrypted entry
	CodeSymlink        = "symlink"          // a symbolic link entry in a zip
	CodeSpecialFile    = "special-file"     // a device, pipe or socket
	CodeDuplicateEntry = "duplicate-entry"  // two zip entries with the same (clean) path
	CodeTooManyEntries = "too-many-entries" // over ZipLimits.MaxEntries
	CodeRatio          = "compression-ratio"
	CodeSizeMismatch   = "size-mismatch"    // an entry holds more bytes than its header says
	CodeTopLevel       = "top-level"        // more than one top-level folder or file
	CodeSkillMDMissing = "skill-md-missing" // no SKILL.md where it must be

	CodeSymlinkEscapes = skill.CodeSymlinkEscapes // "symlink-escapes": a link leaves the folder
	CodeSymlinkBroken  = skill.CodeSymlinkBroken  // "symlink-broken"
	CodeSymlinkLoop    = skill.CodeSymlinkLoop    // "symlink-loop"
	CodeTooDeep        = "too-deep"               // folders nested deeper than maxDirDepth
	CodeRead           = skill.CodeReadError      // "read-error"
	CodeWrite          = "write-error"
	CodeDirNotEmpty    = "dir-not-empty" // ExportDir into a folder that has entries
	CodeFolderName     = "folder-name"   // ExportZip's folder name is not one clean segment
)

// checkError wraps a refusal of Bundle.Check. entry maps a bundle path back
// to the name the source used for it (a zip entry name), when it differs.
func checkError(source string, err error, entry func(string) string) error {
	var ce *skill.CheckError
	if !errors.As(err, &ce) || len(ce.Problems) == 0 {
		return &Error{Source: source, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	p := ce.Problems[0]
	e := &Error{Source: source, Code: p.Code, Msg: "refused: " + ce.Error(), Err: ce}
	switch {
	case p.Path != "" && entry != nil:
		e.Entry = entry(p.Path)
	case p.Path != "":
		e.Entry = p.Path
	default:
		e.Entry = p.Field
	}
	return e
}

// checked runs the write-time gate on a copy of b, so exports never change
// the caller's bundle, and returns the normalised copy.
func checked(source string, b *skill.Bundle) (*skill.Bundle, *skill.Document, error) {
	if b == nil {
		return nil, nil, &Error{Source: source, Code: CodeRead, Msg: "no bundle"}
	}
	c := &skill.Bundle{Content: b.Content, Files: append([]skill.BundleFile(nil), b.Files...)}
	doc, _, err := c.Check(skill.Limits{})
	if err != nil {
		return nil, nil, checkError(source, err, nil)
	}
	return c, doc, nil
}
