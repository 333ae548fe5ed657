package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadout/loadout/internal/jsonc"
	"github.com/loadout/loadout/skill"
)

// Manifest is a plugin's plugin.json.
type Manifest struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Trust       string `json:"trust"`
	Description string `json:"description,omitempty"`
	// Skills are the skill contributions. After ParseManifest or Load it
	// holds only the contributions that passed validation, in file order.
	Skills []Contribution `json:"skills,omitempty"`
}

// Contribution is one skill a plugin contributes.
type Contribution struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      Source `json:"source"`
	// Files are supporting files of an inline source, held in memory.
	Files         []InlineFile `json:"files,omitempty"`
	Tags          []string     `json:"tags,omitempty"`
	Category      string       `json:"category,omitempty"`
	RequiresTools []string     `json:"requiresTools,omitempty"`
	// DefaultEnabled is nil when not given, which means true.
	DefaultEnabled *bool `json:"defaultEnabled,omitempty"`
}

// Source says where a contribution's SKILL.md is.
type Source struct {
	// Kind is "inline", "file" or "directory".
	Kind string `json:"kind"`
	// Content is the SKILL.md text of an inline source.
	Content string `json:"content,omitempty"`
	// Path is relative to the plugin folder: a SKILL.md file (file) or a
	// skill folder (directory).
	Path string `json:"path,omitempty"`
}

// InlineFile is a supporting file of an inline skill.
type InlineFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// manifestHead is Manifest with the contributions left undecoded, so that
// a bad contribution costs only itself.
type manifestHead struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Trust       string            `json:"trust"`
	Description string            `json:"description"`
	Skills      []json.RawMessage `json:"skills"`
}

var trustLevels = []string{TrustSelfHostOpen, TrustSelfHostGuarded, TrustSaaSLocked}

var sourceKinds = []string{KindInline, KindFile, KindDirectory}

// MaxIDLen bounds plugin ids, in bytes.
const MaxIDLen = 64

// ParseManifest decodes and checks the text of a plugin.json; file names it
// in diagnostics. It returns nil when the plugin cannot be used (bad JSON,
// an unknown key outside skills, a bad id, name, version or trust). A bad
// contribution is reported and left out of the returned Skills; the others
// are kept.
func ParseManifest(data []byte, file string) (*Manifest, []skill.Diagnostic) {
	m, _, diags := parseManifest(data, file)
	return m, diags
}

