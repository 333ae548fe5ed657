package skill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the open format, in Unicode code points.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
)

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// NormalizeName applies NFKC, as the format does before any name check.
func NormalizeName(name string) string { return norm.NFKC.String(name) }

// SameName reports whether a skill name and a directory name are the same
// after NFKC normalisation (case-sensitive).
func SameName(name, dir string) bool {
	return name == dir || NormalizeName(name) == NormalizeName(dir)
}

// A NameProblem is one way a name breaks the format's rules.
type NameProblem struct {
	Code    string
	Message string
}

// NameProblems checks a (trimmed) name against the format: at most 64 code
// points after NFKC; only lowercase letters (any script: a letter that
// lowercasing leaves unchanged), digits and hyphens; no hyphen at either end;
// no "--". It returns nil for a valid name. Messages follow Pi's wording.
func NameProblems(name string) []NameProblem {
	n := NormalizeName(name)
	var out []NameProblem
	if l := runeCount(n); l > MaxNameLen {
		out = append(out, NameProblem{CodeNameLong, fmt.Sprintf("name exceeds %d characters (%d)", MaxNameLen, l)})
	}
	if !validNameChars(n) {
		out = append(out, NameProblem{CodeNameChars, "name contains invalid characters (must be lowercase letters, digits and hyphens only)"})
	}
	if strings.HasPrefix(n, "-") || strings.HasSuffix(n, "-") {
		out = append(out, NameProblem{CodeNameHyphenEdge, "name must not start or end with a hyphen"})
	}
	if strings.Contains(n, "--") {
		out = append(out, NameProblem{CodeNameDoubleHyphen, "name must not contain consecutive hyphens"})
	}
	return out
}

func validNameChars(n string) bool {
	for _, r := range n {
		if !IsNameRune(r) {
			return false
		}
	}
	return true
}

// IsNameRune reports whether r may appear in a skill name: a hyphen, a
// digit, or a letter that lowercasing leaves unchanged.
func IsNameRune(r rune) bool {
	switch {
	case r == '-':
		return true
	case r < utf8.RuneSelf:
		return r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
	case unicode.IsLetter(r):
		return unicode.ToLower(r) == r
	case unicode.IsDigit(r):
		return true
	}
	return false
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }
