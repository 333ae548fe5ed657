package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The conformance tests of store.Drafts: drafts, reviews, pins and
// withdrawal.

func drafts(t *testing.T, s store.Store) store.Drafts {
	t.Helper()
	d, ok := s.(store.Drafts)
	if !ok {
		t.Fatalf("%T does not implement store.Drafts", s)
	}
	return d
}

var (
	alice = store.Author{Token: "tok-alice", Name: "alice"}
	bob   = store.Author{Token: "tok-bob", Name: "bob"}
)

// served returns the body and version of the skill a fresh Provider of s
// serves under name ("", 0 for none), checking Skills and Skill agree.
func served(t *testing.T, s store.Store, name string) (string, int) {
	t.Helper()
	sks, diags := store.NewProvider(s).Skills(ctx)
	if len(diags) != 0 {
		t.Fatalf("Provider diagnostics: %v", diags)
	}
	one, _, err := store.NewProvider(s).Skill(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var sk *skill.Skill
	for _, x := range sks {
		if x.Name == name {
			sk = x
		}
	}
	if sk == nil {
		if one != nil {
			t.Errorf("Skill(%s) serves version %d, Skills none", name, one.OriginValue().Version)
		}
		return "", 0
	}
	if one == nil || one.OriginValue().Version != sk.OriginValue().Version {
		t.Errorf("Skill(%s) serves %v, Skills version %d", name, one, sk.OriginValue().Version)
	}
	body, err := sk.Body()
	if err != nil {
		t.Fatal(err)
	}
	return body, sk.OriginValue().Version
}

func draftBundle(name, text string) *skill.Bundle {
	return &skill.Bundle{Content: []byte(fmt.Sprintf("---\nname: %s\ndescription: Use for %s.\n---\n%s\n", name, name, text))}
}

func pending(t *testing.T, d store.Drafts, name string) []store.Review {
	t.Helper()
	rs, err := d.Reviews(ctx, store.ReviewFilter{Skill: name, State: store.ReviewPending})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// Without WithDraft every save publishes; with it, the published version
// stays and a pending review names the draft, its base and author.
func testDrafts(t *testing.T, s store.Store) {
	d := drafts(t, s)
	rec, err := s.Put(ctx, draftBundle("doc", "one"), store.PutOptions{IfVersion: 0})
	if err != nil || rec.Version != 1 || rec.Published != 1 {
		t.Fatalf("plain create: %+v %v", rec, err)
	}
	if body, v := served(t, s, "doc"); v != 1 || !strings.Contains(body, "one") {
		t.Fatalf("served %d %q", v, body)
	}
	dctx := store.WithDraft(ctx, alice)
	rec, err = s.Put(dctx, draftBundle("doc", "two"), store.PutOptions{IfVersion: 1})
	if err != nil || rec.Version != 2 || rec.Published != 1 {
		t.Fatalf("draft: %+v %v", rec, err)
	}
	if body, v := served(t, s, "doc"); v != 1 || !strings.Contains(body, "one") {
		t.Errorf("after a draft, served %d %q, want version 1", v, body)
	}
	rs := pending(t, d, "doc")
	if len(rs) != 1 || rs[0].Version != 2 || rs[0].Base != 1 || rs[0].Author != "alice" || rs[0].AuthorToken != "tok-alice" ||
		rs[0].Digest != rec.Digest || rs[0].State != store.ReviewPending {
		t.Fatalf("reviews: %+v", rs)
	}
	// Every kind of write makes a draft under WithDraft.
	if rec, err = s.PutFile(dctx, "doc", "notes.md", []byte("n"), false, 2); err != nil || rec.Published != 1 {
		t.Fatalf("PutFile draft: %+v %v", rec, err)
	}
	if rec, err = s.Restore(dctx, "doc", 1, 3); err != nil || rec.Published != 1 || rec.Version != 4 {
		t.Fatalf("Restore draft: %+v %v", rec, err)
	}
	if n := len(pending(t, d, "doc")); n != 3 {
		t.Errorf("%d pending, want 3", n)
	}
	// A skill created as a draft is served to no one until approved.
	if rec, err = s.Put(dctx, draftBundle("fresh", "new"), store.PutOptions{IfVersion: 0}); err != nil || rec.Published != 0 {
		t.Fatalf("draft create: %+v %v", rec, err)
	}
	if _, v := served(t, s, "fresh"); v != 0 {
		t.Errorf("an unpublished skill is served at version %d", v)
	}
	r := pending(t, d, "fresh")[0]
	if r.Base != 0 {
		t.Errorf("base %d, want 0", r.Base)
	}
	got, before, err := d.Approve(ctx, r.ID, bob, "fine")
	if err != nil || before != 0 || got.State != store.ReviewApproved || got.Reviewer != "bob" || got.Comment != "fine" || got.DecidedAt.IsZero() {
		t.Fatalf("Approve: %+v %d %v", got, before, err)
	}
	if _, v := served(t, s, "fresh"); v != 1 {
		t.Errorf("approved create served at %d", v)
	}
	// The state filter is checked.
	if _, err := d.Reviews(ctx, store.ReviewFilter{State: "open"}); store.ErrorCode(err) != store.Invalid {
		t.Errorf("state open: %v", err)
	}
	if _, err := d.Review(ctx, "nope"); store.ErrorCode(err) != store.NotFound {
		t.Errorf("Review(nope): %v", err)
	}
}

// Approve publishes exactly the draft's version; the other drafts of the
// same base then conflict; Reject publishes nothing; a decided review
// cannot be decided again.
func testApproveReject(t *testing.T, s store.Store) {
	d := drafts(t, s)
	put(t, s, draftBundle("doc", "one"), 0)
	dctx := store.WithDraft(ctx, alice)
	if _, err := s.Put(dctx, draftBundle("doc", "two"), store.PutOptions{IfVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(dctx, draftBundle("doc", "three"), store.PutOptions{IfVersion: 2}); err != nil {
		t.Fatal(err)
	}
	rs := pending(t, d, "doc")
	byVersion := map[int]store.Review{}
	for _, r := range rs {
		byVersion[r.Version] = r
	}
	// Approving version 2 (not the latest) publishes exactly version 2.
	if _, before, err := d.Approve(ctx, byVersion[2].ID, bob, ""); err != nil || before != 1 {
		t.Fatalf("Approve v2: %d %v", before, err)
	}
	if body, v := served(t, s, "doc"); v != 2 || !strings.Contains(body, "two") {
		t.Errorf("served %d %q, want version 2", v, body)
	}
	rec, _ := s.Get(ctx, "doc")
	if rec.Version != 3 || rec.Published != 2 {
		t.Errorf("record: version %d published %d", rec.Version, rec.Published)
	}
	// Version 3 was made from base 1, which is no longer published.
	_, _, err := d.Approve(ctx, byVersion[3].ID, bob, "")
	if store.ErrorCode(err) != store.Conflict || !strings.Contains(err.Error(), "published since") {
		t.Fatalf("stale base: %v", err)
	}
	if e := err.(*store.Error); e.Current != 2 {
		t.Errorf("Current %d, want 2", e.Current)
	}
	if _, v := served(t, s, "doc"); v != 2 {
		t.Errorf("a refused approval moved what is served to %d", v)
	}
	got, err := d.Reject(ctx, byVersion[3].ID, bob, "stale")
	if err != nil || got.State != store.ReviewRejected || got.Comment != "stale" {
		t.Fatalf("Reject: %+v %v", got, err)
	}
	for _, id := range []string{byVersion[2].ID, byVersion[3].ID} {
		if _, _, err := d.Approve(ctx, id, bob, ""); store.ErrorCode(err) != store.Conflict {
			t.Errorf("approving a decided review: %v", err)
		}
		if _, err := d.Reject(ctx, id, bob, ""); store.ErrorCode(err) != store.Conflict {
			t.Errorf("rejecting a decided review: %v", err)
		}
	}
	// Pending first, then newest first.
	if _, err := s.Put(dctx, draftBundle("doc", "four"), store.PutOptions{IfVersion: 3}); err != nil {
		t.Fatal(err)
	}
	all, err := d.Reviews(ctx, store.ReviewFilter{})
	if err != nil || len(all) != 3 || all[0].State != store.ReviewPending || all[0].Version != 4 || all[0].Base != 2 {
		t.Fatalf("Reviews: %+v %v", all, err)
	}
	// A save without a draft publishes, as it always has.
	rec = put(t, s, draftBundle("doc", "five"), 4)
	if rec.Published != 5 {
		t.Errorf("plain save published %d", rec.Published)
	}
	// Deleting the skill deletes its reviews.
	if err := s.Delete(ctx, "doc", -1); err != nil {
		t.Fatal(err)
	}
	if all, _ := d.Reviews(ctx, store.ReviewFilter{Skill: "doc"}); len(all) != 0 {
		t.Errorf("reviews of a deleted skill: %+v", all)
	}
}

// Two approvals of different drafts of one skill at once: exactly one
// wins, the other is a conflict, and the winner's version is published.
func testApprovalRace(t *testing.T, s store.Store) {
	d := drafts(t, s)
	for round := range 5 {
		name := fmt.Sprintf("race-%d", round)
		put(t, s, draftBundle(name, "base"), 0)
		dctx := store.WithDraft(ctx, alice)
		const n = 4
		for i := range n {
			if _, err := s.Put(dctx, draftBundle(name, fmt.Sprintf("draft %d", i)), store.PutOptions{IfVersion: i + 1}); err != nil {
				t.Fatal(err)
			}
		}
		rs := pending(t, d, name)
		if len(rs) != n {
			t.Fatalf("%d pending", len(rs))
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = d.Approve(ctx, rs[i].ID, bob, "")
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch store.ErrorCode(err) {
			case "":
				if winner >= 0 {
					t.Errorf("round %d: approvals %d and %d both won", round, winner, i)
				}
				winner = i
			case store.Conflict:
			default:
				t.Errorf("round %d: approval %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no approval won: %v", round, errs)
		}
		rec, _ := s.Get(ctx, name)
		if rec.Published != rs[winner].Version {
			t.Errorf("round %d: published %d, the winner approved %d", round, rec.Published, rs[winner].Version)
		}
		if left := pending(t, d, name); len(left) != n-1 {
			t.Errorf("round %d: %d still pending, want %d", round, len(left), n-1)
		}
	}
}

// Pins: exact versions that exist, "latest", "published" (no row);
// withdrawal leaves listings, refuses new exact pins and keeps old ones.
func testPinsWithdraw(t *testing.T, s store.Store) {
	d := drafts(t, s)
	put(t, s, draftBundle("doc", "one"), 0)
	put(t, s, draftBundle("doc", "two"), 1)
	if _, err := d.SetPin(ctx, store.Pin{Agent: "a", Skill: "doc", Follow: store.FollowVersion, Version: 1, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SetPin(ctx, store.Pin{Agent: "b", Skill: "doc", Follow: store.FollowLatest}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.Pin{
		{Agent: "a", Skill: "doc", Follow: store.FollowVersion, Version: 3},  // past the latest
		{Agent: "a", Skill: "doc", Follow: store.FollowVersion, Version: 0},  // no version
		{Agent: "a", Skill: "nope", Follow: store.FollowVersion, Version: 1}, // no skill
		{Agent: "", Skill: "doc", Follow: store.FollowLatest},                // no agent
		{Agent: "a", Skill: "doc", Follow: "newest"},                         // no such follow
	} {
		if _, err := d.SetPin(ctx, bad); err == nil {
			t.Errorf("SetPin(%+v) accepted", bad)
		}
	}
	ps, err := d.Pins(ctx, "doc")
	if err != nil || len(ps) != 2 || ps[0].Agent != "a" || ps[0].Version != 1 || ps[0].Actor != "alice" || ps[1].Follow != store.FollowLatest {
		t.Fatalf("Pins: %+v %v", ps, err)
	}
	if err := d.Withdraw(ctx, "doc", true); err != nil {
		t.Fatal(err)
	}
	if _, v := served(t, s, "doc"); v != 0 {
		t.Errorf("a withdrawn skill is listed at version %d", v)
	}
	if rec, _ := s.Get(ctx, "doc"); !rec.Withdrawn {
		t.Error("Get: not withdrawn")
	}
	if _, err := d.SetPin(ctx, store.Pin{Agent: "c", Skill: "doc", Follow: store.FollowVersion, Version: 2}); store.ErrorCode(err) != store.Conflict {
		t.Errorf("a new pin of a withdrawn skill: %v", err)
	}
	// The existing pin is kept, and may be set again as it is.
	if _, err := d.SetPin(ctx, store.Pin{Agent: "a", Skill: "doc", Follow: store.FollowVersion, Version: 1}); err != nil {
		t.Errorf("re-setting an existing pin: %v", err)
	}
	if ps, _ := d.Pins(ctx, ""); len(ps) != 2 {
		t.Errorf("pins after withdrawal: %+v", ps)
	}
	// Moving a pin to published keeps a row that says so (it overrides
	// the config's pin).
	if _, err := d.SetPin(ctx, store.Pin{Agent: "a", Skill: "doc", Follow: store.FollowPublished}); err != nil {
		t.Fatal(err)
	}
	if ps, _ := d.Pins(ctx, ""); len(ps) != 2 || ps[0].Agent != "a" || ps[0].Follow != store.FollowPublished || ps[0].Version != 0 {
		t.Errorf("pins after unpinning a: %+v", ps)
	}
	if err := d.Withdraw(ctx, "doc", false); err != nil {
		t.Fatal(err)
	}
	if _, v := served(t, s, "doc"); v != 2 {
		t.Errorf("restored skill served at %d", v)
	}
	if err := d.Withdraw(ctx, "nope", true); store.ErrorCode(err) != store.NotFound {
		t.Errorf("Withdraw(nope): %v", err)
	}
}