// parseManifest is ParseManifest that also returns, for each kept
// contribution, its index in the file's skills array.
func parseManifest(data []byte, file string) (*Manifest, []int, []skill.Diagnostic) {
	var diags []skill.Diagnostic
	report := func(sev skill.Severity, code, field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if field != "" {
			msg = field + ": " + msg
		}
		diags = append(diags, skill.Diagnostic{Severity: sev, Code: code, Path: file, Field: field, Message: msg})
	}
	var head manifestHead
	if err := jsonc.Decode(data, &head); err != nil {
		d := decodeDiag(err, file, "")
		d.Message += "; plugin not loaded"
		return nil, nil, append(diags, d)
	}

	// The plugin itself.
	switch id := head.ID; {
	case id == "":
		report(skill.Error, CodeField, "id", "required: give the plugin an id of lowercase letters, digits and hyphens, like acme-ops")
	case !validID(id):
		report(skill.Error, CodeField, "id", "%q is not a valid plugin id: use lowercase letters, digits and single hyphens (not at either end), at most %d characters, like acme-ops", id, MaxIDLen)
	}
	if strings.TrimSpace(head.Name) == "" {
		report(skill.Error, CodeField, "name", "required: give the plugin a name for people, like \"Acme Ops\"")
	}
	if strings.TrimSpace(head.Version) == "" {
		report(skill.Error, CodeField, "version", "required: give the plugin's version, like \"1.0.0\"")
	}
	switch {
	case head.Trust == "":
		report(skill.Error, CodeField, "trust", "required: one of %s", strings.Join(trustLevels, ", "))
	case !oneOf(head.Trust, trustLevels):
		report(skill.Error, CodeField, "trust", "%q is not a trust level: use one of %s", head.Trust, strings.Join(trustLevels, ", "))
	}
	if len(diags) > 0 {
		for i := range diags {
			diags[i].Message += "; plugin not loaded"
		}
		return nil, nil, diags
	}
	m := &Manifest{ID: head.ID, Name: head.Name, Version: head.Version, Trust: head.Trust, Description: head.Description}

	// The contributions.
	var idx []int
	var whole *jsonc.Error // the first error of a strict decode of the whole file, for its position
	ids := map[string]int{}
	for i, raw := range head.Skills {
		base := fmt.Sprintf("skills[%d]", i)
		var c Contribution
		if err := jsonc.Decode(raw, &c); err != nil {
			if whole == nil {
				whole = &jsonc.Error{}
				var all Manifest
				errors.As(jsonc.Decode(data, &all), &whole)
			}
			diags = append(diags, decodeDiag(err, file, base, whole))
			continue
		}
		bad, start := false, len(diags)
		fail := func(code, field, format string, args ...any) {
			report(skill.Error, code, base+field, format+"; skill not loaded", args...)
			bad = true
		}
		if c.ID == "" {
			fail(CodeField, ".id", "required: give the contribution an id, unique in the plugin")
		} else if j, dup := ids[c.ID]; dup {
			diags = append(diags, skill.Diagnostic{Severity: skill.Error, Code: CodeDuplicate, Path: file, Field: base + ".id", Skill: c.Name,
				Message: fmt.Sprintf("%s.id: skills[%d] already has the id %q; skill not loaded", base, j, c.ID)})
			bad = true
		} else {
			ids[c.ID] = i
		}
		if strings.TrimSpace(c.Name) == "" {
			fail(CodeField, ".name", "required: give the skill's name, like deploy")
		}
		src := c.Source
		switch src.Kind {
		case "":
			fail(CodeField, ".source.kind", "required: one of %s", strings.Join(sourceKinds, ", "))
		case KindInline:
			if src.Content == "" {
				fail(CodeField, ".source.content", "required for an inline source: the SKILL.md text")
			} else if !hasFrontmatter(src.Content) && strings.TrimSpace(c.Description) == "" {
				fail(CodeField, ".description", "required when the inline content has no frontmatter: say what the skill does and when to use it")
			}
			if src.Path != "" {
				fail(CodeField, ".source.path", "an inline source has content, not a path; use kind \"file\" or \"directory\" for a path")
			}
		case KindFile, KindDirectory:
			if src.Path == "" {
				what := "the skill folder"
				if src.Kind == KindFile {
					what = "the SKILL.md file"
				}
				fail(CodeField, ".source.path", "required for a %s source: the path of %s, relative to the plugin folder", src.Kind, what)
			} else if _, err := skill.CleanPath(src.Path); err != nil {
				var pe *skill.PathError
				code := CodeField
				if errors.As(err, &pe) {
					code = pe.Code
				}
				fail(code, ".source.path", "%v: give a path inside the plugin folder", err)
			}
			if src.Content != "" {
				fail(CodeField, ".source.content", "a %s source has a path, not content; use kind \"inline\" for content", src.Kind)
			}
			if len(c.Files) > 0 {
				fail(CodeField, ".files", "files are for inline sources only; a %s source's supporting files are the files in its folder", src.Kind)
			}
		default:
			fail(CodeField, ".source.kind", "%q is not a source kind: use one of %s", src.Kind, strings.Join(sourceKinds, ", "))
		}
		if bad {
			for k := start; k < len(diags); k++ {
				diags[k].Skill = c.Name
			}
			continue
		}
		m.Skills = append(m.Skills, c)
		idx = append(idx, i)
	}
	return m, idx, diags
}

// decodeDiag turns a jsonc error into a plugin-manifest diagnostic. base
// prefixes the key path (for a contribution decoded on its own); whole, when
// given, is the first error of decoding the whole file, whose position is
// used if it is the same error.
func decodeDiag(err error, file, base string, whole ...*jsonc.Error) skill.Diagnostic {
	d := skill.Diagnostic{Severity: skill.Error, Code: CodeManifest, Path: file}
	var je *jsonc.Error
	if !errors.As(err, &je) {
		d.Field = base
		d.Message = err.Error()
		if base != "" {
			d.Message = base + ": " + d.Message
		}
		return d
	}
	e := *je
	if base != "" {
		switch {
		case e.Path == "":
			e.Path = base
		case strings.HasPrefix(e.Path, "["):
			e.Path = base + e.Path
		default:
			e.Path = base + "." + e.Path
		}
		// Positions inside a contribution decoded alone are relative to
		// it; keep only the whole file's, when it is this error.
		e.Line, e.Col = 0, 0
		if len(whole) > 0 && whole[0] != nil && whole[0].Path == e.Path && whole[0].Msg == e.Msg {
			e.Line, e.Col = whole[0].Line, whole[0].Col
		}
		d.Message = e.Error() + "; skill not loaded"
	} else {
		d.Message = e.Error()
	}
	d.Field = e.Path
	// An unknown key is reported on the object holding it; the field at
	// fault is the key itself.
	if rest, ok := strings.CutPrefix(e.Msg, "unknown key "); ok {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if key, err := strconv.Unquote(q); err == nil {
				d.Field = joinKey(e.Path, key)
			}
		}
	}
	return d
}

// joinKey appends an object key to a key path, as jsonc writes paths.
func joinKey(path, key string) string {
	if key == "" || strings.ContainsAny(key, `.[]" `) || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 }) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// validID reports whether id is lowercase letters and digits in groups
// joined by single hyphens, at most MaxIDLen bytes.
func validID(id string) bool {
	if id == "" || len(id) > MaxIDLen || id[0] == '-' || id[len(id)-1] == '-' || strings.Contains(id, "--") {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}
