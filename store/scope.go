package store

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token scopes. A token holds one or more:
//
//	admin | viewer | author | reviewer      a role over every skill
//	ROLE:GLOB                               the role over skills whose name matches GLOB (path.Match: author:team-data-*)
//	ROLE:tag=TAG                            the role over skills tagged TAG (reviewer:tag=data)
//	agent:ID                                read agent ID's loadout (MCP, /v1/agents/ID/…)
//	index:ID                                a link token: agent ID's well-known index in a URL; the token's only scope
//	metrics                                 GET /metrics only (Prometheus's token); the token's only scope
//
// ParseScope and CheckScopes are the one place scopes are read: token
// creation (every store, the CLI, the UI) and authentication use them, so
// a scope is never accepted in one place and read differently in another.

// Roles, least first: each holds the ones before it.
var Roles = []string{"viewer", "author", "reviewer", "admin"}

// Bounds of a token's scopes: a scope is at most MaxScopeLen bytes and a
// token holds at most MaxScopes. They keep a token's row and every check
// of it (each request matches its globs) small.
const (
	MaxScopeLen = 128
	MaxScopes   = 16
)

// ScopeForms is what a scope may be, for error messages.
const ScopeForms = `admin, viewer, author, reviewer, ROLE:GLOB (author:team-data-*), ROLE:tag=TAG (reviewer:tag=data), agent:ID, index:ID or metrics`

// ScopeMetrics is the scope of a metrics token: it reads GET /metrics
// and nothing else, and is the token's only scope, so the token a
// Prometheus server holds can read no skill and change nothing.
const ScopeMetrics = "metrics"

// Scope is one parsed scope. Exactly one of Role, Agent, Index and
// Metrics is set; Glob or Tag (at most one) limit a Role.
type Scope struct {
	Role  string // viewer, author, reviewer or admin
	Rank  int    // Role's place in Roles, from 1 (viewer); 0 without a Role
	Glob  string // a path.Match pattern the skill's name must match
	Tag   string // a tag the skill must have
	Agent string // agent:ID
	Index string // index:ID
	// Metrics: the metrics scope (GET /metrics only).
	Metrics bool
}

// Limited reports whether a role scope holds its role over some skills
// only.
func (s Scope) Limited() bool { return s.Glob != "" || s.Tag != "" }

// Covers reports whether a role scope holds its role over the skill
// called name with tags. An unlimited scope covers every skill, and
// name "" (a right that is not about one skill); a limited one only the
// skills it names.
func (s Scope) Covers(name string, tags []string) bool {
	switch {
	case s.Rank == 0:
		return false
	case s.Glob != "":
		if name == "" {
			return false
		}
		ok, _ := path.Match(s.Glob, name) // the pattern was checked by ParseScope
		return ok
	case s.Tag != "":
		if name == "" {
			return false
		}
		for _, t := range tags {
			if t == s.Tag {
				return true
			}
		}
		return false
	}
	return true
}

// RoleRank is a role's place in Roles from 1, or 0 for no role.
func RoleRank(role string) int {
	for i, r := range Roles {
		if r == role {
			return i + 1
		}
	}
	return 0
}

// ParseScope reads one scope. It allocates nothing for a valid scope: it
// runs on every authenticated request.
func ParseScope(sc string) (Scope, error) {
	if len(sc) > MaxScopeLen {
		return Scope{}, scopeErr(sc, fmt.Sprintf("it is %d bytes, over the %d a scope may have", len(sc), MaxScopeLen))
	}
	// Invisible format characters (U+202E turns text around) are refused
	// with control characters: a scope is shown in lists and logs.
	if i := strings.IndexFunc(sc, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
	}); i >= 0 {
		return Scope{}, scopeErr(sc, fmt.Sprintf("it holds a control character (or a space, or an invisible format character) at byte %d", i))
	}
	kind, arg, limited := strings.Cut(sc, ":")
	switch kind {
	case ScopeMetrics:
		if limited {
			return Scope{}, scopeErr(sc, "the metrics scope takes nothing after it: write metrics")
		}
		return Scope{Metrics: true}, nil
	case "agent", "index":
		if arg == "" {
			return Scope{}, scopeErr(sc, "give the agent's id after the colon")
		}
		if kind == "agent" {
			return Scope{Agent: arg}, nil
		}
		return Scope{Index: arg}, nil
	}
	rank := RoleRank(kind)
	if rank == 0 {
		return Scope{}, scopeErr(sc, fmt.Sprintf("%q is not a role (roles: %s)", kind, strings.Join(Roles, ", ")))
	}
	s := Scope{Role: Roles[rank-1], Rank: rank}
	if !limited {
		return s, nil
	}
	if tag, ok := strings.CutPrefix(arg, "tag="); ok {
		if tag == "" {
			return Scope{}, scopeErr(sc, "give the tag after tag=")
		}
		s.Tag = tag
		return s, nil
	}
	if arg == "" {
		return Scope{}, scopeErr(sc, "give a name glob after the colon (team-data-*), or leave out the colon for every skill")
	}
	// Skill names are lowercase letters, digits and hyphens; a glob of
	// other characters could never match one, so it is a mistake.
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '*' || c == '?' || c == '[' || c == ']' || c == '^' || c == '!') {
			return Scope{}, scopeErr(sc, fmt.Sprintf("the glob %q has %q: skill names are lowercase letters, digits and hyphens, and a glob adds * ? and [...]", arg, c))
		}
	}
	if _, err := path.Match(arg, ""); err != nil {
		return Scope{}, scopeErr(sc, fmt.Sprintf("the glob %q is not a valid pattern (%v): * any characters, ? one, [a-z] a class", arg, err))
	}
	s.Glob = arg
	return s, nil
}

func scopeErr(sc, why string) *Error {
	return &Error{Code: Invalid, Field: "scopes", Message: fmt.Sprintf("scope %q: %s; a scope is one of %s", sc, why, ScopeForms)}
}

// CheckScopes checks a token's scopes: at least one, at most MaxScopes,
// each valid (ParseScope), and an index:ID scope alone. Token creation
// and authentication both run it.
func CheckScopes(scopes []string) error {
	if len(scopes) == 0 {
		return &Error{Code: Invalid, Field: "scopes", Message: "a token needs at least one scope: " + ScopeForms}
	}
	if len(scopes) > MaxScopes {
		return &Error{Code: Invalid, Field: "scopes", Message: fmt.Sprintf("a token holds at most %d scopes; this one has %d: make several tokens, or use a glob (author:team-*)", MaxScopes, len(scopes))}
	}
	for _, sc := range scopes {
		s, err := ParseScope(sc)
		if err != nil {
			return err
		}
		if s.Metrics && len(scopes) > 1 {
			return &Error{Code: Invalid, Field: "scopes",
				Message: fmt.Sprintf(`scope %q must be the token's only scope: a metrics token (Prometheus's) reads GET /metrics and nothing else; make a separate token for the other scopes`, sc)}
		}
		if s.Index != "" && len(scopes) > 1 {
			return &Error{Code: Invalid, Field: "scopes",
				Message: fmt.Sprintf(`scope %q must be the token's only scope: a link token reads one agent's index and nothing else; make a separate token for the other scopes (a role or agent:ID)`, sc)}
		}
	}
	return nil
}
