package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout/loadout/store"
)

// Roles. A token's role scopes (store.ParseScope) give it a role over
// every skill ("author") or over some ("author:team-data-*",
// "author:tag=data"). Each role holds the ones below it. agent:ID and
// index:ID scopes give no role.

// Allows reports whether the principal holds role, or a higher one, for
// the skill called name with tags. name "" asks for a right that is not
// about one skill (listing every skill, reloading the config): only an
// unlimited role holds it, so a limited token never reaches a route that
// reads or writes skills outside its limit. Tags are the skill's own (its
// frontmatter's); a glob limit needs none.
func (p Principal) Allows(role, name string, tags []string) bool {
	want := store.RoleRank(role)
	if want == 0 {
		return false // not a role: a caller's typo grants nothing
	}
	if p.Open {
		return true
	}
	for _, sc := range p.Scopes {
		s, err := store.ParseScope(sc)
		if err != nil || s.Rank < want {
			continue
		}
		if s.Covers(name, tags) {
			return true
		}
	}
	return false
}

// Role is the highest role the principal holds anywhere, limited or not,
// for the audit trail and the UI: "" when it holds none (an agent or link
// token).
func (p Principal) Role() string {
	if p.Admin() {
		return RoleAdmin
	}
	best := 0
	for _, sc := range p.Scopes {
		if s, err := store.ParseScope(sc); err == nil && s.Rank > best {
			best = s.Rank
		}
	}
	if best == 0 {
		return ""
	}
	return store.Roles[best-1]
}

// HoldsAnywhere reports whether the principal holds role, or a higher
// one, over at least one skill: a route that takes its skills from the
// request's body (a create, an import) admits it and checks each skill.
func (p Principal) HoldsAnywhere(role string) bool {
	if p.Open {
		return true
	}
	want := store.RoleRank(role)
	for _, sc := range p.Scopes {
		if s, err := store.ParseScope(sc); err == nil && want > 0 && s.Rank >= want {
			return true
		}
	}
	return false
}

// tagLimited reports whether one of the principal's scopes of role or
// higher is limited by a tag: only then does a check need the skill's
// tags.
func (p Principal) tagLimited(role string) bool {
	want := store.RoleRank(role)
	for _, sc := range p.Scopes {
		if s, err := store.ParseScope(sc); err == nil && s.Rank >= want && s.Tag != "" {
			return true
		}
	}
	return false
}

// Limits describes the principal's role scopes for a refusal:
// "author of team-data-*, viewer".
func (p Principal) Limits() string {
	var out []string
	for _, sc := range p.Scopes {
		s, err := store.ParseScope(sc)
		if err != nil || s.Rank == 0 {
			continue
		}
		switch {
		case s.Glob != "":
			out = append(out, s.Role+" of "+s.Glob)
		case s.Tag != "":
			out = append(out, s.Role+" of skills tagged "+s.Tag)
		default:
			out = append(out, s.Role+" of every skill")
		}
	}
	if len(out) == 0 {
		return "no role"
	}
	return strings.Join(out, ", ")
}

// NeedsRole is the refusal of a principal without role over the skill
// name ("" for a right over every skill).
func NeedsRole(p Principal, role, name string) *Error {
	if name == "" {
		return &Error{Code: CodeForbidden, Message: fmt.Sprintf("this needs the %s role over every skill (an unlimited %s, or a higher role); this token holds %s", role, role, p.Limits())}
	}
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf("this needs the %s role for skill %q; this token holds %s", role, name, p.Limits())}
}

// NeedsRoleSome is the refusal of a principal that holds role over no
// skill, on a route that writes the skills of its body.
func NeedsRoleSome(p Principal, role string) *Error {
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf("this needs the %s role (over every skill, or over the skills this request names); this token holds %s", role, p.Limits())}
}

// RequireRole checks that p holds role for the skill called name ("" for
// every skill), reading the skill's tags (the catalog's, else the
// store's) only when a tag limit could decide. A refusal names the role
// and the skill, and says the same whether or not the skill exists.
func (s *Service) RequireRole(ctx context.Context, p Principal, role, name string) error {
	if p.Allows(role, name, nil) {
		return nil
	}
	if name != "" && p.tagLimited(role) && p.Allows(role, name, s.skillTags(ctx, name)) {
		return nil
	}
	return NeedsRole(p, role, name)
}

// requireRoleTags is RequireRole for a skill whose tags the caller holds
// (a document about to be written).
func (s *Service) requireRoleTags(p Principal, role, name string, tags []string) error {
	if p.Allows(role, name, tags) {
		return nil
	}
	return NeedsRole(p, role, name)
}

// skillTags are the tags of the skill called name: the catalog's skill,
// else the stored one (a disabled stored skill is not in the catalog).
func (s *Service) skillTags(ctx context.Context, name string) []string {
	tags, _ := s.skillTagsOK(ctx, name)
	return tags
}

// skillTagsOK is skillTags, and whether the skill exists. The store's
// record comes first: it is what a write replaces.
func (s *Service) skillTagsOK(ctx context.Context, name string) ([]string, bool) {
	if s.opt.Store != nil {
		if rec, err := s.opt.Store.Get(ctx, name); err == nil {
			return rec.Tags, true
		}
	}
	if e, ok := s.cat.Global().Lookup(name); ok && e.Skill != nil {
		if e.Skill.Meta == nil {
			return nil, true
		}
		return e.Skill.Meta.Tags, true
	}
	return nil, false
}

// RoleScopes are the scopes of a role, over every skill (no globs or
// tags) or over the skills matching any of globs or tagged any of tags:
// "author", or "author:team-*" and "author:tag=data". The CLI's --role
// with --skills and --tag, and the UI's token form, build scopes here;
// each is checked as token creation checks it.
func RoleScopes(role string, globs, tags []string) ([]string, error) {
	if store.RoleRank(role) == 0 {
		return nil, &Error{Code: CodeInvalid, Field: "role", Message: fmt.Sprintf("role %q: give one of %s", role, strings.Join(store.Roles, ", "))}
	}
	var out []string
	for _, g := range globs {
		out = append(out, role+":"+g)
	}
	for _, t := range tags {
		out = append(out, role+":tag="+t)
	}
	if len(out) == 0 {
		out = []string{role}
	}
	for _, sc := range out {
		if _, err := store.ParseScope(sc); err != nil {
			return nil, AsError(err)
		}
	}
	return out, nil
}
