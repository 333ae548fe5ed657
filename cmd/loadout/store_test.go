package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loadout/loadout/internal/testutil"
)

// treeOf records every file under dir: bytes and executable bit.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		mode := "-"
		if info.Mode().Perm()&0o111 != 0 {
			mode = "x"
		}
		out[filepath.ToSlash(rel)] = mode + " " + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stores returns the stores to test the CLI against: a SQLite file, and
// PostgreSQL when a server is available (always under CI).
func stores(t *testing.T) map[string]func(t *testing.T) string {
	m := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "loadout.db") },
	}
	if os.Getenv("LOADOUT_TEST_POSTGRES") != "" || os.Getenv("CI") != "" {
		m["postgres"] = freshPostgres
	}
	return m
}

func TestImportExportRoundTrip(t *testing.T) {
	original, err := filepath.Abs("../../portable/testdata/roundtrip/pdf-tools")
	if err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, original)
	if len(want) < 8 || !strings.HasPrefix(want["scripts/merge.sh"], "x ") {
		t.Fatalf("test skill is not what this test expects: %d files", len(want))
	}
	for engine, newDB := range stores(t) {
		t.Run(engine, func(t *testing.T) {
			work := t.TempDir()
			db1, db2 := newDB(t), newDB(t)
			// folder -> store -> JSON
			if r := runCLI(t, "import", "--db", db1, original); r.code != 0 || !strings.Contains(r.stdout, "created    pdf-tools v1") {
				t.Fatalf("import folder: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			js := filepath.Join(work, "pdf-tools.json")
			if r := runCLI(t, "export", "--db", db1, "pdf-tools", "--format", "json", "--out", js); r.code != 0 {
				t.Fatalf("export json: %s", r.stderr)
			}
			// JSON -> a second store -> zip
			if r := runCLI(t, "import", "--db", db2, js); r.code != 0 || !strings.Contains(r.stdout, "created") {
				t.Fatalf("import json: %d\n%s", r.code, r.stdout)
			}
			zip := filepath.Join(work, "pdf-tools.zip")
			if r := runCLI(t, "export", "--db", db2, "pdf-tools", "--format", "zip", "--out", zip); r.code != 0 {
				t.Fatalf("export zip: %s", r.stderr)
			}
			// zip -> the first store again: unchanged, same digest
			if r := runCLI(t, "import", "--db", db1, zip); r.code != 0 || !strings.Contains(r.stdout, "unchanged  pdf-tools v1") {
				t.Fatalf("import zip: %d\n%s", r.code, r.stdout)
			}
			// store -> folder
			out := filepath.Join(work, "out")
			if r := runCLI(t, "export", "--db", db2, "pdf-tools", "--format", "dir", "--out", out); r.code != 0 {
				t.Fatalf("export dir: %s", r.stderr)
			}
			if diff := cmp.Diff(want, treeOf(t, out)); diff != "" {
				t.Errorf("folder -> JSON -> store -> zip -> folder changed bytes or modes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreCommands(t *testing.T) {
	examples, _ := filepath.Abs("../../examples/skills")
	for engine, newDB := range stores(t) {
		t.Run(engine, func(t *testing.T) {
			db := newDB(t)
			r := runCLI(t, "import", "--db", db, "--json", examples)
			var out struct {
				Results []struct{ Name, Action string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || len(out.Results) != 5 {
				t.Fatalf("import: %d %v\n%s", r.code, err, r.stdout)
			}
			before := runCLI(t, "list", "--db", db, "--json").stdout

			// A refused import changes nothing, and says why.
			bad := t.TempDir()
			testutil.Must(t, os.MkdirAll(filepath.Join(bad, "evil"), 0o755))
			testutil.Write(t, filepath.Join(bad, "evil", "SKILL.md"), "---\nname: evil\ndescription: x\n---\n")
			testutil.Must(t, os.Symlink("/etc/passwd", filepath.Join(bad, "evil", "pw")))
			testutil.Must(t, os.MkdirAll(filepath.Join(bad, "nodesc"), 0o755))
			testutil.Write(t, filepath.Join(bad, "nodesc", "SKILL.md"), "---\nname: nodesc\n---\n")
			r = runCLI(t, "import", "--db", db, filepath.Join(bad, "evil"), filepath.Join(bad, "nodesc"))
			if r.code != 1 || strings.Count(r.stdout, "refused") < 2 || !strings.Contains(r.stdout, "outside the skill folder") || !strings.Contains(r.stdout, "description") {
				t.Errorf("refused import: %d\n%s", r.code, r.stdout)
			}
			if after := runCLI(t, "list", "--db", db, "--json").stdout; after != before {
				t.Errorf("a refused import changed the store")
			}

			// Versions and restore.
			dir := filepath.Join(t.TempDir(), "deploy")
			runCLI(t, "export", "--db", db, "deploy", "--format", "dir", "--out", dir)
			testutil.Write(t, filepath.Join(dir, "references", "new.md"), "# New\n")
			if r := runCLI(t, "import", "--db", db, dir); !strings.Contains(r.stdout, "updated    deploy v2") {
				t.Fatalf("update: %s", r.stdout)
			}
			if r := runCLI(t, "read", "--db", db, "deploy", "references/new.md"); r.code != 0 || r.stdout != "# New\n" {
				t.Errorf("read new file: %d %q %s", r.code, r.stdout, r.stderr)
			}
			if r := runCLI(t, "restore", "--db", db, "deploy", "1"); r.code != 0 || !strings.Contains(r.stdout, "as version 3") {
				t.Fatalf("restore: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r = runCLI(t, "versions", "--db", db, "deploy", "--json")
			var vs struct {
				Versions []struct {
					Version int
					Digest  string
				}
			}
			json.Unmarshal([]byte(r.stdout), &vs)
			if len(vs.Versions) != 3 {
				t.Fatalf("versions: %s", r.stdout)
			}
			digests := map[int]string{}
			for _, v := range vs.Versions {
				digests[v.Version] = v.Digest
			}
			if digests[3] != digests[1] || digests[2] == digests[1] {
				t.Errorf("restored version should equal v1: %v", digests)
			}
			if r := runCLI(t, "read", "--db", db, "deploy", "references/new.md"); r.code != 1 {
				t.Errorf("file of v2 still served after restoring v1: %d", r.code)
			}
			if r := runCLI(t, "restore", "--db", db, "deploy", "9"); r.code != 1 || r.stderr == "" {
				t.Errorf("restore of a missing version: %d %s", r.code, r.stderr)
			}

			// Disable and enable.
			runCLI(t, "disable", "--db", db, "deploy")
			if r := runCLI(t, "load", "--db", db, "deploy"); r.code != 1 {
				t.Errorf("a disabled skill loaded")
			}
			runCLI(t, "enable", "--db", db, "deploy")
			if r := runCLI(t, "load", "--db", db, "deploy"); r.code != 0 || !strings.Contains(r.stdout, `root="store://deploy"`) || !strings.Contains(r.stdout, "read_skill_file") {
				t.Errorf("store load: %d\n%s", r.code, r.stdout)
			}
		})
	}
}

func TestPluginsAndMixedSources(t *testing.T) {
	ex := examplesDir(t)
	work := t.TempDir()
	cfg := filepath.Join(work, "loadout.json")
	testutil.Must(t, os.WriteFile(cfg, []byte(`{
  "agents": [{"agentId": "platform", "skills": [{"store": true}, {"plugin": "acme-ops"}, {"root": "`+filepath.Join(ex, "skills")+`"}]}],
  "plugins": ["`+filepath.Join(ex, "plugins", "acme-ops")+`"]
}`), 0o644))
	r := runCLI(t, "plugins", "--config", cfg, "--json")
	var ps struct {
		Skills []struct {
			Key     string
			Enabled bool
			Source  struct{ Plugin, Trust string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || len(ps.Skills) != 2 {
		t.Fatalf("plugins: %v %s %s", err, r.stdout, r.stderr)
	}
	var keys []string
	for _, s := range ps.Skills {
		keys = append(keys, s.Key)
		if s.Source.Trust != "self_host_guarded" {
			t.Errorf("trust: %+v", s)
		}
	}
	sort.Strings(keys)
	if keys[0] != "plugin:acme-ops/oncall-handoff" {
		t.Fatalf("keys: %v", keys)
	}
	names := func() string {
		r := runCLI(t, "list", "--config", cfg, "--agent", "platform", "--json")
		var out struct {
			Skills []struct {
				Name, Mode string
				Shadowed   bool
				Source     struct{ Kind, Plugin, Trust string }
			}
		}
		json.Unmarshal([]byte(r.stdout), &out)
		var s []string
		for _, k := range out.Skills {
			x := k.Name + "@" + k.Source.Kind
			if k.Shadowed {
				x += "(shadowed)"
			}
			s = append(s, x)
		}
		return strings.Join(s, " ")
	}
	if got := names(); got != "rollout@plugin code-review@folder commit-messages@folder deploy@folder pdf-forms@folder release-checklist@folder" {
		t.Errorf("before: %s", got)
	}
	runCLI(t, "enable", "--config", cfg, "plugin:acme-ops/oncall-handoff")
	runCLI(t, "import", "--config", cfg, filepath.Join(ex, "skills", "deploy"))
	if got := names(); got != "deploy@store oncall-handoff@plugin rollout@plugin code-review@folder commit-messages@folder deploy@folder(shadowed) pdf-forms@folder release-checklist@folder" {
		t.Errorf("after: %s", got)
	}
	r = runCLI(t, "load", "--config", cfg, "--agent", "platform", "rollout")
	if r.code != 0 || !strings.Contains(r.stdout, `<origin kind="plugin" plugin="acme-ops" trust="self_host_guarded" provenance="acme-ops 1.4.0"/>`) {
		t.Errorf("plugin load:\n%s", r.stdout)
	}
	out := filepath.Join(work, "rollout.json")
	if r := runCLI(t, "export", "--config", cfg, "rollout", "--format", "json", "--out", out); r.code != 0 {
		t.Fatalf("export plugin skill: %s", r.stderr)
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), `"trust": "self_host_guarded"`) || !strings.Contains(string(data), `"plugin": "acme-ops"`) {
		t.Errorf("export lacks the plugin's id and trust:\n%s", data)
	}
	r = runCLI(t, "prompt", "--config", cfg, "--agent", "platform", "--verbose")
	if !strings.Contains(r.stderr, "same-name-sources") || !strings.Contains(r.stderr, "skill rollout: listed, from plugin:acme-ops (self_host_guarded)") {
		t.Errorf("prompt stderr:\n%s", r.stderr)
	}
}
