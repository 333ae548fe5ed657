package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The edge-case catalog every client runs against: the shapes real skills
// have that broke official verifying clients. Skill folder names
// equal their frontmatter names, so every skill in valid is valid under the
// Agent Skills specification and the MCP Skills extension; every skill in
// invalid breaks the specification in one way and must be left out of
// skills/list (a verifying client refuses the whole listing otherwise).
var (
	valid   = []string{"plain", "typed-frontmatter", "empty-file", "odd-names", "outer", "linked-skill"}
	invalid = []string{"uppercase-name", "long-description", "long-compatibility", "nested-metadata", "colon-value", "no-name"}
	// emptyDir is a folder with nothing in it, inside a valid skill:
	// resources/directory/read must answer it with an empty list.
	emptyDir = "skill://empty-file/templates"
	// emptyFile is a zero-byte file: resources/read must carry text "" (or
	// an empty blob), not neither.
	emptyFile = "skill://empty-file/scripts/__init__.py"
	// notInstallable is the valid skill the well-known index leaves out
	// (with a warning in the index and the log): installers fetch a
	// multi-file skill as a ustar archive, which cannot hold its unicode
	// file name.
	notInstallable = "odd-names"
)

// writeCatalog writes the edge-case catalog under root (real files, an
// empty folder, a binary file, odd file names, a symlinked file and a
// symlinked skill folder whose target lies outside root).
func writeCatalog(t *testing.T, root string) {
	t.Helper()
	outside := t.TempDir()
	files := map[string]string{
		"plain/SKILL.md":            "---\nname: plain\ndescription: A plain valid skill with a reference and a script, the baseline every client must load.\n---\n# Plain\n\nRead [the guide](references/guide.md), then run `scripts/run.sh`.\n",
		"plain/references/guide.md": "# Guide\n\nSteps.\n",
		"plain/scripts/run.sh":      "#!/bin/sh\necho plain\n",

		// Typed YAML scalars: a verifying host parses SKILL.md and compares
		// its frontmatter with the entry's, so the entry must keep the types.
		"typed-frontmatter/SKILL.md": "---\nname: typed-frontmatter\ndescription: Frontmatter with typed YAML scalars (a boolean, a float, a null, a mixed list, nested maps), which skills/list must keep as typed values.\n" +
			"disable-model-invocation: true\nversion: 1.0\nargument-hint: null\nx-empty:\ntags: [a, 1, true]\n" +
			"x-extra:\n  nested:\n    deep: 1\n    list: [x, 2.5, false]\n  when: 2026-01-02\n---\n# Typed\n\nBody.\n",

		// An empty file, as Python packages ship them.
		"empty-file/SKILL.md":            "---\nname: empty-file\ndescription: A skill with an empty scripts/__init__.py and an empty templates folder.\n---\n# Empty\n\nRun `python -m scripts.main`.\n",
		"empty-file/scripts/__init__.py": "",
		"empty-file/scripts/main.py":     "print('main')\n",

		// Odd file names and a binary file.
		"odd-names/SKILL.md":             "---\nname: odd-names\ndescription: A skill whose files have spaces, unicode, an ampersand, a hash and a percent sign in their names, and a binary file.\n---\n# Odd names\n\nSee the docs folder.\n",
		"odd-names/docs/with space.md":   "space\n",
		"odd-names/docs/ünïcødé-名前.md":   "unicode\n",
		"odd-names/docs/Q&A.md":          "# Q&A\n",
		"odd-names/docs/issue #1.md":     "hash\n",
		"odd-names/docs/100% done.md":    "percent\n",
		"odd-names/docs/a+b=c;d,e'f.txt": "punctuation\n",
		"odd-names/data/blob.bin":        "\x00\x01\x02\xff\xfe\x80binary\x00\x89PNG\r\n\x1a\n",

		// A nested SKILL.md: loadout serves it, and the files beside it, as
		// files of the outer skill (the extension lets a server list the
		// inner one as a skill of its own too; loadout does not).
		"outer/SKILL.md":                  "---\nname: outer\ndescription: A skill with another skill nested in its examples folder.\n---\n# Outer\n\nSee examples/inner.\n",
		"outer/examples/inner/SKILL.md":   "---\nname: inner\ndescription: A skill nested inside the outer skill's folder.\n---\n# Inner\n\nBody.\n",
		"outer/examples/inner/notes.md":   "inner notes\n",
		"outer/examples/inner/more/x.txt": "deeper\n",

		// Spec-invalid skills.
		"uppercase-name/SKILL.md":     "---\nname: Uppercase-Name\ndescription: A skill whose name has uppercase letters, which the specification forbids.\n---\nBody.\n",
		"long-description/SKILL.md":   "---\nname: long-description\ndescription: " + longText("A description longer than the specification's 1,024 characters. ", 1068) + "\n---\nBody.\n",
		"long-compatibility/SKILL.md": "---\nname: long-compatibility\ndescription: A skill whose compatibility field is longer than 500 characters.\ncompatibility: " + longText("Needs a very particular environment. ", 520) + "\n---\nBody.\n",
		"nested-metadata/SKILL.md":    "---\nname: nested-metadata\ndescription: A skill whose metadata holds a nested map, where the specification allows only string values.\nmetadata:\n  owner:\n    team: platform\n---\nBody.\n",
		"colon-value/SKILL.md":        "---\nname: colon-value\ndescription: Use this skill: when a colon and a space follow a word, which strict YAML refuses unquoted.\n---\nBody.\n",
		"no-name/SKILL.md":            "---\ndescription: A skill without a name field.\n---\nBody.\n",
	}
	for rel, content := range files {
		writeFile(t, filepath.Join(root, rel), content)
	}
	// An empty folder inside a valid skill.
	if err := os.MkdirAll(filepath.Join(root, "empty-file", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "plain", "scripts", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A symlinked file inside a skill, pointing at a file of the same skill.
	if err := os.Symlink("guide.md", filepath.Join(root, "plain", "references", "guide-link.md")); err != nil {
		t.Fatal(err)
	}
	// A symlinked skill folder: the catalog's entry is a link to a real
	// folder elsewhere.
	writeFile(t, filepath.Join(outside, "linked-skill", "SKILL.md"), "---\nname: linked-skill\ndescription: A skill whose folder in the catalog is a symlink to a folder elsewhere.\n---\n# Linked\n\nSee notes.md.\n")
	writeFile(t, filepath.Join(outside, "linked-skill", "notes.md"), "notes\n")
	if err := os.Symlink(filepath.Join(outside, "linked-skill"), filepath.Join(root, "linked-skill")); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// longText repeats s to exactly n bytes (s is ASCII), ending in a full
// stop so YAML trims nothing.
func longText(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n-1] + "."
}
