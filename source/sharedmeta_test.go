package source

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/skill"
)

// TestScanSharedMeta: with SharedMeta (loadout prompt and check) a skill's
// Meta keeps the category, the required tools and disable-model-invocation
// alone, in one value for the skills alike; the skills, their names,
// descriptions and locations and the diagnostics are those of a TypedMeta
// scan. Without it (the default) every skill has its own whole Meta.
func TestScanSharedMeta(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Tree(dir, 200, 1); err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{
		"hid/SKILL.md":  "---\nname: hid\ndescription: Hidden.\ndisable-model-invocation: true\ncategory: ops\n---\n",
		"req/SKILL.md":  "---\nname: req\ndescription: Needs tools.\nrequires-tools: [bash, jq]\nversion: \"1.2\"\ntags: [x]\n---\n",
		"req2/SKILL.md": "---\nname: req2\ndescription: Needs the same tools.\nrequires-tools: [bash, jq]\nversion: \"3\"\n---\n",
		"bad/SKILL.md":  "---\nname: Bad\ndescription: d\ntags: {a: b}\n---\n",
	})
	typed := ScanFolder(context.Background(), dir, Options{TypedMeta: true})
	// One worker: each worker shares among the skills it reads.
	shared := ScanFolder(context.Background(), dir, Options{SharedMeta: true, Workers: 1})
	if diff := cmp.Diff(typed.Diagnostics, shared.Diagnostics); diff != "" {
		t.Errorf("diagnostics differ:\n%s", diff)
	}
	if diff := cmp.Diff(names(typed), names(shared)); diff != "" {
		t.Fatalf("skills differ:\n%s", diff)
	}
	metas := map[*skill.Frontmatter]int{}
	distinct := map[string]bool{}
	for i, sk := range shared.Skills {
		w := typed.Skills[i]
		if sk.Name != w.Name || sk.Description != w.Description || sk.Location != w.Location || sk.Dir != w.Dir || len(sk.Files) != len(w.Files) {
			t.Errorf("%s: differs from the TypedMeta scan:\n%+v\n%+v", sk.Name, sk, w)
		}
		want := skill.Frontmatter{Category: w.Meta.Category, RequiresTools: w.Meta.RequiresTools, DisableModelInvocation: w.Meta.DisableModelInvocation}
		if diff := cmp.Diff(&want, sk.Meta); diff != "" {
			t.Errorf("%s: Meta keeps more or less than it should:\n%s", sk.Name, diff)
		}
		if sk.Hidden() != w.Hidden() {
			t.Errorf("%s: Hidden %v, want %v", sk.Name, sk.Hidden(), w.Hidden())
		}
		metas[sk.Meta]++
		distinct[fmt.Sprint(want.Category, want.RequiresTools == nil, want.RequiresTools, want.DisableModelInvocation)] = true
	}
	// One value for each set of fields: far fewer than skills.
	if len(metas) != len(distinct) || len(metas) > len(shared.Skills)/2 {
		t.Errorf("%d Meta values for %d skills with %d distinct sets of fields: want one each", len(metas), len(shared.Skills), len(distinct))
	}
	byName := map[string]*skill.Skill{}
	for _, sk := range shared.Skills {
		byName[sk.Name] = sk
	}
	if !byName["hid"].Hidden() || byName["hid"].Meta.Category != "ops" {
		t.Errorf("hid: Hidden %v, category %q", byName["hid"].Hidden(), byName["hid"].Meta.Category)
	}
	if r := byName["req"].Meta.RequiresTools; !cmp.Equal(r, []string{"bash", "jq"}) {
		t.Errorf("req: requires-tools %v", r)
	}

	// The default keeps each skill's own frontmatter, name and all.
	full := ScanFolder(context.Background(), dir, Options{})
	seen := map[*skill.Frontmatter]bool{}
	for _, sk := range full.Skills {
		if seen[sk.Meta] || sk.Meta.Name != sk.Name || sk.Meta.Description != sk.Description {
			t.Fatalf("%s: the default scan shares its Meta, or names it %q", sk.Name, sk.Meta.Name)
		}
		seen[sk.Meta] = true
	}
	if v := byName["req"]; full.Skills[indexOf(full.Skills, "req")].Meta.Version != "1.2" || v.Meta.Version != "" {
		t.Errorf("version: %q by default, %q shared (want 1.2 and none)", full.Skills[indexOf(full.Skills, "req")].Meta.Version, v.Meta.Version)
	}
}

func indexOf(sks []*skill.Skill, name string) int {
	for i, sk := range sks {
		if sk.Name == name {
			return i
		}
	}
	return -1
}

// TestScanSharedMetaRetained bounds what a skill of a SharedMeta scan
// keeps alive (2,000 generated skills). Measured here: 1,240-1,270 bytes
// with TypedMeta, 1,040-1,090 with SharedMeta (the frontmatter values,
// and the text of the fields they no longer keep); the bound is the
// TypedMeta figure less 7%, so a scan that keeps a Frontmatter per skill
// again (208 bytes) fails it.
func TestScanSharedMetaRetained(t *testing.T) {
	dir, n := memTree(t)
	ScanFolder(context.Background(), dir, Options{}) // warm the pools and the page cache
	typed := retainedPerSkill(t, dir, n, Options{TypedMeta: true})
	shared := retainedPerSkill(t, dir, n, Options{SharedMeta: true})
	t.Logf("TypedMeta %.0f, SharedMeta %.0f bytes per skill", typed, shared)
	if shared > 0.93*typed {
		t.Errorf("SharedMeta keeps %.0f bytes per skill, TypedMeta %.0f: want at most 93%% of it", shared, typed)
	}
}
