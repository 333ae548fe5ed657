package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/internal/testutil"
)

// TestNestedSkillMDExportImport exports a folder skill with a nested
// SKILL.md (examples/inner/SKILL.md, one of its files, as discovery lists
// it) as a folder, a zip and JSON, imports each into a real SQLite store
// and exports it back as a folder: the bytes and modes are unchanged.
// export and import refused the skill (path-second-skill-md).
func TestNestedSkillMDExportImport(t *testing.T) {
	work := t.TempDir()
	root := filepath.Join(work, "skills")
	files := map[string]string{
		"outer/SKILL.md":                "---\nname: outer\ndescription: A skill that ships an example skill.\n---\n# Outer\n",
		"outer/examples/inner/SKILL.md": "---\nname: inner\ndescription: An example.\n---\n# Inner\n",
		"outer/examples/inner/run.sh":   "#!/bin/sh\necho inner\n",
		"outer/notes.md":                "notes\n",
	}
	for p, data := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		testutil.Must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	want := treeOf(t, filepath.Join(root, "outer"))
	cfg := filepath.Join(work, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "a", "skills": [{"root": "`+root+`"}]}]}`)

	for _, format := range []string{"dir", "zip", "json"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "outer."+format)
			if r := runCLI(t, "export", "--config", cfg, "outer", "--format", format, "--out", out); r.code != 0 {
				t.Fatalf("export %s: %d\n%s%s", format, r.code, r.stdout, r.stderr)
			}
			db := filepath.Join(t.TempDir(), "loadout.db")
			if r := runCLI(t, "import", "--db", db, out); r.code != 0 || !strings.Contains(r.stdout, "created    outer v1") {
				t.Fatalf("import %s: %d\n%s%s", format, r.code, r.stdout, r.stderr)
			}
			back := filepath.Join(t.TempDir(), "back")
			if r := runCLI(t, "export", "--db", db, "outer", "--format", "dir", "--out", back); r.code != 0 {
				t.Fatalf("export from the store: %d\n%s", r.code, r.stderr)
			}
			if diff := cmp.Diff(want, treeOf(t, back)); diff != "" {
				t.Errorf("folder -> %s -> SQLite -> folder changed bytes or modes (-want +got):\n%s", format, diff)
			}
		})
	}
}
