package service

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

func TestAllows(t *testing.T) {
	p := func(scopes ...string) Principal { return Principal{TokenID: "t", Scopes: scopes} }
	data := []string{"data"}
	cases := []struct {
		p          Principal
		role, name string
		tags       []string
		want       bool
	}{
		{Principal{Open: true}, RoleAdmin, "", nil, true},
		{Principal{}, RoleViewer, "x", nil, false},
		{p("admin"), RoleAdmin, "", nil, true},
		{p("viewer"), RoleViewer, "", nil, true},
		{p("viewer"), RoleAuthor, "x", nil, false},
		{p("author"), RoleViewer, "", nil, true}, // each role holds the ones below it
		{p("reviewer"), RoleAuthor, "x", nil, true},
		{p("reviewer"), RoleAdmin, "", nil, false},
		{p("author:team-data-*"), RoleAuthor, "team-data-etl", nil, true},
		{p("author:team-data-*"), RoleViewer, "team-data-etl", nil, true},
		{p("author:team-data-*"), RoleAuthor, "billing", nil, false},
		{p("author:team-data-*"), RoleAuthor, "", nil, false}, // not over every skill
		{p("author:team-data-*"), RoleReviewer, "team-data-etl", nil, false},
		// A reviewer outside their glob holds nothing there.
		{p("reviewer:team-data-*"), RoleReviewer, "billing", nil, false},
		{p("reviewer:team-data-*"), RoleReviewer, "team-data-etl", nil, true},
		{p("reviewer:tag=data"), RoleReviewer, "x", data, true},
		{p("reviewer:tag=data"), RoleReviewer, "x", []string{"ops"}, false},
		{p("reviewer:tag=data"), RoleReviewer, "x", nil, false},
		{p("viewer", "author:team-*"), RoleAuthor, "team-a", nil, true},
		{p("viewer", "author:team-*"), RoleAuthor, "other", nil, false},
		{p("viewer", "author:team-*"), RoleViewer, "other", nil, true},
		{p("agent:coder"), RoleViewer, "x", nil, false},
		{p("index:coder"), RoleViewer, "x", nil, false},
		{p("admin:team-*"), RoleAdmin, "team-a", nil, true},
		{p("admin:team-*"), RoleAdmin, "", nil, false},
		{p("Admin"), RoleViewer, "x", nil, false}, // not a scope: nothing
		{p("author"), "owner", "x", nil, false},   // not a role
		{Principal{Open: true}, "owner", "", nil, false},
	}
	for _, c := range cases {
		if got := c.p.Allows(c.role, c.name, c.tags); got != c.want {
			t.Errorf("%v Allows(%s, %q, %v) = %v, want %v", c.p.Scopes, c.role, c.name, c.tags, got, c.want)
		}
	}
	roles := map[string][]string{
		RoleAdmin:    {"admin"},
		RoleReviewer: {"viewer", "reviewer:tag=data", "agent:x"},
		RoleAuthor:   {"author:team-*"},
		RoleViewer:   {"viewer"},
		"":           {"agent:coder"},
	}
	for want, scopes := range roles {
		if got := p(scopes...).Role(); got != want {
			t.Errorf("%v Role() = %q, want %q", scopes, got, want)
		}
	}
	if !(Principal{Open: true}).Admin() || p("admin:team-*").Admin() || p("reviewer").Admin() || !p("viewer", "admin").Admin() {
		t.Error("Admin() is true only for an unlimited admin and the open mode")
	}
}

