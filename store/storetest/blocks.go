package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
)

func blocker(t *testing.T, s store.Store) store.Blocker {
	t.Helper()
	b, ok := s.(store.Blocker)
	if !ok {
		t.Fatalf("%T does not implement store.Blocker", s)
	}
	return b
}

// testBlocks: the kill switch's blocks are kept, listed and removed on
// either instance, refused when malformed (nothing written), and every
// addition and removal reaches the other instance's block feed, and no
// other feed.
func testBlocks(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	ba, bb := blocker(t, a), blocker(t, b)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feedA, err := ba.BlockChanges(cctx)
	if err != nil {
		t.Fatal(err)
	}
	feedB, err := bb.BlockChanges(cctx)
	if err != nil {
		t.Fatal(err)
	}
	skillsB, err := server(t, b).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	tokB, err := server(t, b).TokenChanges(cctx)
	if err != nil {
		t.Fatal(err)
	}
	drain(feedA, 300*time.Millisecond)
	drain(feedB, 0)
	drain(skillsB, 0)
	drain(tokB, 0)

	if got, err := ba.Blocks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a fresh store's blocks: %v, %v", got, err)
	}
	byName, err := ba.AddBlock(ctx, store.Block{Skill: "deploy", Reason: "leaks the key", Actor: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if byName.ID == "" || byName.CreatedAt.IsZero() || byName.Target() != "skill:deploy" {
		t.Errorf("AddBlock returned %+v: want an id, a time and the target skill:deploy", byName)
	}
	seen(t, feedA, "a block added, on the adding instance")
	d := seen(t, feedB, "a block added, on the other instance")
	t.Logf("a block reached the other instance in %v", d.Round(time.Microsecond))
	quiet(t, skillsB, "a block added, on the skill feed", 300*time.Millisecond)
	quiet(t, tokB, "a block added, on the token feed", 0)

	byVersion, err := bb.AddBlock(ctx, store.Block{Skill: "deploy", Version: 3, Reason: "v3 is bad"})
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	byDigest, err := bb.AddBlock(ctx, store.Block{Skill: "fetch", Digest: digest, Reason: "this build"})
	if err != nil {
		t.Fatal(err)
	}
	bySource, err := ba.AddBlock(ctx, store.Block{Source: "team-git", Reason: "compromised"})
	if err != nil {
		t.Fatal(err)
	}
	seen(t, feedA, "blocks added on B, on A")
	// Both instances list the same blocks, oldest first, every field kept.
	for i, s := range []store.Blocker{ba, bb} {
		got, err := s.Blocks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Block{byName, byVersion, byDigest, bySource}
		if len(got) != len(want) {
			t.Fatalf("instance %d lists %d blocks, want %d: %+v", i, len(got), len(want), got)
		}
		for j := range want {
			g, w := got[j], want[j]
			if g.ID != w.ID || g.Skill != w.Skill || g.Version != w.Version || g.Digest != w.Digest || g.Source != w.Source ||
				g.Reason != w.Reason || g.Actor != w.Actor || !g.CreatedAt.Equal(w.CreatedAt) {
				t.Errorf("instance %d, block %d: got %+v, want %+v", i, j, g, w)
			}
		}
	}

	// Malformed blocks are refused, naming the field, and write nothing.
	drain(feedB, 300*time.Millisecond)
	for _, c := range []struct {
		b     store.Block
		field string
	}{
		{store.Block{Reason: "x"}, "skill"},
		{store.Block{Skill: "a", Source: "b", Reason: "x"}, "source"},
		{store.Block{Source: "b", Version: 2, Reason: "x"}, "source"},
		{store.Block{Skill: "a", Version: -1, Reason: "x"}, "version"},
		{store.Block{Skill: "a", Version: 1, Digest: digest, Reason: "x"}, "digest"},
		{store.Block{Skill: "a", Digest: "md5:00", Reason: "x"}, "digest"},
		{store.Block{Skill: "a"}, "reason"},
		{store.Block{Skill: "a", Reason: "  "}, "reason"},
		{store.Block{Skill: "a", Reason: "line\nbreak"}, "reason"},
		{store.Block{Skill: "a", Reason: "bell\x07"}, "reason"},
		{store.Block{Skill: "a", Reason: "bidi\u2028"}, "reason"},
		{store.Block{Skill: "a", Reason: strings.Repeat("r", store.MaxBlockReason+1)}, "reason"},
		{store.Block{Skill: strings.Repeat("s", store.MaxBlockField+1), Reason: "x"}, "skill"},
		{store.Block{Skill: "bad\xff", Reason: "x"}, "skill"},
	} {
		_, err := ba.AddBlock(ctx, c.b)
		if e := wantCode(t, err, store.Invalid); e != nil && e.Field != c.field {
			t.Errorf("AddBlock(%+v): field %q, want %q (%v)", c.b, e.Field, c.field, err)
		}
	}
	// At the limit is fine.
	atLimit, err := ba.AddBlock(ctx, store.Block{Skill: "limit", Reason: strings.Repeat("r", store.MaxBlockReason)})
	if err != nil {
		t.Fatalf("a reason of exactly %d bytes: %v", store.MaxBlockReason, err)
	}
	seen(t, feedB, "the block at the limit")
	quiet(t, feedB, "refused blocks", 300*time.Millisecond)

	// Removal on either instance; an unknown id is not_found and no change.
	for _, id := range []string{byName.ID, byVersion.ID, byDigest.ID, bySource.ID, atLimit.ID} {
		drain(feedA, 0)
		got, err := bb.RemoveBlock(ctx, id)
		if err != nil || got.ID != id {
			t.Fatalf("RemoveBlock(%s) = %+v, %v", id, got, err)
		}
		seen(t, feedA, "a block removed on B, on A")
	}
	drain(feedA, 300*time.Millisecond)
	wantCode(t, func() error { _, err := ba.RemoveBlock(ctx, byName.ID); return err }(), store.NotFound)
	quiet(t, feedA, "an unknown block's removal", 300*time.Millisecond)
	if got, _ := bb.Blocks(ctx); len(got) != 0 {
		t.Errorf("after removing every block, %d are left: %+v", len(got), got)
	}

	// Concurrent additions and removals on both instances lose nothing.
	var wg sync.WaitGroup
	ids := make(chan string, 40)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []store.Blocker{ba, bb}[i%2]
			nb, err := s.AddBlock(context.Background(), store.Block{Skill: "race", Reason: "r"})
			if err != nil {
				t.Error(err)
				return
			}
			if i%4 == 0 {
				if _, err := []store.Blocker{bb, ba}[i%2].RemoveBlock(context.Background(), nb.ID); err != nil {
					t.Error(err)
				}
				return
			}
			ids <- nb.ID
		}()
	}
	wg.Wait()
	close(ids)
	got, _ := ba.Blocks(ctx)
	if len(got) != len(ids) {
		t.Errorf("after 20 concurrent additions and 5 removals: %d blocks, want %d", len(got), len(ids))
	}
}
