package store_test

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/store"
)

func TestParseScope(t *testing.T) {
	good := map[string]store.Scope{
		"admin":                  {Role: "admin", Rank: 4},
		"viewer":                 {Role: "viewer", Rank: 1},
		"author:team-data-*":     {Role: "author", Rank: 2, Glob: "team-data-*"},
		"reviewer:tag=data":      {Role: "reviewer", Rank: 3, Tag: "data"},
		"author:[a-c]?x":         {Role: "author", Rank: 2, Glob: "[a-c]?x"},
		"agent:team/coder-2.1":   {Agent: "team/coder-2.1"},
		"index:coder":            {Index: "coder"},
		"metrics":                {Metrics: true},
		"viewer:tag=Team:Data.1": {Role: "viewer", Rank: 1, Tag: "Team:Data.1"},
	}
	for sc, want := range good {
		got, err := store.ParseScope(sc)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", sc, got, err, want)
		}
	}
	// Each refusal names the scope, says what is wrong, and lists the
	// accepted forms.
	bad := map[string]string{
		"":                    `"" is not a role`,
		"root":                `"root" is not a role`,
		"Admin":               `"Admin" is not a role`,
		"owner:team-*":        `"owner" is not a role`,
		" admin":              "control character (or a space, or an invisible format character) at byte 0",
		"author:team\x00-*":   "format character) at byte 11",
		"author:team\x1b[2J":  "control character",
		"author:team\u2028x":  "control character",
		"viewer:tag=a\u202eb": "at byte 12",
		"author:\xff":         "control character",
		"author:":             "give a name glob after the colon",
		"author:tag=":         "give the tag after tag=",
		"author:team-[":       "not a valid pattern",
		"author:Team-*":       `has 'T'`,
		"author:team/x":       `has '/'`,
		"agent:":              "give the agent's id",
		"index:":              "give the agent's id",
		"agent:a b":           "space",
		"metrics:all":         "the metrics scope takes nothing after it",
		"metrics:":            "the metrics scope takes nothing after it",
		"Metrics":             `"Metrics" is not a role`,
	}
	for sc, why := range bad {
		_, err := store.ParseScope(sc)
		msg := store.ErrorMessage(err)
		if store.ErrorCode(err) != store.Invalid || !strings.Contains(msg, why) || !strings.Contains(msg, "ROLE:GLOB") {
			t.Errorf("%q: %v, want an invalid error saying %q and the accepted forms", sc, err, why)
		}
	}
}

// TestScopeBounds: a scope of MaxScopeLen bytes is accepted and one more
// is refused; MaxScopes scopes are accepted and one more is refused.
func TestScopeBounds(t *testing.T) {
	glob := func(n int) string { return "author:" + strings.Repeat("a", n-len("author:")-1) + "*" }
	at := glob(store.MaxScopeLen)
	if len(at) != store.MaxScopeLen {
		t.Fatal(len(at))
	}
	if err := store.CheckScopes([]string{at}); err != nil {
		t.Errorf("a scope of %d bytes: %v", len(at), err)
	}
	past := glob(store.MaxScopeLen + 1)
	if err := store.CheckScopes([]string{past}); store.ErrorCode(err) != store.Invalid || !strings.Contains(store.ErrorMessage(err), "129 bytes, over the 128") {
		t.Errorf("a scope of %d bytes: %v", len(past), err)
	}
	var scopes []string
	for i := range store.MaxScopes {
		scopes = append(scopes, "agent:a"+strings.Repeat("x", i))
	}
	if err := store.CheckScopes(scopes); err != nil {
		t.Errorf("%d scopes: %v", len(scopes), err)
	}
	scopes = append(scopes, "viewer")
	if err := store.CheckScopes(scopes); store.ErrorCode(err) != store.Invalid || !strings.Contains(store.ErrorMessage(err), "at most 16 scopes; this one has 17") {
		t.Errorf("%d scopes: %v", len(scopes), err)
	}
	// A link token's scope stays alone, even beside a role.
	for _, other := range []string{"viewer", "author:team-*", "agent:coder"} {
		err := store.CheckScopes([]string{"index:coder", other})
		if store.ErrorCode(err) != store.Invalid || !strings.Contains(store.ErrorMessage(err), "only scope") {
			t.Errorf("index:coder with %s: %v", other, err)
		}
	}
	// So does a metrics token's: Prometheus's token reads /metrics only,
	// never admin's rights beside it.
	if err := store.CheckScopes([]string{"metrics"}); err != nil {
		t.Errorf("metrics alone: %v", err)
	}
	for _, other := range []string{"admin", "viewer", "agent:coder", "metrics"} {
		err := store.CheckScopes([]string{"metrics", other})
		if store.ErrorCode(err) != store.Invalid || !strings.Contains(store.ErrorMessage(err), "metrics token") {
			t.Errorf("metrics with %s: %v", other, err)
		}
	}
	if err := store.CheckScopes(nil); store.ErrorCode(err) != store.Invalid {
		t.Errorf("no scopes: %v", err)
	}
}

func TestScopeCovers(t *testing.T) {
	cases := []struct {
		scope, name string
		tags        []string
		want        bool
	}{
		{"author", "", nil, true},
		{"author", "anything", nil, true},
		{"author:team-data-*", "team-data-etl", nil, true},
		{"author:team-data-*", "team-datax", nil, false},
		{"author:team-data-*", "", nil, false}, // a right over every skill
		{"author:tag=data", "x", []string{"ops", "data"}, true},
		{"author:tag=data", "x", []string{"Data"}, false},
		{"author:tag=data", "", []string{"data"}, false},
		{"agent:coder", "x", nil, false},
	}
	for _, c := range cases {
		s, err := store.ParseScope(c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Covers(c.name, c.tags); got != c.want {
			t.Errorf("%s covers %q %v: %v, want %v", c.scope, c.name, c.tags, got, c.want)
		}
	}
}

func TestParseScopeAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _, _ = store.ParseScope("author:team-data-*") }); n != 0 {
		t.Errorf("ParseScope allocates %v times per valid scope: it runs on every request", n)
	}
}
