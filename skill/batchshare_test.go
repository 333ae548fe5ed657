package skill

import (
	"strings"
	"testing"
	"unsafe"
)

// TestBatchSharedMeta: with SharedMeta, a skill's Meta keeps the
// category, the required tools and disable-model-invocation alone, the
// skill its own name and description, and skills alike share one Meta
// that later input does not change; a skill that differs in one of those
// fields gets its own.
func TestBatchSharedMeta(t *testing.T) {
	doc, _, ok := ParseHeader([]byte(typicalSkillMD), "SKILL.md", "auth-build-13318")
	if !ok {
		t.Fatal("parse failed")
	}
	doc.Category, doc.RequiresTools = "backend", []string{"bash"}
	origin := Origin{Kind: "folder"}
	b := NewBatch()
	b.SharedMeta = true
	one := b.New(doc, "/r/auth-build-13318", "SKILL.md", nil, &origin, nil)
	doc.Name, doc.Description = "other", "Another."
	two := b.New(doc, "/r/other", "SKILL.md", nil, &origin, nil)
	doc.RequiresTools = []string{"jq"}
	three := b.New(doc, "/r/other", "SKILL.md", nil, &origin, nil)
	doc.RequiresTools[0] = "changed"
	if one.Meta != two.Meta || three.Meta == one.Meta {
		t.Fatalf("shared: one and two %v (want true), one and three %v (want false)", one.Meta == two.Meta, three.Meta == one.Meta)
	}
	want := Frontmatter{Category: "backend", RequiresTools: []string{"bash"}}
	if one.Meta.Category != want.Category || strings.Join(one.Meta.RequiresTools, ",") != "bash" || one.Meta.Name != "" || one.Meta.Description != "" ||
		one.Meta.Version != "" || one.Meta.Tags != nil || one.Meta.AllowedTools != nil || one.Meta.Raw != nil || one.Meta.License != "" {
		t.Errorf("shared Meta %+v, want %+v", *one.Meta, want)
	}
	if strings.Join(three.Meta.RequiresTools, ",") != "jq" {
		t.Errorf("three's required tools %v, want jq (copied, not the input's)", three.Meta.RequiresTools)
	}
	if one.Name != "auth-build-13318" || two.Name != "other" || two.Description != "Another." || one.Description == two.Description {
		t.Errorf("names %q %q, descriptions %q %q", one.Name, two.Name, one.Description, two.Description)
	}
}

// TestBatchIntern: Intern gives one copy of a text it was given before,
// keeps a new one as it is, and leaves a long one alone.
func TestBatchIntern(t *testing.T) {
	b := NewBatch()
	a := strings.Repeat("field \"compatibility\" must be a string (line 10)", 1)
	a2 := strings.Clone(a)
	if got := b.Intern(a); unsafe.StringData(got) != unsafe.StringData(a) {
		t.Error("a new text was copied")
	}
	if got := b.Intern(a2); got != a || unsafe.StringData(got) != unsafe.StringData(a) {
		t.Error("an equal text was not given the first one's copy")
	}
	long := strings.Repeat("x", batchInternLen+1)
	long2 := strings.Clone(long)
	b.Intern(long)
	if got := b.Intern(long2); unsafe.StringData(got) != unsafe.StringData(long2) {
		t.Error("a text past batchInternLen was interned")
	}
	at := strings.Repeat("y", batchInternLen)
	b.Intern(at)
	if got := b.Intern(strings.Clone(at)); unsafe.StringData(got) != unsafe.StringData(at) {
		t.Error("a text of batchInternLen bytes was not interned")
	}
	if b.Intern("") != "" {
		t.Error("empty")
	}
}
