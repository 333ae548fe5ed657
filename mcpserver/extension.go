package mcpserver

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// Rules of the MCP Skills extension (SEP-2640) and the Agent Skills format
// that its verifying clients (the TypeScript SDK's SkillsClient, the
// Inspector's --verify) check on every entry. A listing with one entry that
// breaks them is refused whole by SkillsClient.list, so such a skill is
// left out of skills/list (named in the page's _meta) instead.
const (
	MaxNameLen          = 64   // name: 1 to 64 of [a-z0-9] with single hyphens
	MaxDescriptionLen   = 1024 // description: 1 to 1024 characters (code points)
	MaxCompatibilityLen = 500  // compatibility, when present: 1 to 500 characters
)

var extensionName = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// validity is what the extension's rules say about a skill: its typed
// frontmatter, or why the extension's clients would refuse it. problem
// starts with a stable code ("invalid-name: ...") and says what to do.
type validity struct {
	frontmatter skill.Fields
	problem     string
}

func (v *view) validity(sk *skill.Skill) *validity {
	if x, ok := v.valid.Load(sk); ok {
		return x.(*validity)
	}
	x, _ := v.valid.LoadOrStore(sk, checkSkill(sk))
	return x.(*validity)
}

// checkSkill reads the skill's SKILL.md (the bytes resources/read serves)
// and checks it against the extension's rules. Only the head is kept; the
// rest is streamed through a UTF-8 check.
func checkSkill(sk *skill.Skill) *validity {
	c, err := sk.OpenWhole(sk.Entry)
	if err != nil {
		return &validity{problem: fmt.Sprintf("unreadable: %s could not be read (%v)", entryName, err)}
	}
	defer c.Close()
	head := make([]byte, min(c.Size(), skill.TypedHeadBytes))
	if _, err := io.ReadFull(io.NewSectionReader(c, 0, int64(len(head))), head); err != nil {
		return &validity{problem: fmt.Sprintf("unreadable: %s could not be read (%v)", entryName, err)}
	}
	if ok, err := validUTF8(io.NewSectionReader(c, 0, c.Size())); err != nil {
		return &validity{problem: fmt.Sprintf("unreadable: %s could not be read (%v)", entryName, err)}
	} else if !ok {
		return &validity{problem: "invalid-encoding: SKILL.md is not valid UTF-8, so clients cannot read its frontmatter: save it as UTF-8"}
	}
	fm, err := skill.TypedFrontmatter(head)
	if err != nil {
		return &validity{problem: fmt.Sprintf("invalid-frontmatter: SKILL.md's frontmatter is not what MCP skills clients can read (%v): fix it there; `loadout validate` checks the format", err)}
	}
	return &validity{frontmatter: fm, problem: entryProblem(sk.Name, fm)}
}

// entryProblem checks the typed frontmatter of the skill served as name
// against the rules the extension's clients apply; "" when it passes.
func entryProblem(name string, fm skill.Fields) string {
	nv, ok := fm.Get("name")
	switch n, isStr := nv.(string); {
	case !ok:
		return fmt.Sprintf("invalid-name: SKILL.md has no name field (loadout serves it as %q, from its folder): add name: %s", name, name)
	case !isStr:
		return fmt.Sprintf("invalid-name: the name field is %s, not a string: write the name as text", describe(nv))
	case n == "" || len(n) > MaxNameLen || !extensionName.MatchString(n):
		return fmt.Sprintf("invalid-name: the name %q is not 1 to %d lowercase letters, digits and single hyphens: rename the skill and its folder", clip(n), MaxNameLen)
	case n != name:
		return fmt.Sprintf("invalid-name: the name field %q differs from the name the skill is served under (%q, in skill://%s/SKILL.md): make them the same", n, name, name)
	}
	dv, ok := fm.Get("description")
	switch d, isStr := dv.(string); {
	case !ok:
		return "invalid-description: SKILL.md has no description field: add one saying what the skill does and when to use it"
	case !isStr:
		return fmt.Sprintf("invalid-description: the description is %s, not a string: write it as text", describe(dv))
	case d == "":
		return "invalid-description: the description is empty: say what the skill does and when to use it"
	case utf8.RuneCountInString(d) > MaxDescriptionLen:
		return fmt.Sprintf("invalid-description: the description is %d characters, over the limit of %d: shorten it (move details into the body)", utf8.RuneCountInString(d), MaxDescriptionLen)
	}
	if cv, ok := fm.Get("compatibility"); ok {
		switch c, isStr := cv.(string); {
		case !isStr:
			return fmt.Sprintf("invalid-compatibility: compatibility is %s, not a string: write it as text, or remove the field", describe(cv))
		case c == "":
			return "invalid-compatibility: compatibility is empty: say what the skill needs, or remove the field"
		case utf8.RuneCountInString(c) > MaxCompatibilityLen:
			return fmt.Sprintf("invalid-compatibility: compatibility is %d characters, over the limit of %d: shorten it (move details into the body)", utf8.RuneCountInString(c), MaxCompatibilityLen)
		}
	}
	if mv, ok := fm.Get("metadata"); ok {
		m, isMap := mv.(skill.Fields)
		if !isMap {
			return fmt.Sprintf("invalid-metadata: metadata is %s, not a mapping of names to strings: make it one, or remove the field", describe(mv))
		}
		for _, f := range m {
			if _, isStr := f.Value.(string); !isStr {
				return fmt.Sprintf("invalid-metadata: metadata.%s is %s; metadata maps names to strings: quote the value, or move it to a top-level field", f.Key, describe(f.Value))
			}
		}
	}
	return ""
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case skill.Fields:
		return "a mapping"
	}
	return "a string"
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 80 {
		return s
	}
	return string([]rune(s)[:80]) + "…"
}

