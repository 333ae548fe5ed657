package service

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store/sqlstore"
)

// rankedService is a service over st with six folder skills whose
// descriptions do not all fit a small budget, for agents "ops" (which pins
// zeta*) and "dev".
func rankedService(t *testing.T, st *sqlstore.Store) *Service {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo", "zeta"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		desc := "Handles " + name + " work. " + strings.Repeat("It knows the "+name+" conventions well. ", 6)
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nDo "+name+".\n")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir}}, Pin: []string{"zeta*"}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: st, Server: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { s.Close() })
	return s
}

func priority(t *testing.T, s *Service, agent string) []string {
	t.Helper()
	l, ok := s.Catalog().Agent(agent)
	if !ok {
		t.Fatalf("no agent %q", agent)
	}
	return l.Priority(s.PromptOptions(agent, catalog.PromptOptions{}).Usage)
}

func prompt(t *testing.T, s *Service, agent string) string {
	t.Helper()
	l, _ := s.Catalog().Agent(agent)
	text, _, _ := l.Prompt(s.PromptOptions(agent, catalog.PromptOptions{Budget: 600}))
	return text
}

// Loads recorded through the service, in a real store, rank the skills
// that keep their descriptions, after the pinned ones, per agent; the
// counts change only when recomputed, never per request, so renders of an
// unchanged catalog stay byte-identical in between.
func TestUsageRanksListing(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			s := rankedService(t, st)
			ctx := context.Background()
			if got, want := priority(t, s, "ops"), []string{"zeta"}; !slices.Equal(got, want) {
				t.Fatalf("priority with no usage = %v, want %v (the pinned only)", got, want)
			}
			before := prompt(t, s, "ops")
			load := func(agent, name string, n int) {
				for range n {
					if _, err := s.Load(ctx, admin, agent, name, TransportHTTP); err != nil {
						t.Fatal(err)
					}
				}
			}
			load("ops", "echo", 3)
			load("ops", "bravo", 1)
			load("ops", "zeta", 1)
			load("dev", "delta", 5)
			load("ops", "no-such-skill", 9) // not_found: never counts
			gen := s.UsageGeneration()
			// Receipts recorded, no recompute: nothing changes.
			if got := prompt(t, s, "ops"); got != before {
				t.Errorf("the prompt changed after receipts were recorded without a recompute:\n%s\n---\n%s", before, got)
			}
			if got, want := priority(t, s, "ops"), []string{"zeta"}; !slices.Equal(got, want) {
				t.Fatalf("priority before the recompute = %v, want %v", got, want)
			}
			if err := s.RefreshUsage(ctx); err != nil {
				t.Fatal(err)
			}
			if s.UsageGeneration() == gen {
				t.Error("the usage generation did not change with the counts")
			}
			if got, want := priority(t, s, "ops"), []string{"zeta", "echo", "bravo"}; !slices.Equal(got, want) {
				t.Errorf("ops priority = %v, want %v (pinned, then the used ones, most used first)", got, want)
			}
			if got, want := priority(t, s, "dev"), []string{"delta"}; !slices.Equal(got, want) {
				t.Errorf("dev priority = %v, want %v (its own usage only, no pins)", got, want)
			}
			if got, want := priority(t, s, catalog.GlobalID), []string{"delta", "echo", "bravo", "zeta"}; !slices.Equal(got, want) {
				t.Errorf("global priority = %v, want %v (every agent's usage summed)", got, want)
			}
			// Two renders after the recompute are byte-identical, and a
			// recompute with no new receipts keeps the snapshot.
			a := prompt(t, s, "ops")
			gen = s.UsageGeneration()
			if err := s.RefreshUsage(ctx); err != nil {
				t.Fatal(err)
			}
			if b := prompt(t, s, "ops"); a != b || s.UsageGeneration() != gen {
				t.Errorf("an unchanged catalog and usage rendered differently (generation %d -> %d):\n%s\n---\n%s", gen, s.UsageGeneration(), a, b)
			}
			// A rescan (a reload) recomputes.
			load("ops", "charlie", 7)
			s.Rescan(ctx, "test")
			if got := priority(t, s, "ops"); got[1] != "charlie" {
				t.Errorf("after a rescan, ops priority = %v, want charlie first after the pin", got)
			}
		})
	}
}

