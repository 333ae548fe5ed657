package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

func TestProvider(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(name, desc string) {
		t.Helper()
		b := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nBody of " + name + ".\n")}
		if _, err := st.Put(ctx, b, store.PutOptions{IfVersion: -1}); err != nil {
			t.Fatal(err)
		}
	}
	put("alpha", "A.")
	put("beta", "B.")
	put("gamma", "C.")
	if err := st.SetEnabled(ctx, "gamma", false); err != nil {
		t.Fatal(err)
	}
	p := store.NewProvider(st)
	all, diags := p.Skills(ctx)
	if len(all) != 2 || all[0].Name != "alpha" || all[1].Name != "beta" || len(diags) != 0 {
		t.Fatalf("Skills: %v %v", all, diags)
	}
	// One skill: the same value while it has not changed.
	a, _, err := p.Skill(ctx, "alpha")
	if err != nil || a != all[0] {
		t.Errorf("Skill(alpha) = %p, %v; want the value Skills returned, %p", a, err, all[0])
	}
	put("alpha", "A, edited.")
	a2, _, err := p.Skill(ctx, "alpha")
	if err != nil || a2 == a || a2.Description != "A, edited." || a2.Origin.Version != 2 {
		t.Errorf("Skill(alpha) after an edit: %+v, %v", a2, err)
	}
	if body, _ := a2.Body(); body != "Body of alpha.\n" {
		t.Errorf("body %q", body)
	}
	// A disabled or missing skill is nil, without an error.
	for _, name := range []string{"gamma", "nope"} {
		if sk, d, err := p.Skill(ctx, name); sk != nil || d != nil || err != nil {
			t.Errorf("Skill(%s) = %v, %v, %v", name, sk, d, err)
		}
	}
	// Reading everything again keeps every unchanged skill.
	again, _ := p.Skills(ctx)
	if again[0] != a2 || again[1] != all[1] {
		t.Error("Skills built unchanged skills again")
	}
	// A store that cannot be read is an error diagnostic.
	st.Close()
	if sk, d := p.Skills(ctx); sk != nil || len(d) != 1 || d[0].Severity != skill.Error || d[0].Code != skill.CodeReadError {
		t.Errorf("closed store: %v %v", sk, d)
	}
	if _, _, err := p.Skill(ctx, "alpha"); err == nil {
		t.Error("Skill on a closed store: no error")
	}
}

// listCounting counts the reads of the whole store (List or Walk); it
// keeps Stamps.
type listCounting struct {
	*sqlstore.Store
	lists int
}

func (l *listCounting) List(ctx context.Context) ([]*store.Record, error) {
	l.lists++
	return l.Store.List(ctx)
}

func (l *listCounting) Walk(ctx context.Context, fn func(*store.Record) error) error {
	l.lists++
	return l.Store.Walk(ctx, fn)
}

// Reading the store again after a change by another instance reads the
// stamps and then only the skills that changed.
func TestProviderStamps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loadout.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	put := func(s store.Store, name, desc string) {
		t.Helper()
		b := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nBody.\n")}
		if _, err := s.Put(ctx, b, store.PutOptions{IfVersion: -1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		put(st, n, "Start.")
	}
	lc := &listCounting{Store: st}
	p := store.NewProvider(lc)
	first, _ := p.Skills(ctx)
	if lc.lists != 1 || len(first) != 4 {
		t.Fatalf("first read: %d lists, %d skills", lc.lists, len(first))
	}
	put(other, "b", "Edited.")
	put(other, "e", "New.")
	if err := other.Delete(ctx, "c", -1); err != nil {
		t.Fatal(err)
	}
	if err := other.SetEnabled(ctx, "d", false); err != nil {
		t.Fatal(err)
	}
	again, _ := p.Skills(ctx)
	if lc.lists != 1 {
		t.Errorf("the second read listed the whole store")
	}
	var got []string
	for _, sk := range again {
		got = append(got, sk.Name+":"+sk.Description)
	}
	if strings.Join(got, " ") != "a:Start. b:Edited. e:New." {
		t.Errorf("skills after the other instance's changes: %v", got)
	}
	if again[0] != first[0] {
		t.Error("an unchanged skill was built again")
	}
}
