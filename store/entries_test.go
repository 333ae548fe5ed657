package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

func openSQLite(t *testing.T) *sqlstore.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func putBody(t *testing.T, st store.Store, name, body string) {
	t.Helper()
	b := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n" + body)}
	if _, err := st.Put(context.Background(), b, store.PutOptions{IfVersion: -1}); err != nil {
		t.Fatal(err)
	}
}

// The catalog skills of a store hold no bodies: 300 skills of 16 KB bodies
// (4.8 MB of bodies) cost the live heap well under one body each, and a
// load reads the body of the skill's own version.
func TestProviderHoldsNoBodies(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	const n, size = 300, 16 << 10
	for i := range n {
		putBody(t, st, fmt.Sprintf("s%03d", i), strings.Repeat(fmt.Sprintf("Line %d of the body.\n", i), size/20))
	}
	p := store.NewProvider(st)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	skills, diags := p.Skills(ctx)
	after := heap()
	if len(skills) != n || len(diags) != 0 {
		t.Fatalf("Skills: %d skills, %v", len(skills), diags)
	}
	// Bound: 4 KB per skill for its frontmatter, manifest and bookkeeping,
	// a quarter of one body.
	if grew := int64(after) - int64(before); grew > n*4<<10 {
		t.Errorf("the skills of %d stored skills hold %d bytes (%d per skill); bodies of %d bytes each are held", n, grew, grew/n, size)
	}
	for _, sk := range skills {
		if sk.HasBody() {
			t.Fatalf("%s holds its body", sk.Name)
		}
	}
	runtime.KeepAlive(skills)

	// A load serves the version the catalog holds, even after an update.
	old := skills[7]
	putBody(t, st, old.Name, "The second version.\n")
	body, err := old.Body()
	if err != nil || !strings.HasPrefix(body, "Line 7 of the body.") {
		t.Errorf("body of version 1 after an update: %.40q, %v", body, err)
	}
	now, _, err := p.Skill(ctx, old.Name)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := now.Body(); err != nil || body != "The second version.\n" {
		t.Errorf("body of version 2: %q, %v", body, err)
	}
}

// A skill's SKILL.md is read from the store once, then from the Provider's
// cache; with the cache off every load reads the store.
func TestProviderEntryCache(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	putBody(t, st, "deploy", "Deploy safely.\n")
	broken := errors.New("the database is gone")

	for _, tc := range []struct {
		bytes  int64
		cached bool
	}{{0, true}, {-1, false}} {
		st.SetFault(nil)
		p := store.NewProvider(st)
		p.EntryCacheBytes = tc.bytes
		skills, _ := p.Skills(ctx)
		if len(skills) != 1 {
			t.Fatalf("Skills: %v", skills)
		}
		if body, err := skills[0].Body(); err != nil || body != "Deploy safely.\n" {
			t.Fatalf("first load: %q, %v", body, err)
		}
		st.SetFault(func(string) error { return broken })
		body, err := skills[0].Body()
		if tc.cached && (err != nil || body != "Deploy safely.\n") {
			t.Errorf("EntryCacheBytes %d: the second load read the store: %q, %v", tc.bytes, body, err)
		}
		if !tc.cached && !errors.Is(err, broken) {
			t.Errorf("EntryCacheBytes %d: the second load did not read the store: %q, %v", tc.bytes, body, err)
		}
		if n, size := p.EntryCache(); tc.cached && (n != 1 || size != int64(len("---\nname: deploy\ndescription: The deploy skill.\n---\nDeploy safely.\n"))) || !tc.cached && n != 0 {
			t.Errorf("EntryCacheBytes %d: cache holds %d texts, %d bytes", tc.bytes, n, size)
		}
	}
	st.SetFault(nil)

	// Deleted and created again: version 1 again, other bytes.
	p := store.NewProvider(st)
	first, _ := p.Skills(ctx)
	first[0].Body()
	if err := st.Delete(ctx, "deploy", -1); err != nil {
		t.Fatal(err)
	}
	putBody(t, st, "deploy", "Deploy again.\n")
	again, _ := p.Skills(ctx)
	if again[0].Origin.Version != 1 {
		t.Fatalf("version %d, want 1", again[0].Origin.Version)
	}
	if body, err := again[0].Body(); err != nil || body != "Deploy again.\n" {
		t.Errorf("the new skill of an old name and version: %q, %v", body, err)
	}
}

// noList is a store whose List must not be called.
type noList struct {
	*sqlstore.Store
	t *testing.T
}

func (n noList) List(context.Context) ([]*store.Record, error) {
	n.t.Error("Provider.Skills read every record at once (List) from a store that walks")
	return nil, errors.New("List called")
}

// A Provider reads a store that walks one record at a time, and returns
// the enabled skills sorted by name, whatever order the walk took.
func TestProviderWalks(t *testing.T) {
	st := openSQLite(t)
	for _, n := range []string{"b", "c", "a"} {
		putBody(t, st, n, "Body.\n")
	}
	if err := st.SetEnabled(context.Background(), "c", false); err != nil {
		t.Fatal(err)
	}
	p := store.NewProvider(noList{st, t})
	skills, diags := p.Skills(context.Background())
	var names []string
	for _, sk := range skills {
		names = append(names, sk.Name)
	}
	if strings.Join(names, " ") != "a b" || len(diags) != 0 {
		t.Errorf("skills %v, diagnostics %v", names, diags)
	}
}
