package catalog

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// awsKey is an access key id no placeholder rule accepts.
const awsKey = "AKIAZ7QX3M5KJ2W4PN8R"

func codes(ds []skill.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	slices.Sort(out)
	return out
}

// TestGateFolder: with Gate naming "folder", a folder skill with a
// finding the policy refuses (a secret, a zero-width character) is not
// served and is reported (safety-gated, then the finding); a clean one
// is. An edit that removes the finding serves it again, and an edit that
// brings one removes it. Without the gate, or with it naming only
// "plugin", the same skill is served.
func TestGateFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"clean/SKILL.md":        md("clean", "Use when you need the clean thing."),
		"keyed/SKILL.md":        md("keyed", "Use when you need the keyed thing."),
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	spec := AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}
	for _, kinds := range [][]string{nil, {"plugin"}} {
		c, err := New(context.Background(), []AgentSpec{spec}, Options{Gate: &Gate{Kinds: kinds}})
		if err != nil {
			t.Fatal(err)
		}
		if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"clean", "keyed"}) {
			t.Errorf("gate %v: served %v, want both skills", kinds, got)
		}
	}
	c, err := New(context.Background(), []AgentSpec{spec}, Options{Gate: &Gate{Kinds: []string{"folder"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"clean"}) {
		t.Errorf("gated: served %v, want only clean", got)
	}
	if got := codes(c.Diagnostics()); !slices.Equal(got, []string{CodeSafetyGated, safety.CodeSecretAWS}) {
		t.Errorf("gated: diagnostics %v, want %s and %s", c.Diagnostics(), CodeSafetyGated, safety.CodeSecretAWS)
	}
	for _, d := range c.Diagnostics() {
		if d.Severity != skill.Error || d.Skill != "keyed" || strings.Contains(d.Message, awsKey) {
			t.Errorf("gated diagnostic %v: want an error about keyed that does not print the key", d)
		}
	}
	// Fixed: served again after the edit.
	ship := filepath.Join(dir, "keyed", "scripts", "ship.sh")
	testutil.Write(t, ship, "#!/bin/sh\naws s3 ls\n")
	c.Refresh(context.Background(), []string{ship})
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"clean", "keyed"}) {
		t.Errorf("after the fix: served %v, want both", got)
	}
	if ds := c.Diagnostics(); len(ds) != 0 {
		t.Errorf("after the fix: diagnostics %v, want none", ds)
	}
	// An edit that hides a zero-width character in a served skill gates it.
	cleanMD := filepath.Join(dir, "clean", "SKILL.md")
	testutil.Write(t, cleanMD, md("clean", "Use when you need the clean thing.")+"Run rm\u200b -rf on it.\n")
	c.Refresh(context.Background(), []string{cleanMD})
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"keyed"}) {
		t.Errorf("after the zero-width edit: served %v, want only keyed", got)
	}
	if got := codes(c.Diagnostics()); !slices.Equal(got, []string{CodeSafetyGated, safety.CodeZeroWidth}) {
		t.Errorf("after the zero-width edit: diagnostics %v", c.Diagnostics())
	}
	// An allow entry accepts it.
	p := &safety.Policy{Allow: []safety.Allow{{Skill: "clean", Code: safety.CodeZeroWidth, Reason: "a test"}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Reconfigure(context.Background(), []AgentSpec{spec}, Options{Gate: &Gate{Policy: p, Kinds: []string{"folder"}}}); err != nil {
		t.Fatal(err)
	}
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"clean", "keyed"}) {
		t.Errorf("with an allow entry: served %v, want both", got)
	}
}

// TestGatePlugin: a plugin's skill with a refused finding is not served
// when the gate names "plugin"; a folder skill with the same finding is,
// as only "plugin" is named.
func TestGatePlugin(t *testing.T) {
	dir, pdir := t.TempDir(), t.TempDir()
	write(t, dir, map[string]string{"local/SKILL.md": md("local", "Use when local.") + "key " + awsKey + "\n"})
	write(t, pdir, map[string]string{
		"pkeyed/SKILL.md": md("pkeyed", "Use when pkeyed.") + "key " + awsKey + "\n",
		"pclean/SKILL.md": md("pclean", "Use when pclean."),
	})
	plug := ProviderFunc(func(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
		res := source.ScanFolder(ctx, pdir, source.Options{})
		return res.Skills, res.Diagnostics
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}, {Plugin: "p"}}}},
		Options{Plugins: map[string]Provider{"p": plug}, PluginOrder: []string{"p"}, Gate: &Gate{Kinds: []string{"plugin"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"local", "pclean"}) {
		t.Errorf("served %v, want local and pclean", got)
	}
	if got := codes(c.Diagnostics()); !slices.Equal(got, []string{CodeSafetyGated, safety.CodeSecretAWS}) {
		t.Errorf("diagnostics %v", c.Diagnostics())
	}
}