// A service reads the counts when it starts: a second instance over the
// same store ranks by the first one's receipts at once.
func TestUsageReadAtStart(t *testing.T) {
	open := engines(t)["sqlite"](t)
	s1 := rankedService(t, open(t))
	ctx := context.Background()
	for range 2 {
		s1.Load(ctx, admin, "ops", "delta", TransportHTTP)
	}
	s1.Close()
	s2 := rankedService(t, open(t))
	if got, want := priority(t, s2, "ops"), []string{"zeta", "delta"}; !slices.Equal(got, want) {
		t.Errorf("priority at start = %v, want %v", got, want)
	}
}

// The counts are recomputed on the Refresh schedule: loads recorded after
// start rank the listing once a refresh has run, with no reload.
func TestUsageRecomputedOnSchedule(t *testing.T) {
	st := engines(t)["sqlite"](t)(t)
	dir := t.TempDir()
	for _, name := range []string{"alpha", "bravo"} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: Does "+name+".\n---\nDo it.\n")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: st, Server: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Listing: ListingOptions{Refresh: 20 * time.Millisecond}})
	defer s.Close()
	s.Load(context.Background(), admin, "ops", "bravo", TransportHTTP)
	deadline := time.Now().Add(10 * time.Second)
	for s.UsageCounts("ops")["bravo"] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled recompute within 10 s: counts %v", s.UsageCounts("ops"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUsageIgnoresRefusedAndMissing: reads of a skill's missing files
// (404), refused reads (400: a bad path) and refused loads leave receipts
// but are not usage: they neither rank the skill in the listing nor count
// as its loads, however many there are; one successful load does.
func TestUsageIgnoresRefusedAndMissing(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			s := rankedService(t, st)
			ctx := context.Background()
			for i := range 20 {
				for _, path := range []string{"missing.md", "../../etc/passwd", "a\x00b", "references/nope-" + strings.Repeat("x", i)} {
					if _, err := s.ReadFile(ctx, admin, "ops", "echo", path, catalog.ReadOptions{}, TransportHTTP); err != nil {
						t.Fatal(err)
					}
				}
				s.RecordRefusal(admin, mustAgent(t, s, "ops"), nil, "alpha", "load", "", "hidden", TransportMCPHTTP)
			}
			if _, err := s.Load(ctx, admin, "ops", "bravo", TransportHTTP); err != nil {
				t.Fatal(err)
			}
			if err := s.RefreshUsage(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := priority(t, s, "ops"), []string{"zeta", "bravo"}; !slices.Equal(got, want) {
				t.Errorf("ops priority = %v, want %v (80 failed reads of echo and 20 refused loads of alpha count for nothing)", got, want)
			}
			if got := s.UsageCounts("ops"); len(got) != 1 || got["bravo"] != 1 {
				t.Errorf("usage counts %v, want bravo 1 only", got)
			}
		})
	}
}

func mustAgent(t *testing.T, s *Service, id string) *catalog.Loadout {
	t.Helper()
	l, ok := s.Catalog().Agent(id)
	if !ok {
		t.Fatalf("no agent %q", id)
	}
	return l
}

// Search ranks by the same usage counts as the listing: skills the query
// matches equally (the six share their words) come used first, most used
// first, per agent; before a recompute, by name.
func TestUsageRanksSearch(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			s := rankedService(t, fresh(t)(t))
			ctx := context.Background()
			search := func(agent string) []string {
				hits, err := s.Search(ctx, admin, agent, "conventions", 3)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, h := range hits {
					names = append(names, h.Name)
				}
				return names
			}
			load := func(agent, name string, n int) {
				for range n {
					if _, err := s.Load(ctx, admin, agent, name, TransportHTTP); err != nil {
						t.Fatal(err)
					}
				}
			}
			load("ops", "echo", 3)
			load("ops", "zeta", 1)
			load("dev", "delta", 5)
			if got, want := search("ops"), []string{"alpha", "bravo", "charlie"}; !slices.Equal(got, want) {
				t.Fatalf("ops before the recompute = %v, want %v (equal scores, by name)", got, want)
			}
			if err := s.RefreshUsage(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := search("ops"), []string{"echo", "zeta", "alpha"}; !slices.Equal(got, want) {
				t.Errorf("ops = %v, want %v (used first, most used first)", got, want)
			}
			if got, want := search("dev"), []string{"delta", "alpha", "bravo"}; !slices.Equal(got, want) {
				t.Errorf("dev = %v, want %v (its own usage only)", got, want)
			}
		})
	}
}
