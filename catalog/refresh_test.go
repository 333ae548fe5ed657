package catalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

func TestRefresh(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"one/SKILL.md": md("one", "One."), "two/SKILL.md": md("two", "Two.")})
	write(t, b, map[string]string{"three/SKILL.md": md("three", "Three.")})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "x", Skills: []SourceSpec{{Root: a}, {Root: b}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) *skill.Skill {
		l, _ := c.Agent("x")
		e, ok := l.Lookup(name)
		if !ok {
			return nil
		}
		return e.Skill
	}
	one, two, three := get("one"), get("two"), get("three")

	// An edit inside one skill reads only that skill again.
	write(t, a, map[string]string{"one/SKILL.md": md("one", "One, edited."), "one/references/new.md": "n"})
	c.Refresh(context.Background(), []string{filepath.Join(a, "one", "SKILL.md"), filepath.Join(a, "one", "references", "new.md")})
	if got := get("one"); got == one || got.Description != "One, edited." || len(got.Files) != 1 {
		t.Errorf("one was not reloaded: %+v", got)
	}
	if get("two") != two || get("three") != three {
		t.Error("untouched skills were read again")
	}

	// A rescan of a root where nothing changed changes nothing: the scan
	// cache gives back the same skills, and the catalog keeps its
	// snapshot (no new generation, no notice to subscribers).
	one = get("one")
	gen := c.Generation()
	c.Refresh(context.Background(), []string{a})
	if c.Generation() != gen {
		t.Errorf("a rescan of an unchanged root made generation %d (was %d)", c.Generation(), gen)
	}
	if get("one") != one || get("two") != two {
		t.Error("a rescan of an unchanged root replaced its skills")
	}

	// A new skill folder rescans that root only, and the skills in it
	// that did not change stay the same.
	write(t, a, map[string]string{"four/SKILL.md": md("four", "Four.")})
	c.Refresh(context.Background(), []string{filepath.Join(a, "four")})
	if get("four") == nil {
		t.Error("added skill not found")
	}
	if get("three") != three {
		t.Error("the other root was rescanned")
	}
	if get("one") != one || get("two") != two {
		t.Error("the skills that did not change were replaced")
	}

	// A removed skill disappears.
	testutil.Must(t, os.RemoveAll(filepath.Join(a, "two")))
	c.Refresh(context.Background(), []string{filepath.Join(a, "two", "SKILL.md"), filepath.Join(a, "two")})
	if get("two") != nil {
		t.Error("removed skill still there")
	}

	// A renamed skill (name changed in SKILL.md) is picked up.
	write(t, b, map[string]string{"three/SKILL.md": md("drei", "Renamed.")})
	c.Refresh(context.Background(), []string{filepath.Join(b, "three", "SKILL.md")})
	if get("three") != nil || get("drei") == nil {
		t.Error("rename not picked up")
	}
	if len(c.Roots()) != 2 {
		t.Errorf("roots: %v", c.Roots())
	}
}