// TestRoleWrites runs the role checks of the service's writes on both
// engines: each refused write names the role and the skill and leaves
// the store as it was.
func TestRoleWrites(t *testing.T) {
	for name, eng := range engines(t) {
		t.Run(name, func(t *testing.T) {
			st := eng(t)(t)
			s := storeService(t, st, Options{})
			ctx := context.Background()
			admin := Principal{TokenID: "a", Scopes: []string{"admin"}}
			doc := func(name string, tags ...string) *skill.Bundle {
				fm := "---\nname: " + name + "\ndescription: D.\n"
				if len(tags) > 0 {
					fm += "tags: [" + strings.Join(tags, ", ") + "]\n"
				}
				return &skill.Bundle{Content: []byte(fm + "---\nBody.\n")}
			}
			for _, b := range []*skill.Bundle{doc("team-data-etl"), doc("billing"), doc("tagged", "data")} {
				if _, err := s.Put(ctx, admin, b, 0, "api", ""); err != nil {
					t.Fatal(err)
				}
			}
			digests := func() map[string]string {
				rs, err := st.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				m := map[string]string{}
				for _, r := range rs {
					m[r.Name] = r.Digest
				}
				return m
			}
			before := digests()
			refused := func(what string, err error, role, skillName string) {
				t.Helper()
				if code(err) != CodeForbidden || !strings.Contains(err.Error(), "the "+role+" role") || !strings.Contains(err.Error(), `"`+skillName+`"`) {
					t.Errorf("%s: %v, want 403 naming the %s role and %q", what, err, role, skillName)
				}
				if after := digests(); len(after) != len(before) || after["billing"] != before["billing"] || after["tagged"] != before["tagged"] || after["team-data-etl"] != before["team-data-etl"] {
					t.Errorf("%s: the store changed: %v -> %v", what, before, after)
				}
			}
			viewer := Principal{TokenID: "v", Scopes: []string{"viewer"}}
			_, err := s.Put(ctx, viewer, doc("billing"), 1, "api", "")
			refused("viewer put", err, RoleAuthor, "billing")
			refused("viewer delete", s.Delete(ctx, viewer, "billing", 1), RoleAuthor, "billing")
			_, err = s.PutFile(ctx, viewer, "billing", "x.md", []byte("x"), false, 1)
			refused("viewer put file", err, RoleAuthor, "billing")
			_, err = s.Restore(ctx, viewer, "billing", 1, 1)
			refused("viewer restore", err, RoleAuthor, "billing")
			if _, err := s.Get(ctx, viewer, "billing"); err != nil {
				t.Errorf("viewer get: %v", err)
			}

			data := Principal{TokenID: "d", Scopes: []string{"author:team-data-*"}}
			_, err = s.Put(ctx, data, doc("billing", "x"), 1, "api", "")
			refused("team-data author editing billing", err, RoleAuthor, "billing")
			_, err = s.Import(ctx, data, []store.ImportItem{{Bundle: doc("team-data-new")}, {Bundle: doc("billing")}}, ImportOptions{})
			refused("team-data author importing billing", err, RoleAuthor, "billing")
			_, err = s.Get(ctx, data, "billing")
			refused("team-data author reading billing", err, RoleViewer, "billing")
			if _, err := s.Put(ctx, data, doc("team-data-etl", "x"), 1, "api", ""); err != nil {
				t.Errorf("team-data author editing team-data-etl: %v", err)
			}
			before = digests()

			// A tag-limited author: the skill's current tags decide, and
			// the new document's too: tagging another skill does not take
			// it over, and untagging keeps nothing.
			tag := Principal{TokenID: "t", Scopes: []string{"author:tag=data"}}
			_, err = s.Put(ctx, tag, doc("billing", "data"), 1, "api", "")
			refused("tag author tagging billing", err, RoleAuthor, "billing")
			_, err = s.Put(ctx, tag, doc("tagged"), 1, "api", "")
			refused("tag author untagging", err, RoleAuthor, "tagged")
			_, err = s.Put(ctx, tag, doc("fresh"), 0, "api", "")
			refused("tag author creating untagged", err, RoleAuthor, "fresh")
			_, err = s.PutFile(ctx, tag, "tagged", "SKILL.md", doc("tagged").Content, false, 1)
			refused("tag author untagging through its SKILL.md file", err, RoleAuthor, "tagged")
			_, err = s.PutFile(ctx, tag, "billing", "SKILL.md", doc("billing", "data").Content, false, 1)
			refused("tag author tagging billing through its SKILL.md file", err, RoleAuthor, "billing")
			if _, err := s.PutFile(ctx, tag, "tagged", "notes.md", []byte("n"), false, 1); err != nil {
				t.Errorf("tag author adding a file to its skill: %v", err)
			}
			if _, err := s.Put(ctx, tag, doc("tagged", "data", "more"), 2, "api", ""); err != nil {
				t.Errorf("tag author editing its skill: %v", err)
			}
			if _, err := s.Put(ctx, tag, doc("fresh", "data"), 0, "api", ""); err != nil {
				t.Errorf("tag author creating a tagged skill: %v", err)
			}
			if _, err := s.Get(ctx, tag, "tagged"); err != nil {
				t.Errorf("tag author reading its skill: %v", err)
			}

			// Rights over every skill are an unlimited role's.
			if _, err := s.Sources(ctx, data); code(err) != CodeForbidden {
				t.Errorf("a limited author listing sources: %v", err)
			}
			if _, err := s.Loadout(data, ""); code(err) != CodeForbidden {
				t.Errorf("a limited author reading the global catalog: %v", err)
			}
			// A viewer has no agent rights: the global catalog as an agent
			// (MCP at /mcp, load receipts) stays an admin's.
			if _, err := s.Loadout(viewer, ""); code(err) != CodeForbidden {
				t.Errorf("a viewer reading the global catalog as an agent: %v", err)
			}
			if _, _, err := s.CreateToken(ctx, Principal{TokenID: "r", Scopes: []string{"reviewer"}}, "x", []string{"viewer"}); code(err) != CodeForbidden {
				t.Errorf("a reviewer creating a token: %v", err)
			}
		})
	}
}

// TestAuthenticateRoles: a role token authenticates with its scopes; one
// whose stored scopes no longer parse authenticates nobody.
func TestAuthenticateRoles(t *testing.T) {
	st := engines(t)["sqlite"](t)(t)
	s := storeService(t, st, Options{})
	ctx := context.Background()
	secret, _, err := st.CreateToken(ctx, "v", []string{"viewer", "author:team-*"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Authenticate(ctx, secret)
	if err != nil || p.Role() != RoleAuthor || p.Admin() || !p.Allows(RoleViewer, "", nil) || p.Allows(RoleAuthor, "x", nil) {
		t.Errorf("%+v %v", p, err)
	}
	if _, _, err := st.CreateToken(ctx, "bad", []string{"author:Team"}); store.ErrorCode(err) != store.Invalid {
		t.Errorf("a bad scope was stored: %v", err)
	}
}
