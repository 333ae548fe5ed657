package identity

import (
	"fmt"
	"sort"
	"strings"
)

// MaxGroups bounds the groups claim of one ID token: a token naming more
// is refused rather than matched value by value.
const MaxGroups = 1000

// DefaultGroupsClaim is the claim read for the user's groups when the
// mapping names none.
const DefaultGroupsClaim = "groups"

// RoleMap maps an ID token's claims to loadout scopes (roles such as
// "viewer", "author:team-data-*", or "agent:ID"). The caller has checked
// every scope (config validation); RoleMap only matches.
type RoleMap struct {
	// GroupsClaim is the claim holding the groups (DefaultGroupsClaim when
	// "").
	GroupsClaim string
	// Groups: group -> scopes.
	Groups map[string][]string
	// EmailDomains: domain -> scopes, for a verified email only.
	EmailDomains map[string][]string
}

// Claims are the parts of an ID token the mapping reads, and what a
// refusal shows.
type Claims struct {
	Subject       string
	Email         string
	EmailVerified bool
	Groups        []string
}

// Scopes returns the sorted, distinct scopes the claims map to, and the
// reasons (which group or domain matched); none when nothing matched.
func (m RoleMap) Scopes(c Claims) (scopes, matched []string) {
	set := map[string]bool{}
	for _, g := range c.Groups {
		if sc, ok := m.Groups[g]; ok {
			matched = append(matched, "group "+g)
			for _, s := range sc {
				set[s] = true
			}
		}
	}
	if c.EmailVerified {
		if d := EmailDomain(c.Email); d != "" {
			if sc, ok := m.EmailDomains[d]; ok {
				matched = append(matched, "email domain "+d)
				for _, s := range sc {
					set[s] = true
				}
			}
		}
	}
	for s := range set {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	return scopes, matched
}

// EmailDomain is the lowercased part of email after its last @, "" when
// it has none.
func EmailDomain(email string) string {
	i := strings.LastIndexByte(email, '@')
	if i < 0 || i == len(email)-1 {
		return ""
	}
	return strings.ToLower(email[i+1:])
}

func (m RoleMap) groupsClaim() string {
	if m.GroupsClaim == "" {
		return DefaultGroupsClaim
	}
	return m.GroupsClaim
}

// readGroups reads the groups claim: a list of strings, or one string.
func readGroups(raw map[string]any, claim string) ([]string, error) {
	v, ok := raw[claim]
	if !ok || v == nil {
		return nil, nil
	}
	switch g := v.(type) {
	case string:
		return []string{g}, nil
	case []any:
		if len(g) > MaxGroups {
			return nil, fmt.Errorf("the %q claim names %d groups, over the %d loadout reads: have the provider send only the groups loadout maps (a filtered claim)", claim, len(g), MaxGroups)
		}
		out := make([]string, 0, len(g))
		for i, x := range g {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("the %q claim's value %d is a %T, not a string", claim, i, x)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("the %q claim is a %T, not a list of group names", claim, v)
}
