package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/store"
)

// testChangesByOthers: a feed of other instances' changes leaves out the
// writes of its own instance (the server applies those itself), and never
// hides another instance's write, even one committed just before a local
// one (on SQLite both move the one change counter between two polls).
func testChangesByOthers(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	if _, ok := a.(store.OthersFeed); !ok {
		t.Skipf("%T cannot leave out its own changes", a)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	others, err := store.ChangesByOthers(cctx, server(t, a))
	if err != nil {
		t.Fatal(err)
	}
	all, err := server(t, a).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	drain(others, 300*time.Millisecond)
	drain(all, 0)
	// Its own writes: every kind, and none reaches the feed.
	put(t, a, bundle("mine"), 0)
	if _, err := a.PutFile(ctx, "mine", "x.md", []byte("x"), false, -1); err != nil {
		t.Fatal(err)
	}
	if err := a.SetEnabled(ctx, "mine", false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Import(ctx, []store.ImportItem{{Bundle: bundle("mine-too")}}); err != nil {
		t.Fatal(err)
	}
	seen(t, all, "own writes, on Changes")
	quiet(t, others, "own writes, on ChangesByOthers", 800*time.Millisecond) // four SQLite polls
	// Another instance's write, alone, and just before one of its own, at
	// different points of a poll interval.
	for i := range 6 {
		drain(others, 0)
		time.Sleep(time.Duration(i) * 37 * time.Millisecond)
		put(t, b, bundle(fmt.Sprintf("theirs-%d", i)), 0)
		if i%2 == 1 {
			put(t, a, bundle(fmt.Sprintf("mine-%d", i)), 0)
		}
		seen(t, others, fmt.Sprintf("write %d by the other instance", i))
	}
}

// testStamps: a Stamper's stamps name every skill, with the version,
// digest, state and provenance List has for it, and move with each write.
func testStamps(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	st, ok := s.(store.Stamper)
	if !ok {
		t.Skipf("%T has no stamps", s)
	}
	put(t, s, bundle("one"), 0)
	put(t, s, bundle("two", file("a.md", "A")), 0)
	if err := s.SetEnabled(ctx, "two", false); err != nil {
		t.Fatal(err)
	}
	check := func(when string) []store.Stamp {
		t.Helper()
		stamps, err := st.Stamps(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(stamps) != len(recs) {
			t.Fatalf("%s: %d stamps for %d skills", when, len(stamps), len(recs))
		}
		byName := map[string]store.Stamp{}
		for _, x := range stamps {
			byName[x.Name] = x
		}
		for _, r := range recs {
			x := byName[r.Name]
			want := store.Stamp{Name: r.Name, Version: r.Version, Digest: r.Digest, Enabled: r.Enabled, Source: r.Source, Provenance: r.Provenance, UpdatedAt: r.UpdatedAt}
			if !x.UpdatedAt.Equal(want.UpdatedAt) || x.Name != want.Name || x.Version != want.Version || x.Digest != want.Digest ||
				x.Enabled != want.Enabled || x.Source != want.Source || x.Provenance != want.Provenance {
				t.Errorf("%s: stamp %+v, List says %+v", when, x, want)
			}
		}
		return stamps
	}
	before := check("after two puts")
	if _, err := s.PutFile(ctx, "one", "b.md", []byte("B"), false, -1); err != nil {
		t.Fatal(err)
	}
	after := check("after a file put")
	version := func(stamps []store.Stamp, name string) int {
		for _, x := range stamps {
			if x.Name == name {
				return x.Version
			}
		}
		return 0
	}
	if version(before, "one") == version(after, "one") {
		t.Error("a write did not move its skill's stamp")
	}
}

// testWalk: a Walker hands over every enabled skill once, as List has it
// but for the JSON fields, and stops at fn's error.
func testWalk(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	w, ok := s.(store.Walker)
	if !ok {
		t.Skipf("%T does not walk", s)
	}
	put(t, s, bundle("one"), 0)
	put(t, s, bundle("two", file("a.md", "A"), file("b/c.md", "C")), 0)
	put(t, s, bundle("off"), 0)
	if err := s.SetEnabled(ctx, "off", false); err != nil {
		t.Fatal(err)
	}
	recs, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*store.Record{}
	if err := w.Walk(ctx, func(r *store.Record) error {
		if got[r.Name] != nil {
			t.Errorf("%s walked twice", r.Name)
		}
		got[r.Name] = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range recs {
		r := got[want.Name]
		if !want.Enabled {
			if r != nil {
				t.Errorf("the disabled %s was walked", want.Name)
			}
			continue
		}
		if r == nil {
			t.Errorf("%s was not walked", want.Name)
			continue
		}
		want := *want
		want.Frontmatter, want.Tags, want.RequiresTools = nil, nil, nil
		if d := cmp.Diff(&want, r); d != "" {
			t.Errorf("%s walked as (-List +Walk):\n%s", want.Name, d)
		}
	}
	if len(got) != 2 {
		t.Errorf("walked %d skills, want the 2 enabled", len(got))
	}
	stop := errors.New("enough")
	n := 0
	if err := w.Walk(ctx, func(*store.Record) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Walk after fn's error: %v, %d calls", err, n)
	}
}
