package service

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
)

// heldRemotes is what a remote manager reports: the sources it holds.
type heldRemotes []SourceStatus

func (h heldRemotes) Sync(context.Context, ...string) []SourceSync { return nil }
func (h heldRemotes) Status() []SourceStatus                       { return h }

// TestSourcesListsEverySource: Sources lists the remote sources the
// manager holds (with the catalog's problem counts of each, once), a
// remote source the manager does not hold (from the catalog, with its
// error), and the folder sources; a folder never takes a remote's counts,
// even under the same id. Without a manager, the catalog's sources alone.
// It is for admins only.
func TestSourcesListsEverySource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"deploy", "lint"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: Does "+name+".\n---\nDo "+name+".\n")
	}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: "ops", Skills: []catalog.SourceSpec{
		{Root: dir},
		{Git: "https://example.invalid/team.git", ID: "team"},
		{Index: "https://example.invalid/index.json", ID: "idx"},
		{Git: "https://example.invalid/gone.git", ID: "gone"},
	}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{})
	t.Cleanup(func() { s.Close() })

	if _, err := s.Sources(ctx, Principal{TokenID: "t", Scopes: []string{"agent:ops"}}); code(err) != CodeForbidden {
		t.Errorf("an agent token listed the sources: %v", err)
	}
	byID := func(list []SourceStatus) map[string][]SourceStatus {
		m := map[string][]SourceStatus{}
		for _, st := range list {
			m[st.ID] = append(m[st.ID], st)
		}
		return m
	}

	// Without a manager: the catalog's four sources; the remote ones with
	// the catalog's error (not open).
	list, err := s.Sources(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 {
		t.Fatalf("without a manager: %+v, want the 4 sources of the catalog", list)
	}
	m := byID(list)
	if f := m[dir]; len(f) != 1 || f[0].Kind != "folder" || f[0].Skills != 2 || f[0].Errors != 0 {
		t.Errorf("the folder: %+v, want one folder source of 2 skills without errors", f)
	}
	if g := m["gone"]; len(g) != 1 || g[0].Kind != "git" || g[0].Errors != 1 {
		t.Errorf("a remote source not open: %+v, want it listed as git with its 1 error", g)
	}

	// The manager holds team, idx and (another) one under the folder's id.
	s.SetRemotes(heldRemotes{
		{ID: "team", Kind: "git", URL: "https://example.invalid/team.git", Revision: "abc"},
		{ID: "idx", Kind: "index", URL: "https://example.invalid/index.json"},
		{ID: dir, Kind: "git", URL: "https://example.invalid/odd.git"},
	})
	list, err = s.Sources(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	m = byID(list)
	if len(list) != 5 {
		t.Errorf("with a manager: %d sources, want 5 (3 held, 1 not held, 1 folder): %+v", len(list), list)
	}
	for _, id := range []string{"team", "idx"} {
		got := m[id]
		if len(got) != 1 || got[0].URL == "" || got[0].Errors != 1 {
			t.Errorf("held source %s: %+v, want the manager's entry once, with the catalog's 1 error", id, got)
		}
	}
	if got := m["team"]; len(got) == 1 && got[0].Revision != "abc" {
		t.Errorf("the manager's status was not kept: %+v", got[0])
	}
	if g := m["gone"]; len(g) != 1 || g[0].Errors != 1 || g[0].URL != "" {
		t.Errorf("a remote source the manager does not hold: %+v, want the catalog's entry", g)
	}
	f := m[dir]
	if len(f) != 2 || f[0].Kind != "git" || f[0].Errors != 0 || f[1].Kind != "folder" || f[1].Skills != 2 {
		t.Errorf("a folder under a held remote's id: %+v, want the remote (no counts) and the folder apart", f)
	}
}

// TestSearchQueryBounds: a query of exactly MaxQueryBytes and of exactly
// MaxQueryTerms distinct words is searched; one byte or one word more is
// refused as invalid, naming the field, before the agent is looked at.
func TestSearchQueryBounds(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	open := Principal{Open: true}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = "w" + strconv.Itoa(i)
		}
		return strings.Join(w, " ")
	}
	long := "deploy " + strings.Repeat("a", catalog.MaxQueryBytes-len("deploy "))
	// A repeated word counts once.
	for _, q := range []string{"deploy", long, words(catalog.MaxQueryTerms) + " " + words(catalog.MaxQueryTerms), "deploy " + words(catalog.MaxQueryTerms-1)} {
		if _, err := s.Search(ctx, open, "dev", q, 10); err != nil {
			t.Errorf("Search of %d bytes: %v", len(q), err)
		}
	}
	if hits, err := s.Search(ctx, open, "dev", "deploy", 10); err != nil || len(hits) == 0 || hits[0].Name != "deploy" {
		t.Errorf("Search deploy: %+v %v", hits, err)
	}
	for _, q := range []string{long + "b", "deploy " + words(catalog.MaxQueryTerms)} {
		_, err := s.Search(ctx, open, "dev", q, 10)
		if e := AsError(err); err == nil || e.Code != CodeInvalid || e.Field != "query" {
			t.Errorf("Search of %d bytes: %v, want invalid query", len(q), err)
		}
		// Checked first: the same answer for an agent that does not exist.
		if _, err := s.Search(ctx, open, "ghost", q, 10); code(err) != CodeInvalid {
			t.Errorf("Search on an unknown agent with a query past the bounds: %v, want invalid", err)
		}
	}
}
