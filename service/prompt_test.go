package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
)

// keptService is a service over a folder of n skills whose listing does
// not fit its 4,000-character budget.
func keptService(t *testing.T, n int, replan time.Duration) (*Service, string) {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		writeKept(t, dir, fmt.Sprintf("skill-%03d", i), fmt.Sprintf("Handles chore %d of the team. It knows the chore's rules well and says what it changed.", i))
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Budget: 4000, Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listing: ListingOptions{Replan: replan}})
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func writeKept(t *testing.T, dir, name, desc string) {
	t.Helper()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
	testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nDo it.\n")
}

func servedPrompt(t *testing.T, s *Service, opt catalog.PromptOptions) (string, string) {
	t.Helper()
	l, _ := s.Catalog().Agent("ops")
	text, rep, _ := s.Prompt(l, opt)
	return text, rep.Replan
}

// TestPromptKeepsPlan: the service keeps each agent's listing plan, so a
// skill added on disk (a rescan) and new usage counts only append to the
// prompt; other options get plans of their own; a plan older than
// Listing.Replan is made afresh.
func TestPromptKeepsPlan(t *testing.T) {
	ctx := context.Background()
	s, dir := keptService(t, 150, 0)
	first, why := servedPrompt(t, s, catalog.PromptOptions{})
	if why != "no basis" {
		t.Fatalf("first render: replan %q", why)
	}
	writeKept(t, dir, "zz-invoices", "Converts supplier invoices into ledger rows.")
	s.Rescan(ctx, "test")
	if _, err := s.Load(ctx, admin, "ops", "skill-149", TransportHTTP); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshUsage(ctx); err != nil {
		t.Fatal(err)
	}
	next, why := servedPrompt(t, s, catalog.PromptOptions{})
	if why != "" || !strings.HasPrefix(next, first) || !strings.Contains(next[len(first):], "zz-invoices") {
		t.Errorf("after an added skill and a usage refresh: replan %q, prefix kept %v:\n%s", why, strings.HasPrefix(next, first), next[min(len(first), len(next)):])
	}
	// Another format is a plan of its own; the first one is still kept.
	if _, why := servedPrompt(t, s, catalog.PromptOptions{Format: "catalog"}); why != "no basis" {
		t.Errorf("catalog format: replan %q", why)
	}
	if again, why := servedPrompt(t, s, catalog.PromptOptions{}); again != next || why != "" {
		t.Errorf("the pi plan was not kept beside the catalog one: %q", why)
	}
	if s.basesKept() != 2 {
		t.Errorf("%d plans kept, want 2", s.basesKept())
	}

	// Replan every minute: a plan made now is kept, and one whose time
	// is up is made afresh with the usage of the day.
	s2, _ := keptService(t, 150, time.Minute)
	servedPrompt(t, s2, catalog.PromptOptions{})
	if _, why := servedPrompt(t, s2, catalog.PromptOptions{}); why != "" {
		t.Errorf("a fresh plan was not kept: %q", why)
	}
	s2.basesMu.Lock()
	for _, b := range s2.bases {
		b.planned = b.planned.Add(-time.Minute)
	}
	s2.basesMu.Unlock()
	if _, why := servedPrompt(t, s2, catalog.PromptOptions{}); why != "the plan was older than listing.replan (1m0s)" {
		t.Errorf("an old plan: replan %q", why)
	}
}

// TestPromptPlansBounded: clients choose the HTTP route's budget; an
// agent keeps at most MaxBasesPerAgent plans, its least recently used
// going first, and its clients cannot evict another agent's plan.
func TestPromptPlansBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		writeKept(t, dir, fmt.Sprintf("skill-%03d", i), "Handles a chore.")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { s.Close() })
	render := func(agent string, budget int) string {
		l, _ := s.Catalog().Agent(agent)
		_, rep, _ := s.Prompt(l, catalog.PromptOptions{Budget: budget})
		return rep.Replan
	}
	render("dev", 5000)
	for b := range MaxBasesPerAgent + 5 {
		render("ops", 3000+b)
	}
	if n := s.basesKept(); n != MaxBasesPerAgent+1 {
		t.Errorf("%d plans kept, want %d for ops and 1 for dev", n, MaxBasesPerAgent+1)
	}
	if why := render("dev", 5000); why != "" {
		t.Errorf("dev's plan was evicted by ops's budgets: %q", why)
	}
	if why := render("ops", 3000+MaxBasesPerAgent+4); why != "" {
		t.Errorf("the newest plan: replan %q", why)
	}
	if why := render("ops", 3000); why != "no basis" {
		t.Errorf("the oldest plan: replan %q", why)
	}
	// The bytes counted are the plans kept.
	s.basesMu.Lock()
	sum := 0
	for _, b := range s.bases {
		sum += b.basis.Bytes()
	}
	if sum != s.basesBytes || sum == 0 {
		t.Errorf("%d bytes counted, %d kept", s.basesBytes, sum)
	}
	s.basesMu.Unlock()
}
