package skill

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesPassStrictValidation: the shipped examples pass `loadout
// validate` (the open format's own rules) and keep loadout's extension
// fields, written under metadata. They used to fail validate (flow-style
// tags, top-level category and disable-model-invocation) while check
// passed them.
func TestExamplesPassStrictValidation(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{"../examples/skills/*/SKILL.md", "../examples/plugins/*/skills/*/SKILL.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	if len(dirs) < 5 {
		t.Fatalf("found only %d example skills", len(dirs))
	}
	docs := map[string]*Document{}
	for _, dir := range dirs {
		problems, err := Validate(dir)
		if err != nil || len(problems) > 0 {
			t.Errorf("%s: loadout validate fails: %v %q", dir, err, problems)
		}
		data, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		doc, diags, ok := Parse(data, dir, filepath.Base(dir))
		if !ok || len(diags) > 0 {
			t.Errorf("%s: the lenient loader: ok=%v %+v", dir, ok, diags)
		}
		docs[filepath.Base(dir)] = doc
	}
	// The extension fields still take effect from metadata.
	if d := docs["deploy"]; d == nil || d.Version != "1.2.0" || d.Category != "ops" || len(d.Tags) != 3 || len(d.RequiresTools) != 2 || d.RequiresTools[0] != "bash" {
		t.Errorf("deploy's extension fields: %+v", d)
	}
	if d := docs["release-checklist"]; d == nil || !d.DisableModelInvocation {
		t.Errorf("release-checklist must stay hidden from models")
	}
}

// TestExtensionFieldsFromMetadata: metadata carries extension fields; the
// top level wins; a bad boolean is a warning, not silently ignored.
func TestExtensionFieldsFromMetadata(t *testing.T) {
	doc, diags, ok := Parse([]byte("---\nname: x\ndescription: d\ncategory: top\nmetadata:\n  category: meta\n  tags: \"a, b ,,c\"\n  disable-model-invocation: \"maybe\"\n---\n"), "x/SKILL.md", "x")
	if !ok || doc.Category != "top" || len(doc.Tags) != 3 || doc.Tags[1] != "b" || doc.DisableModelInvocation {
		t.Errorf("doc %+v", doc.Frontmatter)
	}
	if len(diags) != 1 || diags[0].Field != "metadata.disable-model-invocation" || diags[0].Code != CodeFieldType {
		t.Errorf("diagnostics %+v", diags)
	}
}
