package webui

import (
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
)

// TestRemoteSourceText: a remote skill's list and page say where it came
// from (URL, ref, revision, folder), and its agent's source holds it.
func TestRemoteSourceText(t *testing.T) {
	o := skill.Origin{Kind: "git", Root: "https://git.example.com/team/skills.git", Ref: "main", Revision: "3f2a9c0d", Provenance: "skills/pdf"}
	if got, want := sourceText(o), "git https://git.example.com/team/skills.git@main 3f2a9c0d skills/pdf"; got != want {
		t.Errorf("sourceText = %q, want %q", got, want)
	}
	sk := &skill.Skill{Name: "pdf", Origin: &o}
	if !holds(catalog.SourceSpec{Git: o.Root, Ref: "main"}, sk) {
		t.Error("the git source does not hold its skill")
	}
	if holds(catalog.SourceSpec{Git: o.Root, Ref: "release"}, sk) || holds(catalog.SourceSpec{Index: o.Root}, sk) || holds(catalog.SourceSpec{Root: "/x"}, sk) {
		t.Error("another source holds the git skill")
	}
}
