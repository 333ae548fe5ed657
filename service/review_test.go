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