// validUTF8 reports whether r's bytes are UTF-8, reading them in pieces.
func validUTF8(r io.Reader) (bool, error) {
	buf := make([]byte, 32<<10)
	carry := 0 // bytes of an incomplete rune kept at buf's start
	for {
		n, err := r.Read(buf[carry:])
		n += carry
		cut := n
		if err == nil {
			// Keep a rune cut by the piece's end for the next piece.
			for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
				if utf8.RuneStart(buf[i]) {
					if !utf8.FullRune(buf[i:n]) {
						cut = i
					}
					break
				}
			}
		}
		if !utf8.Valid(buf[:cut]) {
			return false, nil
		}
		carry = copy(buf, buf[cut:n])
		if err == io.EOF {
			return carry == 0, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// refuseInvalid reports whether the agent wants the tools and resources to
// refuse skills the extension's rules refuse.
func refuseInvalid(l *catalog.Loadout) bool {
	return l.Spec.InvalidSkills == catalog.InvalidRefuse
}

// modelRefusal is why a model-facing tool (load_skill, use_skill,
// read_skill_file) must not serve the skill; "" when it may. A hidden
// skill (disable-model-invocation) is left out of the tools' name enum, so
// the tools refuse it too; an invalid one is refused when the agent's
// invalidSkills is "refuse".
func modelRefusal(l *catalog.Loadout, v *view, name string) (code, msg string) {
	e, ok := l.Lookup(name)
	if !ok {
		return "", ""
	}
	if e.Skill.Hidden() {
		return codeModelInvocationOff, fmt.Sprintf("Skill %q has disable-model-invocation: true, so only a person can start it (hosts can still read it through skills/list, prompts and its skill:// resources). Do not load it on your own; tell the user it exists if it seems relevant.", name)
	}
	if refuseInvalid(l) {
		if p := v.validity(e.Skill).problem; p != "" {
			return codeInvalidSkill, fmt.Sprintf("Skill %q is refused: this agent serves only skills that meet the MCP Skills extension's rules (invalidSkills: refuse), and this one does not: %s", name, p)
		}
	}
	return "", ""
}

// Codes of the receipts of refusals that only MCP makes.
const (
	codeModelInvocationOff = "model-invocation-disabled"
	codeInvalidSkill       = "invalid-skill"
)

// stillServed says, after why a skill is not served through the extension,
// where it is still served.
func stillServed(l *catalog.Loadout, v *view, sk *skill.Skill) string {
	switch {
	case refuseInvalid(l) && v.validity(sk).problem != "":
		return "; this agent's invalidSkills is \"refuse\", so its tools and resources refuse such a skill too"
	case sk.Hidden():
		return "; it is hidden (disable-model-invocation), so only a person can start it through the host"
	}
	return "; load_skill and read_skill_file still serve it"
}

// refuseRead refuses resources/read of a file of a skill the extension's
// rules refuse, when the agent's invalidSkills is "refuse".
func (s *server) refuseRead(ctx context.Context, uri string) error {
	name, p, ok := parseURI(uri)
	if !ok {
		return nil
	}
	l, v, err := s.loadout(ctx)
	if err != nil || !refuseInvalid(l) {
		return nil // readResource answers the error
	}
	if e, ok := l.Lookup(name); ok {
		if problem := v.validity(e.Skill).problem; problem != "" {
			s.svc.RecordRefusal(service.PrincipalFrom(ctx), l, e.Skill, name, "read", p, codeInvalidSkill, callFrom(ctx).transport)
			return refusedInvalid(name, problem)
		}
	}
	return nil
}

// strictProblem is why an agent with invalidSkills "refuse" serves none
// of the skill through MCP, or "" when it serves it.
func strictProblem(l *catalog.Loadout, v *view, sk *skill.Skill) string {
	if !refuseInvalid(l) {
		return ""
	}
	return v.validity(sk).problem
}

func refusedInvalid(name, problem string) error {
	return invalidParams("skill %s is refused: this agent serves only skills that meet the MCP Skills extension's rules (invalidSkills: refuse), and this one does not: %s", name, problem)
}
