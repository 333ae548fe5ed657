package skill

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Path limits, in bytes.
const (
	MaxPathLen    = 1024
	MaxSegmentLen = 255
)

// PathError says why a relative path was refused. Code is stable.
type PathError struct {
	Path   string
	Code   string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q refused: %s", e.Path, e.Reason)
}

// Path refusal codes.
const (
	CodePathEmpty    = "path-empty"
	CodePathAbsolute = "path-absolute"
	CodePathDotDot   = "path-dotdot"
	CodePathChars    = "path-invalid-chars"
	CodePathSegment  = "path-empty-segment"
	CodePathLong     = "path-too-long"
	CodePathSkillMD  = "path-second-skill-md"
)

// CleanPath is the one check every path from outside goes through before it
// touches a skill: request parameters, archive entries, manifest entries,
// config values naming files inside a skill. It takes a path relative to
// the skill folder, written with forward slashes, and returns it in clean
// form ("./a/b" becomes "a/b"). It refuses absolute paths (including drive
// letters, also after a "./"), ".." segments, backslashes, NUL, ESC and
// every other control character (C0, DEL, C1), invisible formatting
// characters (bidirectional controls, zero-width characters, the byte
// order mark, U+2028 and U+2029: Unicode's Cf category), invalid UTF-8,
// empty segments, and paths or segments that are too long. Cleaning is
// idempotent: a clean path passes unchanged. Two names that differ only in
// Unicode normalisation are refused within one skill by Bundle.Check.
//
// CleanPath is lexical. Symlinks are the file system's business: folder
// skills are read through os.Root, which refuses links that leave the skill.
func CleanPath(p string) (string, error) {
	refuse := func(code, reason string) (string, error) {
		return "", &PathError{Path: p, Code: code, Reason: reason}
	}
	if p == "" {
		return refuse(CodePathEmpty, "it is empty: give a path relative to the skill folder, like references/guide.md")
	}
	if len(p) > MaxPathLen {
		return refuse(CodePathLong, fmt.Sprintf("it is %d bytes long; the limit is %d", len(p), MaxPathLen))
	}
	if !utf8.ValidString(p) {
		return refuse(CodePathChars, "it is not valid UTF-8")
	}
	for i, r := range p {
		switch {
		case r == '\\':
			return refuse(CodePathChars, "it contains a backslash: use / between folders")
		case isControl(r, false):
			return refuse(CodePathChars, fmt.Sprintf("byte %d is the control character %s: file names may not hold control characters", i+1, describeRune(r)))
		case isInvisible(r):
			return refuse(CodePathChars, fmt.Sprintf("byte %d is the invisible character %s: file names may not hold bidirectional controls, zero-width or other invisible formatting characters, which make a name look like another", i+1, describeRune(r)))
		}
	}
	if p[0] == '/' || isDrive(p) {
		return refuse(CodePathAbsolute, "it is absolute: give a path relative to the skill folder")
	}
	// Check the segments in place; only a path with "." segments is
	// rebuilt (most paths come clean, and cost no allocation).
	dots := false
	for i, start, seg := 0, 0, 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch s := p[start:i]; {
		case s == "..":
			return refuse(CodePathDotDot, `it contains "..": paths may not leave the skill folder`)
		case s == ".":
			dots = true
		case s == "":
			return refuse(CodePathSegment, fmt.Sprintf("segment %d is empty (a doubled or trailing /)", seg))
		case len(s) > MaxSegmentLen:
			return refuse(CodePathLong, fmt.Sprintf("segment %d is %d bytes long; the limit is %d", seg, len(s), MaxSegmentLen))
		}
		start, seg = i+1, seg+1
	}
	if !dots {
		return p, nil
	}
	segs := strings.Split(p, "/")
	out := segs[:0]
	for _, s := range segs {
		if s != "." {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return refuse(CodePathEmpty, "it names the skill folder itself, not a file")
	}
	// "./C:x" cleans to "C:x", which Windows reads as a path on drive C:
	// refuse it as "C:x" itself is refused, so that cleaning is idempotent.
	if isDrive(out[0]) {
		return refuse(CodePathAbsolute, "it is absolute: give a path relative to the skill folder")
	}
	return strings.Join(out, "/"), nil
}

// isDrive reports whether p starts with a Windows drive letter ("C:").
func isDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z')
}

// CleanFilePath is CleanPath for a supporting file being written into a
// skill: it also refuses a second entry file, SKILL.md at the top of the
// skill in any case (skill.md, Skill.MD). A SKILL.md below the top is an
// ordinary supporting file (examples/inner/SKILL.md), as folder discovery
// lists it (with a nested-skill warning) and MCP serves it: one rule for
// every path a skill's files take (discovery, stores, import, export).
func CleanFilePath(p string) (string, error) {
	c, err := CleanPath(p)
	if err != nil {
		return "", err
	}
	if IsEntryPath(c) {
		return "", &PathError{Path: p, Code: CodePathSkillMD, Reason: "a skill has one SKILL.md at its top, its entry point: send it as the skill's content, not as a file"}
	}
	return c, nil
}

// IsEntryPath reports whether a clean path names the skill's entry file:
// SKILL.md at the top of the skill, in any case. A SKILL.md in a folder of
// the skill is a supporting file.
func IsEntryPath(clean string) bool {
	return strings.EqualFold(clean, "SKILL.md")
}

// IsNestedEntry reports whether a clean path is a SKILL.md below the top of
// the skill (any case): a supporting file that looks like another skill's
// entry, worth a nested-skill warning.
func IsNestedEntry(clean string) bool {
	i := strings.LastIndexByte(clean, '/')
	return i >= 0 && strings.EqualFold(clean[i+1:], "SKILL.md")
}
