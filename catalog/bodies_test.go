package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// A server's catalog keeps bodies in a body file (serve does): a load
// serves the body scanned, an edit once refreshed, and a broken edit the
// last good body, read back from the file, inline skills included.
func TestBodiesInFileServeLastGood(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy.\n---\nVersion one of deploy.\n",
		"lint/SKILL.md":   "---\nname: lint\ndescription: Lint.\n---\nLint body one.\n",
	})
	bf, err := skill.NewBodyFile(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir, Inline: []string{"lint"}, Available: []string{"deploy"}}}}},
		Options{Scan: source.Options{KeepBodies: true, Bodies: bf}})
	if err != nil {
		t.Fatal(err)
	}
	load := func(name string) string {
		t.Helper()
		l := agent(t, c, "a")
		r := l.Load(name)
		if r.Status != StatusOK {
			t.Fatalf("load %s: %s %s", name, r.Status, r.Text)
		}
		return r.Text
	}
	if got := load("deploy"); !strings.Contains(got, "Version one of deploy.") {
		t.Errorf("first load: %s", got)
	}
	if bf.Size() == 0 {
		t.Fatal("the bodies are not in the body file")
	}
	p := filepath.Join(dir, "deploy", "SKILL.md")
	os.WriteFile(p, []byte("---\nname: deploy\ndescription: Deploy safely.\n---\nVersion two of deploy.\n"), 0o644)
	c.Refresh(context.Background(), []string{p})
	if got := load("deploy"); !strings.Contains(got, "Version two of deploy.") {
		t.Errorf("after the edit: %s", got)
	}
	os.WriteFile(p, []byte("---\nname: deploy\ndescription: [broken\n---\nVersion three.\n"), 0o644)
	c.Refresh(context.Background(), []string{p})
	if got := load("deploy"); !strings.Contains(got, "Version two of deploy.") || strings.Contains(got, "Version three") {
		t.Errorf("a broken edit does not serve the last good body: %s", got)
	}
	if !hasCode(c.Diagnostics(), skill.CodeKeptLastGood) {
		t.Errorf("no kept-last-good diagnostic: %v", diagCodes(c.Diagnostics()))
	}
	// An inline skill's body, broken in turn, stays in the prompt.
	lp := filepath.Join(dir, "lint", "SKILL.md")
	os.WriteFile(lp, []byte("---\nname: lint\ndescription: [broken\n---\nLint body two.\n"), 0o644)
	c.Refresh(context.Background(), []string{lp})
	e, _ := agent(t, c, "a").Lookup("lint")
	if e == nil || !e.Inline || e.inlineBody() != "Lint body one." {
		t.Errorf("inline body after a broken edit: %+v", e)
	}
}

func hasCode(ds []skill.Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// A catalog read once (loadout check, list, prompt) keeps no scan cache,
// and a Reload of it still sees an edit.
func TestOnceKeepsNoScanCache(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy one.\n---\nBody.\n",
	})
	ctx := context.Background()
	specs := []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}
	once, err := New(ctx, specs, Options{Once: true})
	if err != nil {
		t.Fatal(err)
	}
	if once.opt.Scan.Cache != nil {
		t.Fatal("a catalog read once made a scan cache")
	}
	kept, err := New(ctx, specs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kept.opt.Scan.Cache == nil {
		t.Fatal("a catalog without Once has no scan cache: reloads would parse every SKILL.md again")
	}
	write(t, dir, map[string]string{
		"deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy two, a longer description.\n---\nBody.\n",
	})
	once.Reload(ctx)
	l, _ := once.Agent("a")
	e, ok := l.Lookup("deploy")
	if !ok || e.Skill.Description != "Deploy two, a longer description." {
		t.Fatalf("after Reload: %+v, %v", e, ok)
	}
}
