package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// storeServer is a service over a real SQLite store holding alpha, beta
// and gamma (agent "coder" selects them all) and the MCP server of
// "coder", with coalesce set to wait (the default when 0).
func storeServer(t *testing.T, wait time.Duration) (*service.Service, *server) {
	t.Helper()
	root := t.TempDir()
	writeSkill(t, root, "alpha", "Fill in PDF forms and check their fields.", "", map[string]string{"references/guide.md": "# Guide\n\nRead this first.\n"})
	writeSkill(t, root, "beta", "Write release notes from commit logs.", "", nil)
	writeSkill(t, root, "gamma", "Review Go code for concurrency bugs.", "", nil)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		b, err := portable.ImportDir(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, b, store.PutOptions{IfVersion: -1}); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: "coder", Skills: []catalog.SourceSpec{{Store: true}}}},
		catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Logger: quiet, Store: st})
	t.Cleanup(func() { svc.Close() })
	if wait > 0 {
		was := coalesce
		coalesce = wait
		t.Cleanup(func() { coalesce = was })
	}
	return svc, newServer(ctx, svc, Options{Agent: "coder", Logger: quiet})
}

var admin = service.Principal{Open: true}

func putFile(t *testing.T, svc *service.Service, name, path, data string) {
	t.Helper()
	if _, err := svc.PutFile(context.Background(), admin, name, path, []byte(data), false, -1); err != nil {
		t.Fatalf("PutFile %s/%s: %v", name, path, err)
	}
}

func entryWith(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\n" + body + "\n"
}

// notes counts the list_changed notifications a session gets.
type notes struct{ tools, resources, prompts atomic.Int64 }

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { n.tools.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { n.resources.Add(1) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { n.prompts.Add(1) },
	}
}

