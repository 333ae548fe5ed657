package service

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// reviewService is a service over a SQLite store with review on (unless
// opt says otherwise) and one agent reading the store.
func reviewService(t *testing.T, opt ReviewOptions) *Service {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: st, Review: opt})
	t.Cleanup(func() { s.Close() })
	return s
}

func skillText(name, text string) *skill.Bundle {
	return &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: Use for " + name + ".\n---\n" + text + "\n")}
}

// seen is the version of name agent dev is served (0: none).
func seen(t *testing.T, s *Service, name string) int {
	t.Helper()
	l, err := s.Loadout(Principal{Open: true}, "dev")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := l.Lookup(name)
	if !ok {
		return 0
	}
	return e.Skill.OriginValue().Version
}

var (
	authorP   = Principal{TokenID: "t-author", Name: "author", Scopes: []string{"admin"}}
	reviewerP = Principal{TokenID: "t-reviewer", Name: "reviewer", Scopes: []string{"admin"}}
)

func TestReviewRequired(t *testing.T) {
	ctx := context.Background()
	s := reviewService(t, ReviewOptions{Required: true})
	// A skill created under review is served to no one until approved.
	if _, err := s.Put(ctx, authorP, skillText("doc", "one"), 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	if v := seen(t, s, "doc"); v != 0 {
		t.Fatalf("an unapproved skill is served at version %d", v)
	}
	rs, err := s.Reviews(ctx, reviewerP, store.ReviewFilter{State: store.ReviewPending})
	if err != nil || len(rs) != 1 || rs[0].Author != "author" || rs[0].AuthorToken != "t-author" {
		t.Fatalf("Reviews: %+v %v", rs, err)
	}
	// The author may not approve (nor reject) their own draft.
	if _, err := s.Approve(ctx, authorP, rs[0].ID, ""); code(err) != CodeForbidden || !strings.Contains(err.Error(), "review.distinct") {
		t.Fatalf("self-approval: %v", err)
	}
	if _, err := s.Reject(ctx, authorP, rs[0].ID, ""); code(err) != CodeForbidden {
		t.Fatalf("self-rejection: %v", err)
	}
	// Nor may a principal without the reviewer role.
	agentP := Principal{TokenID: "t-agent", Scopes: []string{"agent:dev"}}
	if _, err := s.Approve(ctx, agentP, rs[0].ID, ""); code(err) != CodeForbidden {
		t.Fatalf("agent approving: %v", err)
	}
	if _, err := s.Reviews(ctx, agentP, store.ReviewFilter{}); code(err) != CodeForbidden {
		t.Fatalf("agent listing reviews: %v", err)
	}
	if _, err := s.Approve(ctx, reviewerP, rs[0].ID, "ok"); err != nil {
		t.Fatal(err)
	}
	if v := seen(t, s, "doc"); v != 1 {
		t.Fatalf("after approval the agent sees version %d", v)
	}
	// An edit is a draft: the agent keeps version 1.
	if _, err := s.PutFile(ctx, authorP, "doc", "SKILL.md", skillText("doc", "two").Content, false, 1); err != nil {
		t.Fatal(err)
	}
	if v := seen(t, s, "doc"); v != 1 {
		t.Fatalf("after a draft the agent sees version %d", v)
	}
	rs, _ = s.Reviews(ctx, reviewerP, store.ReviewFilter{State: store.ReviewPending})
	det, err := s.Review(ctx, reviewerP, rs[0].ID)
	if err != nil || det.Published != 1 || len(det.Files) != 1 || det.Files[0].Status != "changed" ||
		!strings.Contains(det.Files[0].Diff, "-one\n+two\n") {
		t.Fatalf("Review detail: %+v %v", det, err)
	}
	if _, err := s.Reject(ctx, reviewerP, rs[0].ID, "no"); err != nil {
		t.Fatal(err)
	}
	if v := seen(t, s, "doc"); v != 1 {
		t.Fatalf("after a rejection the agent sees version %d", v)
	}
	if long := strings.Repeat("x", MaxReviewComment+1); true {
		if _, err := s.Approve(ctx, reviewerP, rs[0].ID, long); code(err) != CodeInvalid {
			t.Errorf("a comment past the limit: %v", err)
		}
	}
}

// review.distinct off: the author may approve their own draft.
func TestReviewAllowSelf(t *testing.T) {
	ctx := context.Background()
	s := reviewService(t, ReviewOptions{Required: true, AllowSelf: true})
	if _, err := s.Put(ctx, authorP, skillText("doc", "one"), 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	rs, _ := s.Reviews(ctx, authorP, store.ReviewFilter{})
	if _, err := s.Approve(ctx, authorP, rs[0].ID, ""); err != nil {
		t.Fatalf("self-approval with distinct off: %v", err)
	}
	if v := seen(t, s, "doc"); v != 1 {
		t.Fatalf("agent sees %d", v)
	}
}

// Review off (the default): every save publishes, and no review is made.
func TestReviewOff(t *testing.T) {
	ctx := context.Background()
	s := reviewService(t, ReviewOptions{})
	if _, err := s.Put(ctx, authorP, skillText("doc", "one"), 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, authorP, skillText("doc", "two"), 1, "api", ""); err != nil {
		t.Fatal(err)
	}
	if v := seen(t, s, "doc"); v != 2 {
		t.Fatalf("agent sees %d, want 2", v)
	}
	if rs, err := s.Reviews(ctx, reviewerP, store.ReviewFilter{}); err != nil || len(rs) != 0 {
		t.Fatalf("reviews with review off: %+v %v", rs, err)
	}
}

func TestDiffBundles(t *testing.T) {
	old := &skill.Bundle{Content: []byte("a\nb\nc\n"), Files: []skill.BundleFile{{Path: "x.md", Data: []byte("x")}, {Path: "gone.md", Data: []byte("g")}}}
	cur := &skill.Bundle{Content: []byte("a\nB\nc\n"), Files: []skill.BundleFile{{Path: "x.md", Data: []byte("x")}, {Path: "bin", Data: []byte{0, 1}}}}
	got := DiffBundles(old, cur)
	want := "SKILL.md changed; bin added; gone.md removed; x.md unchanged"
	var parts []string
	for _, c := range got {
		parts = append(parts, c.Path+" "+c.Status)
	}
	if strings.Join(parts, "; ") != want {
		t.Fatalf("got %s", strings.Join(parts, "; "))
	}
	if got[0].Diff != " a\n-b\n+B\n c\n" || got[1].Note == "" {
		t.Errorf("diff %q note %q", got[0].Diff, got[1].Note)
	}
}

// pinService is reviewService with the catalog reading the store's pins.
func pinService(t *testing.T, opt ReviewOptions, specs ...catalog.AgentSpec) *Service {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if len(specs) == 0 {
		specs = []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}}}
	}
	specs = append(specs, catalog.AgentSpec{AgentID: "ops", Skills: []catalog.SourceSpec{{Store: true}}})
	cat, err := catalog.New(context.Background(), specs, catalog.Options{Store: store.NewProvider(st), Pins: StorePins(st)})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: st, Server: st, Review: opt})
	t.Cleanup(func() { s.Close() })
	return s
}

