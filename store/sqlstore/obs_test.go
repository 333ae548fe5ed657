package sqlstore_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

type storeMarks struct {
	mu    sync.Mutex
	names []string
	errs  int
}

func (m *storeMarks) Start(ctx context.Context, kind obs.Kind, name string, _ []obs.Attr) (context.Context, func(error)) {
	if kind != obs.KindStore {
		return ctx, func(error) {}
	}
	m.mu.Lock()
	m.names = append(m.names, name)
	m.mu.Unlock()
	return ctx, func(err error) {
		if err != nil {
			m.mu.Lock()
			m.errs++
			m.mu.Unlock()
		}
	}
}

// TestStoreMarks: each transaction and single statement is one operation
// named by the store method that ran it, whatever helper began it.
func TestStoreMarks(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &storeMarks{}
	obs.Set(m)
	defer obs.Set(nil)
	ctx := context.Background()
	b := &skill.Bundle{Content: []byte("---\nname: marked\ndescription: Marks store operations.\n---\nBody.\n")}
	if _, err := st.Put(ctx, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "marked"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "no-such-skill"); err == nil {
		t.Fatal("Get of a missing skill succeeded")
	}
	if _, err := st.List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadFile(ctx, "marked", 0, "SKILL.md"); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, want := range []string{"Put", "Get", "List", "ReadFile"} {
		if !slices.Contains(m.names, want) {
			t.Errorf("no store operation %q in %q", want, m.names)
		}
	}
	for _, n := range m.names {
		if n == "store" || n == "read" || n == "write" || n == "writeTx" {
			t.Errorf("an operation named %q: want the store method", n)
		}
	}
	if m.errs != 1 {
		t.Errorf("%d operations ended with an error, want 1 (the missing skill)", m.errs)
	}
}