// session opens a session on s and returns what its initialize answered.
func session(t *testing.T, s *server, copt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(service.WithPrincipal(context.Background(), admin), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return clientOver(t, ct, copt)
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestInstructionsKeptWhenListingSame: a write that leaves every listed
// name and description as it was (a reference file, a body edit) renders
// no instructions, and the sessions are told the resources changed but
// not the tools or prompts; a description edit (the "no" case) renders
// them again, with the new description in what the next session gets,
// and tells the sessions the tools and prompts changed.
func TestInstructionsKeptWhenListingSame(t *testing.T) {
	svc, s := storeServer(t, 10*time.Millisecond)
	var n notes
	first := session(t, s, n.options())
	before := first.InitializeResult().Instructions
	if !strings.Contains(before, "Fill in PDF forms") {
		t.Fatalf("the instructions lack alpha's description:\n%s", before)
	}
	if r := s.renders.Load(); r != 1 {
		t.Fatalf("%d renders after start and one session, want 1", r)
	}

	putFile(t, svc, "alpha", "references/guide.md", "# Guide\n\nRead this second.\n")
	waitFor(t, "resources/list_changed after a reference file's write", func() bool { return n.resources.Load() == 1 })
	putFile(t, svc, "alpha", "SKILL.md", entryWith("alpha", "Fill in PDF forms and check their fields.", "Another body."))
	waitFor(t, "resources/list_changed after a body edit", func() bool { return n.resources.Load() == 2 })
	if got := session(t, s, nil).InitializeResult().Instructions; got != before {
		t.Errorf("the instructions changed after writes that keep the listing:\nbefore %s\nafter  %s", before, got)
	}
	if r := s.renders.Load(); r != 1 {
		t.Errorf("%d renders after a reference file write, a body edit and a new session, want still 1", r)
	}
	if tl, pl := n.tools.Load(), n.prompts.Load(); tl != 0 || pl != 0 {
		t.Errorf("tools/list_changed %d, prompts/list_changed %d after writes that keep the listing, want 0 and 0", tl, pl)
	}

	// No: a new description is a new listing.
	putFile(t, svc, "alpha", "SKILL.md", entryWith("alpha", "Merge PDF files into one document.", "Another body."))
	// Each list_changed is a notification of its own, sent one after
	// another: wait for all three, then a moment for any extra one.
	waitFor(t, "tools, prompts and resources list_changed after a description edit", func() bool {
		return n.tools.Load() >= 1 && n.prompts.Load() >= 1 && n.resources.Load() >= 3
	})
	time.Sleep(50 * time.Millisecond)
	got := session(t, s, nil).InitializeResult().Instructions
	if !strings.Contains(got, "Merge PDF files into one document.") || strings.Contains(got, "Fill in PDF forms") {
		t.Errorf("the instructions after a description edit lack the new description or keep the old one:\n%s", got)
	}
	if r := s.renders.Load(); r != 2 {
		t.Errorf("%d renders after a description edit and a new session, want 2", r)
	}
	if tl, pl, rl := n.tools.Load(), n.prompts.Load(), n.resources.Load(); tl != 1 || pl != 1 || rl != 3 {
		t.Errorf("after the description edit: tools/list_changed %d, prompts/list_changed %d, resources/list_changed %d; want 1, 1 and 3", tl, pl, rl)
	}
}

// TestInstructionsNewSkillRenders: adding a skill (a new name) is a new
// listing too (the "no" case for names).
func TestInstructionsNewSkillRenders(t *testing.T) {
	svc, s := storeServer(t, 10*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "delta")
	writeFile(t, filepath.Join(dir, "SKILL.md"), []byte(entryWith("delta", "Plan database migrations.", "Steps.")))
	b, err := portable.ImportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Put(context.Background(), admin, b, 0, "test", "test"); err != nil {
		t.Fatal(err)
	}
	if got := session(t, s, nil).InitializeResult().Instructions; !strings.Contains(got, "Plan database migrations.") {
		t.Errorf("the instructions lack the new skill:\n%s", got)
	}
	if r := s.renders.Load(); r != 2 {
		t.Errorf("%d renders after a new skill and a session, want 2", r)
	}
}

// TestBurstCoalesced: writes in quick succession cost follow one round of
// updates (and list_changed notifications), not one each; writes further
// apart than its wait (the "no" case) get one each.
func TestBurstCoalesced(t *testing.T) {
	svc, s := storeServer(t, 500*time.Millisecond)
	var n notes
	session(t, s, n.options())
	const burst = 20
	for i := range burst {
		putFile(t, svc, "beta", "references/notes.md", fmt.Sprintf("note %d\n", i))
	}
	waitFor(t, "the burst's resources/list_changed", func() bool { return n.resources.Load() >= 1 })
	time.Sleep(700 * time.Millisecond) // anything left of the burst lands
	// The burst takes well under the wait; a slow machine may split it.
	if u, rl := s.updates.Load(), n.resources.Load(); u < 1 || u > 2 || rl != u {
		t.Errorf("%d writes in a burst: %d updates, %d resources/list_changed; want 1 or 2 of each", burst, u, rl)
	}

	// No: writes further apart than the wait are not merged.
	svc2, s2 := storeServer(t, 20*time.Millisecond)
	var n2 notes
	session(t, s2, n2.options())
	for i := range 3 {
		putFile(t, svc2, "beta", "references/notes.md", fmt.Sprintf("apart %d\n", i))
		waitFor(t, "resources/list_changed", func() bool { return n2.resources.Load() == int64(i+1) })
	}
	if u := s2.updates.Load(); u != 3 {
		t.Errorf("3 writes apart: %d updates, want 3", u)
	}
}

// TestOtherAgentsChangesIgnored: a change to skills an agent does not
// select sends its sessions nothing; a change to one of its own (the "no"
// case) does.
func TestOtherAgentsChangesIgnored(t *testing.T) {
	was := coalesce
	coalesce = 10 * time.Millisecond
	t.Cleanup(func() { coalesce = was })
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServer(ctx, f.svc, Options{Agent: "other", Logger: quiet})
	var n notes
	session(t, s, n.options())
	writeSkill(t, f.rootA, "epsilon", "Only the coder agent has this.", "", nil)
	f.svc.Reload(ctx, "test")
	time.Sleep(200 * time.Millisecond) // well past the wait
	if u, rl := s.updates.Load(), n.resources.Load(); u != 0 || rl != 0 {
		t.Errorf("a change to another agent's skills: %d updates, %d resources/list_changed; want 0 and 0", u, rl)
	}
	writeSkill(t, f.rootB, "zeta", "The other agent's second skill.", "", nil)
	f.svc.Reload(ctx, "test")
	// Both notifications come, in either order.
	waitFor(t, "tools and resources list_changed after a change to the agent's own skills", func() bool {
		return n.tools.Load() >= 1 && n.resources.Load() >= 1
	})
	time.Sleep(100 * time.Millisecond) // and no more
	if rl := n.resources.Load(); rl != 1 {
		t.Errorf("a new skill of the agent: %d resources/list_changed, want 1", rl)
	}
	if tl := n.tools.Load(); tl != 1 {
		t.Errorf("a new skill of the agent: %d tools/list_changed, want 1", tl)
	}
}