func seenBy(t *testing.T, s *Service, agent, name string) int {
	t.Helper()
	l, err := s.Loadout(Principal{Open: true}, agent)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := l.Lookup(name)
	if !ok {
		return 0
	}
	return e.Skill.OriginValue().Version
}

// A pinned agent keeps its version through later publishes; "update
// pending" lists it; advancing moves it; withdrawal keeps the pin.
func TestPins(t *testing.T) {
	ctx := context.Background()
	s := pinService(t, ReviewOptions{})
	admin := reviewerP
	for i, text := range []string{"one", "two"} {
		if _, err := s.Put(ctx, admin, skillText("doc", text), i, "api", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetPin(ctx, admin, "dev", "doc", catalog.VersionPin{Version: 1}); err != nil {
		t.Fatal(err)
	}
	if v, w := seenBy(t, s, "dev", "doc"), seenBy(t, s, "ops", "doc"); v != 1 || w != 2 {
		t.Fatalf("dev sees %d (pinned to 1), ops %d (published 2)", v, w)
	}
	// A body load serves the pinned bytes.
	l, _ := s.Loadout(admin, "dev")
	e, _ := l.Lookup("doc")
	if body, err := e.Skill.Body(); err != nil || !strings.Contains(body, "one") {
		t.Fatalf("pinned body %q %v", body, err)
	}
	if _, err := s.Put(ctx, admin, skillText("doc", "three"), 2, "api", ""); err != nil {
		t.Fatal(err)
	}
	if v, w := seenBy(t, s, "dev", "doc"), seenBy(t, s, "ops", "doc"); v != 1 || w != 3 {
		t.Fatalf("after a publish: dev sees %d, ops %d", v, w)
	}
	pend, err := s.PendingPins(ctx, admin)
	if err != nil || len(pend) != 1 || pend[0] != (PendingPin{Agent: "dev", Skill: "doc", Version: 1, Published: 3, From: "api"}) {
		t.Fatalf("pending: %+v %v", pend, err)
	}
	// Bad pins are refused by name.
	if _, err := s.SetPin(ctx, admin, "dev", "doc", catalog.VersionPin{Version: 9}); code(err) != CodeNotFound {
		t.Errorf("pin to version 9: %v", err)
	}
	if _, err := s.SetPin(ctx, admin, "nobody", "doc", catalog.VersionPin{Version: 1}); code(err) != CodeNotFound {
		t.Errorf("pin of an unknown agent: %v", err)
	}
	if _, err := s.SetPin(ctx, Principal{TokenID: "a", Scopes: []string{"agent:dev"}}, "dev", "doc", catalog.VersionPin{Version: 1}); code(err) != CodeForbidden {
		t.Errorf("an agent token pinning: %v", err)
	}
	// Withdrawal: ops (following published) loses the skill, dev keeps
	// its pin; no new exact pin.
	if err := s.Withdraw(ctx, admin, "doc", true); err != nil {
		t.Fatal(err)
	}
	if v, w := seenBy(t, s, "dev", "doc"), seenBy(t, s, "ops", "doc"); v != 1 || w != 0 {
		t.Fatalf("after withdrawal: dev sees %d, ops %d", v, w)
	}
	if _, err := s.SetPin(ctx, admin, "ops", "doc", catalog.VersionPin{Version: 2}); code(err) != CodeConflict {
		t.Errorf("a new pin of a withdrawn skill: %v", err)
	}
	u, err := s.WhereUsed(ctx, admin, "doc")
	if err != nil || !u.Withdrawn || len(u.Uses) != 1 || u.Uses[0].Agent != "dev" || u.Uses[0].Version != 1 ||
		strings.Join(u.Uses[0].How, ",") != "lists,pins" {
		t.Fatalf("where used: %+v %v", u, err)
	}
	if err := s.Withdraw(ctx, admin, "doc", false); err != nil {
		t.Fatal(err)
	}
	moved, err := s.AdvancePins(ctx, admin, "", "")
	if err != nil || len(moved) != 1 {
		t.Fatalf("advance: %+v %v", moved, err)
	}
	if v := seenBy(t, s, "dev", "doc"); v != 3 {
		t.Fatalf("after advancing dev sees %d", v)
	}
	if pend, _ := s.PendingPins(ctx, admin); len(pend) != 0 {
		t.Errorf("still pending: %+v", pend)
	}
	// latest follows drafts under review.
	s.opt.Review.Required = true
	if _, err := s.SetPin(ctx, admin, "ops", "doc", catalog.VersionPin{Latest: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, authorP, skillText("doc", "four"), 3, "api", ""); err != nil {
		t.Fatal(err)
	}
	if v, w := seenBy(t, s, "dev", "doc"), seenBy(t, s, "ops", "doc"); v != 3 || w != 4 {
		t.Fatalf("latest: dev sees %d, ops %d (want 3, 4)", v, w)
	}
}

// Pins in the config ("versions") hold until the API overrides them.
func TestConfigPins(t *testing.T) {
	ctx := context.Background()
	s := pinService(t, ReviewOptions{}, catalog.AgentSpec{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}},
		Versions: map[string]catalog.VersionPin{"doc": {Version: 1}}})
	for i, text := range []string{"one", "two"} {
		if _, err := s.Put(ctx, reviewerP, skillText("doc", text), i, "api", ""); err != nil {
			t.Fatal(err)
		}
	}
	if v := seenBy(t, s, "dev", "doc"); v != 1 {
		t.Fatalf("config pin: dev sees %d", v)
	}
	pend, _ := s.PendingPins(ctx, reviewerP)
	if len(pend) != 1 || pend[0].From != "config" {
		t.Fatalf("pending: %+v", pend)
	}
	if _, err := s.SetPin(ctx, reviewerP, "dev", "doc", catalog.VersionPin{}); err != nil {
		t.Fatal(err)
	}
	if v := seenBy(t, s, "dev", "doc"); v != 2 {
		t.Fatalf("after the API unpinned it: dev sees %d", v)
	}
}
