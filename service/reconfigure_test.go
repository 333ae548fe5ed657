package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
)

// Reconfigure swaps in new agents and tells subscribers (MCP list_changed);
// bad specs change nothing and tell no one.
func TestReconfigureAddsAgentsAndNotifies(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "alpha"), 0o755))
	testutil.Write(t, filepath.Join(dir, "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A.\n---\nA.\n")
	ctx := context.Background()
	one := catalog.AgentSpec{AgentID: "one", Skills: []catalog.SourceSpec{{Root: dir}}}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{one}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{})
	t.Cleanup(func() { s.Close() })
	ch, stop := s.Subscribe()
	defer stop()

	if err := s.Reconfigure(ctx, "test", []catalog.AgentSpec{one, one}, catalog.Options{}); err == nil {
		t.Fatal("duplicate agent ids accepted")
	}
	select {
	case <-ch:
		t.Error("subscribers told of a refused reconfigure")
	default:
	}
	if ids := s.Catalog().AgentIDs(); len(ids) != 1 {
		t.Errorf("agents after a refused reconfigure: %v", ids)
	}

	two := catalog.AgentSpec{AgentID: "two", Skills: []catalog.SourceSpec{{Root: dir}}}
	if err := s.Reconfigure(ctx, "test", []catalog.AgentSpec{one, two}, catalog.Options{}); err != nil {
		t.Fatal(err)
	}
	l, ok := s.Catalog().Agent("two")
	if !ok || len(l.Names()) != 1 {
		t.Fatalf("agent two after reconfigure: %v", ok)
	}
	select {
	case <-ch:
	default:
		t.Error("subscribers not told of the new agent")
	}
}
