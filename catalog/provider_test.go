package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/skill"
)

// virtual builds an in-memory skill the way the store and plugins do.
func virtual(t *testing.T, loc string, origin skill.Origin, content string, files map[string]string) *skill.Skill {
	t.Helper()
	b := &skill.Bundle{Content: []byte(content)}
	for p, d := range files {
		b.Files = append(b.Files, skill.BundleFile{Path: p, Data: []byte(d)})
	}
	doc, _, err := b.Check(skill.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := skill.Parse(b.Content, "", "")
	sk := skill.NewVirtual(doc, loc, b.Manifest(), &origin, b.Reader())
	if body != nil {
		sk.KeepBody(body.Body)
	}
	return sk
}

func TestStoreAndPluginSources(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"deploy/SKILL.md": md("deploy", "Folder deploy."), "lint/SKILL.md": md("lint", "Lint.")})
	stored := []*skill.Skill{
		virtual(t, "store://deploy", skill.Origin{Kind: "store", Version: 3, Provenance: "import: deploy.zip"}, md("deploy", "Stored deploy."), nil),
		virtual(t, "store://notes", skill.Origin{Kind: "store", Version: 1}, md("notes", "Stored notes."), map[string]string{"templates/n.md": "# N"}),
	}
	plug := []*skill.Skill{
		virtual(t, "plugin://acme/notes", skill.Origin{Kind: "plugin", Plugin: "acme", Trust: "saas_locked"}, md("notes", "Plugin notes."), nil),
		virtual(t, "plugin://acme/audit", skill.Origin{Kind: "plugin", Plugin: "acme", Trust: "saas_locked"}, md("audit", "Audit."), nil),
	}
	opts := Options{
		Store:       ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return stored, nil }),
		Plugins:     map[string]Provider{"acme": ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return plug, nil })},
		PluginOrder: []string{"acme"},
	}
	c, err := New(context.Background(), []AgentSpec{
		{AgentID: "mixed", Skills: []SourceSpec{{Plugin: "acme"}, {Store: true, Available: []string{"notes", "deploy"}}, {Root: dir}}},
		{AgentID: "missing", Skills: []SourceSpec{{Plugin: "nope"}}},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	l := agent(t, c, "mixed")
	want := []row{{"audit", 0, true, false}, {"notes", 0, true, false}, {"deploy", 1, true, false}, {"notes", 1, true, false}, {"deploy", 2, true, false}, {"lint", 2, true, false}}
	if diff := cmp.Diff(want, rows(l)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// Config order decides activation: the plugin's notes, the store's deploy.
	if e, _ := l.Lookup("notes"); e.Skill.Origin.Kind != "plugin" {
		t.Errorf("notes from %+v", e.Skill.Origin)
	}
	if e, _ := l.Lookup("deploy"); e.Skill.Origin.Kind != "store" {
		t.Errorf("deploy from %+v", e.Skill.Origin)
	}
	shadowed := 0
	for _, d := range l.agentDiags {
		if d.Code == CodeSameNameSources {
			shadowed++
			if d.Winner == "" || d.Loser == "" || d.Winner == d.Loser {
				t.Errorf("shadow without winner and loser: %+v", d)
			}
		}
	}
	if shadowed != 2 {
		t.Errorf("want 2 shadowed skills reported, got %d: %v", shadowed, l.agentDiags)
	}
	// Stored skills are virtual: the envelope says to use read_skill_file,
	// and files come from the provider's reader.
	r := agent(t, c, "mixed").Load("deploy")
	if r.Status != StatusOK || !strings.Contains(r.Text, "read_skill_file") || !strings.Contains(r.Text, "Do the deploy thing.") {
		t.Errorf("store load:\n%s", r.Text)
	}
	f := l.ReadFile("notes", "SKILL.md", ReadOptions{})
	if f.Status != StatusOK || !strings.Contains(f.Content, "Plugin notes.") {
		t.Errorf("plugin read: %+v", f)
	}
	// The global catalog: folders, then the store, then plugins.
	g := c.Global()
	for name, kind := range map[string]string{"deploy": "folder", "notes": "store", "audit": "plugin", "lint": "folder"} {
		if e, ok := g.Lookup(name); !ok || e.Skill.Origin.Kind != kind {
			t.Errorf("global %s: want %s, got %+v", name, kind, e)
		}
	}
	// A missing plugin is a diagnostic, not a failure.
	m := agent(t, c, "missing")
	if len(m.Entries()) != 0 || !strings.Contains(strings.Join(diagCodes(m.Diagnostics()), " "), CodeNoPlugin) {
		t.Errorf("missing plugin: %v", m.Diagnostics())
	}
}

func TestStoreSourceWithoutStore(t *testing.T) {
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := agent(t, c, "a").Diagnostics()
	if len(d) != 1 || d[0].Code != CodeNoStore || d[0].Severity != skill.Error {
		t.Errorf("diagnostics: %v", d)
	}
}
