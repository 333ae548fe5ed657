package skill

import (
	"fmt"
	"strings"
)

// Severity ranks a Diagnostic. An error means something was not loaded or
// will not work; a warning means it loaded but deserves attention; info is
// for things worth knowing that need no action.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Diagnostic is the one report type used across loadout: by parsing,
// discovery, selection, rendering, storage and the servers. It reads well
// as a line of text (String) and marshals to stable JSON for machines.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Code is stable and documented; programs should switch on it, never
	// on Message.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Path is the file or folder at fault, when there is one.
	Path  string `json:"path,omitempty"`
	Skill string `json:"skill,omitempty"`
	// Field names the frontmatter or config field at fault.
	Field string `json:"field,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Winner and Loser are set for collisions and shadowing: the location
	// that is used and the one that is not.
	Winner string `json:"winner,omitempty"`
	Loser  string `json:"loser,omitempty"`
}

// String renders the diagnostic for a person, on one line:
//
//	warning name-mismatch: /skills/x/SKILL.md: name "y" does not match parent directory "x"
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(string(d.Severity))
	b.WriteByte(' ')
	b.WriteString(d.Code)
	b.WriteString(": ")
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	if d.Agent != "" && !strings.Contains(d.Message, d.Agent) {
		fmt.Fprintf(&b, "agent %s: ", d.Agent)
	}
	b.WriteString(d.Message)
	if d.Winner != "" || d.Loser != "" {
		fmt.Fprintf(&b, " (using %s, ignoring %s)", d.Winner, d.Loser)
	}
	return b.String()
}

// Diagnostic codes. They are part of the public contract (README, JSON
// output); add new ones rather than changing these.
const (
	// Parsing a SKILL.md (lenient loading).
	CodeReadError           = "read-error"           // a file or folder could not be read
	CodeNoFrontmatter       = "frontmatter-missing"  // SKILL.md does not start with ---
	CodeFrontmatterUnclosed = "frontmatter-unclosed" // no closing --- line
	CodeYAMLInvalid         = "yaml-invalid"         // frontmatter is not valid YAML, even after the quoting retry
	CodeYAMLQuoted          = "yaml-quoted-retry"    // loaded only after quoting values containing ": "
	CodeNotMapping          = "frontmatter-not-map"  // frontmatter is YAML but not a mapping
	CodeBOM                 = "bom"                  // a UTF-8 byte order mark was skipped
	CodeDescriptionMissing  = "description-missing"  // skill skipped
	CodeDescriptionLong     = "description-too-long" // over 1024 code points
	CodeFieldType           = "field-type"           // a field has the wrong YAML type
	CodeNameMissing         = "name-missing"         // fell back to the directory name
	CodeNameMismatch        = "name-mismatch"        // name differs from the directory
	CodeNameLong            = "name-too-long"        // over 64 code points
	CodeNameChars           = "name-invalid-chars"   // not lowercase letters, digits, hyphens
	CodeNameHyphenEdge      = "name-hyphen-edge"     // starts or ends with -
	CodeNameDoubleHyphen    = "name-consecutive-hyphens"
	CodeCompatibilityLong   = "compatibility-too-long"
	CodeFrontmatterTooLarge = "frontmatter-too-large" // over MaxFrontmatterBytes; skill skipped
	CodeFrontmatterTooDeep  = "frontmatter-too-deep"  // nested over MaxFrontmatterDepth; skill skipped
	CodeYAMLAliasLimit      = "yaml-alias-limit"      // aliases expand past MaxFrontmatterAliases or MaxFrontmatterExpanded, or into themselves; skill skipped

	// Discovery.
	CodeRootMissing      = "root-missing"
	CodeRootUnreadable   = "root-unreadable"
	CodeRootEmpty        = "root-empty" // a root that yields no skill (check and prompt fail on it)
	CodeNoSkills         = "no-skills"  // no source yields a skill
	CodeSymlinkBroken    = "symlink-broken"
	CodeSymlinkLoop      = "symlink-loop"
	CodeSymlinkEscapes   = "symlink-escapes"    // a link inside a skill points outside it
	CodeDuplicateSkill   = "duplicate-realpath" // the same real skill folder reached twice
	CodeNestedSkill      = "nested-skill"       // SKILL.md inside another skill
	CodeNameCollision    = "name-collision"
	CodeLimitDepth       = "limit-depth"
	CodeLimitDirs        = "limit-dirs"
	CodeLimitFiles       = "limit-files"
	CodeSkillMDLowercase = "skill-md-lowercase" // skill.md used instead of SKILL.md
	CodeKeptLastGood     = "kept-last-good"     // a broken edit; the previous version is served
)
