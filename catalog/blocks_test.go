package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBlocks: a block by name, by digest and by source leaves the skill
// out of the names, the prompt and search of every loadout (the global
// one included), refuses its load and reads with StatusBlocked naming the
// reason and the way out, and removing the block gives back the same
// prompt bytes. A skill of the same name from another source is served.
func TestBlocks(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"deploy/SKILL.md": md("deploy", "Ship the service"), "deploy/run.sh": "echo", "lint/SKILL.md": md("lint", "Lint the code")})
	write(t, b, map[string]string{"fmt/SKILL.md": md("fmt", "Format the code"), "lint/SKILL.md": md("lint", "Lint from b")})
	c := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: a}, {Root: b}}})
	prompt := func(l *Loadout) string { p, _, _ := l.Prompt(PromptOptions{}); return p }
	before := map[string]string{}
	for _, id := range []string{"x", GlobalID} {
		before[id] = prompt(agent(t, c, id))
	}
	x := agent(t, c, "x")
	deployDigest := func() string { e, _ := x.Lookup("deploy"); return e.Skill.ContentDigest() }()

	for _, tc := range []struct {
		name     string
		block    Block
		gone     []string // names blocked
		lintFrom string   // the root lint is served from
	}{
		{"by name", Block{ID: "b1", Skill: "deploy", Reason: "leaks the key"}, []string{"deploy"}, a},
		{"by digest", Block{ID: "b2", Skill: "deploy", Digest: deployDigest, Reason: "this build"}, []string{"deploy"}, a},
		{"by source", Block{ID: "b3", Source: absRoot(a), Reason: "compromised"}, []string{"deploy"}, b},
		{"by name, every source", Block{ID: "b4", Skill: "lint", Reason: "no"}, []string{"lint"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !c.SetBlocks(ctx, []Block{tc.block}) {
				t.Fatal("SetBlocks changed nothing")
			}
			// The loadouts patched for the block equal ones built whole.
			whole := newCat(t, AgentSpec{AgentID: "x", Skills: []SourceSpec{{Root: a}, {Root: b}}})
			whole.SetBlocks(ctx, []Block{tc.block})
			whole.Reload(ctx)
			for _, id := range []string{"x", GlobalID} {
				p, w := agent(t, c, id), agent(t, whole, id)
				if prompt(p) != prompt(w) || !slices.Equal(p.Names(), w.Names()) || len(p.Blocked()) != len(w.Blocked()) || len(p.Entries()) != len(w.Entries()) {
					t.Errorf("%s: the patched loadout differs from one built whole: names %v / %v, blocked %d / %d, entries %d / %d",
						id, p.Names(), w.Names(), len(p.Blocked()), len(w.Blocked()), len(p.Entries()), len(w.Entries()))
				}
			}
			for _, id := range []string{"x", GlobalID} {
				l := agent(t, c, id)
				for _, name := range tc.gone {
					if slices.Contains(l.Names(), name) {
						t.Errorf("%s: %s is still named: %v", id, name, l.Names())
					}
					if strings.Contains(prompt(l), name+"\n") || strings.Contains(prompt(l), "name>"+name+"<") {
						t.Errorf("%s: %s is still in the prompt", id, name)
					}
					for _, h := range l.Search(name, 10) {
						if h.Name == name {
							t.Errorf("%s: search finds %s", id, name)
						}
					}
					res := l.Load(name)
					if res.Status != StatusBlocked || !strings.Contains(res.Text, tc.block.Reason) || !strings.Contains(res.Text, "loadout unblock "+tc.block.ID) {
						t.Errorf("%s: Load(%s) = %s %q", id, name, res.Status, res.Text)
					}
					if res.Skill == nil {
						t.Errorf("%s: a blocked load names no skill (receipts need its digest)", id)
					}
					fr := l.ReadFile(name, "SKILL.md", ReadOptions{})
					if fr.Status != StatusBlocked || fr.Code != CodeBlocked || fr.Content != "" || !strings.Contains(fr.Message, tc.block.Reason) {
						t.Errorf("%s: ReadFile(%s) = %+v", id, name, fr)
					}
					if fr, c := l.OpenFile(name, "SKILL.md", 0); fr.Status != StatusBlocked || c != nil {
						t.Errorf("%s: OpenFile(%s) = %s", id, name, fr.Status)
					}
					if bs, ok := l.BlockedName(name); !ok || bs.Block.ID != tc.block.ID {
						t.Errorf("%s: BlockedName(%s) = %+v, %v", id, name, bs, ok)
					}
				}
				if tc.lintFrom != "" {
					if e, ok := l.Lookup("lint"); !ok || !strings.HasPrefix(e.Skill.Dir, tc.lintFrom) {
						t.Errorf("%s: lint should be served from %s", id, tc.lintFrom)
					}
					if _, ok := l.BlockedName("lint"); ok {
						t.Errorf("%s: lint is served yet reported blocked", id)
					}
				}
				if res := l.Load("fmt"); res.Status != StatusOK {
					t.Errorf("%s: an unblocked skill: %s", id, res.Status)
				}
			}
			if c.SetBlocks(ctx, []Block{tc.block}) {
				t.Error("setting the same blocks again changed the catalog")
			}
			c.SetBlocks(ctx, nil)
			for _, id := range []string{"x", GlobalID} {
				if got := prompt(agent(t, c, id)); got != before[id] {
					t.Errorf("%s: after the unblock the prompt differs:\n%s\nwant\n%s", id, got, before[id])
				}
			}
		})
	}

	// A block that matches nothing (another digest, a skill yet to come)
	// changes no listing; the skill is blocked once it appears.
	c.SetBlocks(ctx, []Block{{ID: "b5", Skill: "deploy", Digest: "sha256:" + strings.Repeat("0", 64), Reason: "other"}, {ID: "b6", Skill: "later", Reason: "not yet"}})
	if got := prompt(agent(t, c, "x")); got != before["x"] {
		t.Errorf("blocks matching nothing changed the prompt")
	}
	write(t, a, map[string]string{"later/SKILL.md": md("later", "Comes later")})
	c.Reload(ctx)
	if res := agent(t, c, "x").Load("later"); res.Status != StatusBlocked {
		t.Errorf("a skill blocked before it appeared: %s", res.Status)
	}
}

// BenchmarkSetBlocks10k: a block (and its removal) rebuilds every loadout
// of a catalog of 10,000 folder skills and three agents from the sources
// as last read: what each instance does on a block change before it
// refuses the skill. One op is a block and an unblock.
func BenchmarkSetBlocks10k(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 10000 {
		n := fmt.Sprintf("skill-%05d", i)
		files[n+"/SKILL.md"] = md(n, "Helps with a task of kind "+n+".")
	}
	write(b, dir, files)
	ctx := context.Background()
	c, err := New(ctx, []AgentSpec{
		{AgentID: "a", Skills: []SourceSpec{{Root: dir}}},
		{AgentID: "b", Skills: []SourceSpec{{Root: dir, Available: []string{"skill-0*"}}}},
		{AgentID: "c", Skills: []SourceSpec{{Root: dir, Available: []string{"skill-1*"}}}},
	}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	block := []Block{{ID: "b1", Skill: "skill-00042", Reason: "bench"}}
	b.ResetTimer()
	for range b.N {
		c.SetBlocks(ctx, block)
		c.SetBlocks(ctx, nil)
	}
}
