package service

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// countingStore counts the reads of the whole store.
type countingStore struct {
	store.Store
	lists atomic.Int64
}

func (c *countingStore) List(ctx context.Context) ([]*store.Record, error) {
	c.lists.Add(1)
	return c.Store.List(ctx)
}

// A write reads the skill written again, and nothing else: it used to read
// every stored skill (and the store's change feed made the server do it a
// second time), which took seconds at a few thousand skills.
func TestWriteRefreshesOnlyTheSkillWritten(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	var items []store.ImportItem
	for i := range 50 {
		items = append(items, store.ImportItem{Bundle: benchBundle(i, 0)})
	}
	if _, err := st.Import(ctx, items); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: st}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Store: true, Available: []string{"deploy-*"}}}},
	}, catalog.Options{Store: store.NewProvider(cs)})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: cs})
	t.Cleanup(func() { s.Close() })
	admin := Principal{Open: true}
	lists := cs.lists.Load()
	gen := s.Generation()
	name := benchName(8) // deploy-lint-00008
	if _, err := s.PutFile(ctx, admin, name, "references/new.md", []byte("new"), false, -1); err != nil {
		t.Fatal(err)
	}
	b := benchBundle(16, 1)
	if _, err := s.Put(ctx, admin, b, -1, "api", ""); err != nil {
		t.Fatal(err)
	}
	created := &skill.Bundle{Content: []byte("---\nname: deploy-new\ndescription: New.\n---\nNew.\n")}
	if _, err := s.Put(ctx, admin, created, 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, admin, benchName(24), -1); err != nil {
		t.Fatal(err)
	}
	if n := cs.lists.Load() - lists; n != 0 {
		t.Errorf("4 writes read the whole store %d times; want none (each reads its skill)", n)
	}
	if got := s.Generation() - gen; got != 4 {
		t.Errorf("4 writes told subscribers %d times", got)
	}
	ops, _ := cat.Agent("ops")
	if e, ok := ops.Lookup(name); !ok || len(e.Skill.Files) != 3 {
		t.Errorf("%s after adding a file: %+v", name, e)
	}
	if _, ok := ops.Lookup("deploy-new"); !ok {
		t.Error("a created skill is not served")
	}
	dev, _ := cat.Agent("dev")
	if _, ok := dev.Lookup(benchName(24)); ok {
		t.Error("a deleted skill is still served")
	}
	if e, _ := dev.Lookup(benchName(16)); e == nil || e.Skill.Description != fmt.Sprintf("Helps with %s tasks, edit 1. Use it when the user asks about %s.", benchName(16), benchName(16)) {
		t.Errorf("an updated skill: %+v", e)
	}
	// A write that changes nothing (the same bytes) tells nobody.
	gen = s.Generation()
	if _, err := s.Put(ctx, admin, benchBundle(16, 1), -1, "api", ""); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen {
		t.Error("an unchanged save told subscribers the catalog changed")
	}
}
