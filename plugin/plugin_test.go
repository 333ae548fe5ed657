package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// writeTree creates files under dir; a path ending in "/" is a folder.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func realDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func skillMD(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n\n# " + name + "\n\nBody of " + name + ".\n"
}

// find returns the first diagnostic with the code and field.
func find(diags []skill.Diagnostic, code, field string) (skill.Diagnostic, bool) {
	for _, d := range diags {
		if d.Code == code && d.Field == field {
			return d, true
		}
	}
	return skill.Diagnostic{}, false
}

func mustFind(t *testing.T, diags []skill.Diagnostic, code, field string, sev skill.Severity, contains ...string) skill.Diagnostic {
	t.Helper()
	d, ok := find(diags, code, field)
	if !ok {
		t.Fatalf("no %s diagnostic for field %q in:\n%s", code, field, dump(diags))
	}
	if d.Severity != sev {
		t.Errorf("%s %s: severity %s, want %s", code, field, d.Severity, sev)
	}
	for _, c := range contains {
		if !strings.Contains(d.String(), c) {
			t.Errorf("%s %s: %q does not contain %q", code, field, d.String(), c)
		}
	}
	return d
}

func dump(diags []skill.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString("  " + d.String() + " [field " + d.Field + "]\n")
	}
	return b.String()
}

func errorsIn(diags []skill.Diagnostic) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, d := range diags {
		if d.Severity == skill.Error {
			out = append(out, d)
		}
	}
	return out
}

func names(p *Plugin) []string {
	var out []string
	for _, s := range p.Skills {
		out = append(out, s.Name)
	}
	return out
}

const kindsManifest = `{
  // every source kind
  "id": "acme-ops", "name": "Acme Ops", "version": "1.4.0", "trust": "self_host_guarded",
  "skills": [
    { "id": "deploy", "name": "deploy", "source": { "kind": "directory", "path": "skills/deploy" },
      "tags": ["ops"], "category": "contrib-category", "requiresTools": ["bash"], "defaultEnabled": true },
    { "id": "notes", "name": "notes", "description": "Take notes: \"quoted\", #hash, and a\nnewline.",
      "source": { "kind": "inline", "content": "# Notes\n\nUse templates/note.md.\n" },
      "files": [{ "path": "templates/note.md", "content": "note template" }, { "path": "./scripts/run.sh", "content": "#!/bin/sh\n" }],
      "tags": ["writing", "notes"], "category": "docs", "requiresTools": ["read_file"], "defaultEnabled": false },
    { "id": "review", "name": "review", "source": { "kind": "file", "path": "./review/SKILL.md" } },
    { "id": "own-front", "name": "own-front", "source": { "kind": "inline",
      "content": "---\nname: own-front\ndescription: Has its own frontmatter.\ncategory: mine\n---\nOwn body.\n" },
      "category": "theirs", "tags": ["t"] },
  ],
}`

func TestLoadEverySourceKind(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.json":                        kindsManifest,
		"skills/deploy/SKILL.md":             skillMD("deploy", "Deploy things.", "category: ops\n"),
		"skills/deploy/references/guide.md":  "guide",
		"skills/deploy/scripts/go.sh":        "#!/bin/sh\n",
		"review/SKILL.md":                    skillMD("review", "Review code.", ""),
		"review/checklist.md":                "check",
		"unrelated/SKILL.md":                 skillMD("unrelated", "Not contributed.", ""),
		"skills/deploy/.hidden/ignored.md":   "x",
		"skills/deploy/templates/empty-dir/": "",
	})
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("plugin not loaded:\n%s", dump(diags))
	}
	if len(diags) != 0 {
		t.Errorf("unexpected diagnostics:\n%s", dump(diags))
	}
	real := realDir(t, dir)
	if p.Dir != real {
		t.Errorf("Dir = %q, want %q", p.Dir, real)
	}
	if got, want := names(p), []string{"deploy", "notes", "review", "own-front"}; !slices.Equal(got, want) {
		t.Fatalf("skills = %v, want %v", got, want)
	}
	wantOrigin := skill.Origin{Kind: "plugin", Root: real, Plugin: "acme-ops", Trust: "self_host_guarded", Provenance: "acme-ops 1.4.0"}
	for _, s := range p.Skills {
		if *s.Origin != wantOrigin {
			t.Errorf("%s: origin %+v, want %+v", s.Name, s.Origin, wantOrigin)
		}
		if s.Key != "plugin:acme-ops/"+s.Name {
			t.Errorf("%s: key %q", s.Name, s.Key)
		}
	}

	deploy, notes, review, own := p.Skills[0], p.Skills[1], p.Skills[2], p.Skills[3]

	// directory: on disk, real folder, normal manifest.
	if deploy.Virtual || deploy.Dir != filepath.Join(real, "skills", "deploy") {
		t.Errorf("deploy: Virtual=%v Dir=%q", deploy.Virtual, deploy.Dir)
	}
	var paths []string
	for _, f := range deploy.Files {
		paths = append(paths, f.Path)
	}
	if want := []string{"references/guide.md", "scripts/go.sh"}; !slices.Equal(paths, want) {
		t.Errorf("deploy files = %v, want %v", paths, want)
	}
	if !deploy.DefaultEnabled {
		t.Error("deploy: DefaultEnabled false")
	}
	// The frontmatter's category wins; tags and tools come from the contribution.
	if deploy.Meta.Category != "ops" || !slices.Equal(deploy.Meta.Tags, []string{"ops"}) || !slices.Equal(deploy.Meta.RequiresTools, []string{"bash"}) {
		t.Errorf("deploy meta: category %q tags %v tools %v", deploy.Meta.Category, deploy.Meta.Tags, deploy.Meta.RequiresTools)
	}
	if body, err := deploy.Body(); err != nil || !strings.Contains(body, "Body of deploy.") {
		t.Errorf("deploy body = %q, %v", body, err)
	}
	if data, err := deploy.ReadFile("references/guide.md"); err != nil || string(data) != "guide" {
		t.Errorf("deploy read = %q, %v", data, err)
	}

	// file: the folder holding SKILL.md.
	if review.Virtual || review.Dir != filepath.Join(real, "review") || len(review.Files) != 1 || review.Files[0].Path != "checklist.md" {
		t.Errorf("review: Virtual=%v Dir=%q Files=%v", review.Virtual, review.Dir, review.Files)
	}
	if !review.DefaultEnabled {
		t.Error("review: defaultEnabled should default to true")
	}

	// inline without frontmatter: one is written from the contribution.
	if !notes.Virtual || notes.Dir != "plugin://acme-ops/notes" || notes.Location != "plugin://acme-ops/notes/SKILL.md" {
		t.Errorf("notes: Virtual=%v Dir=%q Location=%q", notes.Virtual, notes.Dir, notes.Location)
	}
	if notes.Description != "Take notes: \"quoted\", #hash, and a\nnewline." {
		t.Errorf("notes description = %q", notes.Description)
	}
	if notes.DefaultEnabled {
		t.Error("notes: defaultEnabled false not honoured")
	}
	if notes.Meta.Category != "docs" || !slices.Equal(notes.Meta.Tags, []string{"writing", "notes"}) || !slices.Equal(notes.Meta.RequiresTools, []string{"read_file"}) {
		t.Errorf("notes meta: %+v", notes.Meta)
	}
	if body, err := notes.Body(); err != nil || body != "# Notes\n\nUse templates/note.md.\n" {
		t.Errorf("notes body = %q, %v", body, err)
	}
	if len(notes.Files) != 2 || notes.Files[0].Path != "scripts/run.sh" || !notes.Files[0].Script || notes.Files[1].Path != "templates/note.md" {
		t.Errorf("notes files = %+v", notes.Files)
	}
	if data, err := notes.ReadFile("templates/note.md"); err != nil || string(data) != "note template" {
		t.Errorf("notes read = %q, %v", data, err)
	}
	if data, err := notes.ReadFile("SKILL.md"); err != nil || !strings.HasPrefix(string(data), "---\nname: \"notes\"\n") {
		t.Errorf("notes SKILL.md = %q, %v", data, err)
	}
	if _, err := notes.ReadFile("../plugin.json"); err == nil {
		t.Error("notes: read outside the manifest allowed")
	}

	// inline with its own frontmatter: it wins over the contribution.
	if own.Meta.Category != "mine" || !slices.Equal(own.Meta.Tags, []string{"t"}) {
		t.Errorf("own-front meta: category %q tags %v", own.Meta.Category, own.Meta.Tags)
	}
	if body, _ := own.Body(); body != "Own body.\n" {
		t.Errorf("own-front body = %q", body)
	}
	if p.Manifest.ID != "acme-ops" || len(p.Manifest.Skills) != 4 {
		t.Errorf("manifest = %+v", p.Manifest)
	}
}

const goodManifest = `{"id": "good", "name": "Good", "version": "1", "trust": "self_host_open",
  "skills": [{"id": "a", "name": "alpha", "description": "Alpha skill.", "source": {"kind": "inline", "content": "Alpha."}}]}`

func TestMalformedManifestOthersStillLoad(t *testing.T) {
	cases := []struct {
		name, manifest, code, field string
		contains                    []string
	}{
		{"bad json", "{\n  \"id\": \"x\",\n  \"name\": \"X\" \"version\": \"1\"\n}", CodeManifest, "", []string{"plugin.json: 3:15: syntax error", "plugin not loaded"}},
		{"truncated", `{"id": "x", `, CodeManifest, "", []string{"syntax error"}},
		{"unknown key", `{"id": "x", "name": "X", "version": "1", "trust": "saas_locked", "verison": "2"}`, CodeManifest, "verison", []string{`1:66: unknown key "verison"`, `did you mean "version"`}},
		{"wrong type", `{"id": "x", "name": "X", "version": 1, "trust": "saas_locked"}`, CodeManifest, "version", []string{"must be a string"}},
		{"skills not a list", `{"id": "x", "name": "X", "version": "1", "trust": "saas_locked", "skills": {}}`, CodeManifest, "skills", []string{"must be an array"}},
		{"bad trust", `{"id": "x", "name": "X", "version": "1", "trust": "trusted"}`, CodeField, "trust", []string{`"trusted" is not a trust level`, "self_host_open, self_host_guarded, saas_locked"}},
		{"no trust", `{"id": "x", "name": "X", "version": "1"}`, CodeField, "trust", []string{"required", "saas_locked"}},
		{"missing id", `{"name": "X", "version": "1", "trust": "saas_locked"}`, CodeField, "id", []string{"id: required"}},
		{"bad id", `{"id": "Acme_Ops", "name": "X", "version": "1", "trust": "saas_locked"}`, CodeField, "id", []string{`"Acme_Ops" is not a valid plugin id`}},
		{"id with slash", `{"id": "a/b", "name": "X", "version": "1", "trust": "saas_locked"}`, CodeField, "id", nil},
		{"missing name", `{"id": "x", "version": "1", "trust": "saas_locked"}`, CodeField, "name", nil},
		{"missing version", `{"id": "x", "name": "X", "trust": "saas_locked"}`, CodeField, "version", nil},
		{"not an object", `[1, 2]`, CodeManifest, "", []string{"must be an object"}},
		{"empty file", ``, CodeManifest, "", []string{"syntax error"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			bad, good := filepath.Join(root, "bad"), filepath.Join(root, "good")
			writeTree(t, bad, map[string]string{"plugin.json": tc.manifest})
			writeTree(t, good, map[string]string{"plugin.json": goodManifest})
			plugins, diags := LoadAll([]string{bad, good})
			if len(plugins) != 1 || plugins[0].Manifest.ID != "good" || len(plugins[0].Skills) != 1 {
				t.Fatalf("want only the good plugin, got %d plugins:\n%s", len(plugins), dump(diags))
			}
			d := mustFind(t, diags, tc.code, tc.field, skill.Error, tc.contains...)
			if d.Path != filepath.Join(realDir(t, bad), "plugin.json") {
				t.Errorf("path = %q", d.Path)
			}
			for _, d := range errorsIn(diags) {
				if strings.Contains(d.Path, "good") {
					t.Errorf("diagnostic about the good plugin: %s", d)
				}
			}
		})
	}
}

func TestMissingPluginFolderOrManifest(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"empty/": "", "file": "x"})
	for _, tc := range []struct{ dir, contains string }{
		{filepath.Join(root, "nope"), "does not exist"},
		{filepath.Join(root, "empty"), "no plugin.json"},
		{filepath.Join(root, "file"), "not a folder"},
	} {
		p, diags := Load(tc.dir)
		if p != nil || len(diags) != 1 || diags[0].Code != CodeManifest || !strings.Contains(diags[0].Message, tc.contains) {
			t.Errorf("%s: plugin %v, diags:\n%s", tc.dir, p, dump(diags))
		}
	}
}

func TestBadContributionOthersLoad(t *testing.T) {
	manifest := `{"id": "p", "name": "P", "version": "1", "trust": "self_host_open", "skills": [
  {"id": "ok1", "name": "ok1", "description": "Fine.", "source": {"kind": "inline", "content": "One."}},
  {"id": "typo", "name": "typo", "sorce": {"kind": "inline", "content": "x"}},
  {"id": "kind", "name": "kind", "source": {"kind": "dir", "path": "x"}},
  {"id": "nokind", "name": "nokind", "source": {"path": "x"}},
  {"id": "nopath", "name": "nopath", "source": {"kind": "directory"}},
  {"id": "nocontent", "name": "nocontent", "source": {"kind": "inline"}},
  {"id": "nodesc", "name": "nodesc", "source": {"kind": "inline", "content": "No frontmatter."}},
  {"id": "both", "name": "both", "description": "d", "source": {"kind": "inline", "content": "c", "path": "x"}},
  {"id": "files", "name": "files", "source": {"kind": "directory", "path": "ok2"}, "files": [{"path": "a", "content": "b"}]},
  {"name": "noid", "description": "d", "source": {"kind": "inline", "content": "c"}},
  {"id": "ok1", "name": "dupid", "description": "d", "source": {"kind": "inline", "content": "c"}},
  {"id": "noname", "description": "d", "source": {"kind": "inline", "content": "c"}},
  {"id": "typed", "name": "typed", "tags": "ops", "source": {"kind": "inline", "content": "c"}},
  "not an object",
  {"id": "ok2", "name": "ok2", "source": {"kind": "directory", "path": "ok2"}},
  {"id": "missing", "name": "missing", "source": {"kind": "directory", "path": "missing"}},
  {"id": "notskill", "name": "notskill", "source": {"kind": "directory", "path": "plain"}},
  {"id": "notmd", "name": "notmd", "source": {"kind": "file", "path": "plain/readme.md"}},
  {"id": "fileisdir", "name": "fileisdir", "source": {"kind": "file", "path": "ok2"}},
  {"id": "dirisfile", "name": "dirisfile", "source": {"kind": "directory", "path": "plain/readme.md"}},
  {"id": "broken", "name": "broken", "source": {"kind": "directory", "path": "broken"}},
]}`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.json":     manifest,
		"ok2/SKILL.md":    skillMD("ok2", "Fine too.", ""),
		"plain/readme.md": "hello",
		"broken/SKILL.md": "---\nname: broken\n---\nno description\n",
	})
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("plugin not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"ok1", "ok2"}) {
		t.Errorf("skills = %v, want [ok1 ok2]\n%s", got, dump(diags))
	}
	mustFind(t, diags, CodeManifest, "skills[1].sorce", skill.Error, `3:34: skills[1]: unknown key "sorce" (did you mean "source"?)`)
	mustFind(t, diags, CodeField, "skills[2].source.kind", skill.Error, `"dir" is not a source kind`, "inline, file, directory")
	mustFind(t, diags, CodeField, "skills[3].source.kind", skill.Error, "required")
	mustFind(t, diags, CodeField, "skills[4].source.path", skill.Error, "required for a directory source")
	mustFind(t, diags, CodeField, "skills[5].source.content", skill.Error, "required for an inline source")
	mustFind(t, diags, CodeField, "skills[6].description", skill.Error, "no frontmatter")
	mustFind(t, diags, CodeField, "skills[7].source.path", skill.Error, "inline source has content, not a path")
	mustFind(t, diags, CodeField, "skills[8].files", skill.Error, "inline sources only")
	mustFind(t, diags, CodeField, "skills[9].id", skill.Error, "required")
	mustFind(t, diags, CodeDuplicate, "skills[10].id", skill.Error, `skills[0] already has the id "ok1"`)
	mustFind(t, diags, CodeField, "skills[11].name", skill.Error, "required")
	mustFind(t, diags, CodeManifest, "skills[12].tags", skill.Error, "must be an array")
	mustFind(t, diags, CodeManifest, "skills[13]", skill.Error, "must be an object")
	mustFind(t, diags, CodeSkill, "skills[15].source.path", skill.Error, `"missing" does not exist`)
	mustFind(t, diags, CodeSkill, "skills[16].source.path", skill.Error, "holds no SKILL.md")
	mustFind(t, diags, CodeSkill, "skills[17].source.path", skill.Error, "is not a SKILL.md")
	mustFind(t, diags, CodeSkill, "skills[18].source.path", skill.Error, "is not a file")
	mustFind(t, diags, CodeSkill, "skills[19].source.path", skill.Error, "is not a folder")
	mustFind(t, diags, CodeSkill, "skills[20].source.path", skill.Error, "could not be loaded")
	// The reason the broken skill was skipped comes with it.
	if _, ok := find(diags, skill.CodeDescriptionMissing, "description"); !ok {
		t.Errorf("no description-missing diagnostic for the broken skill:\n%s", dump(diags))
	}
	for _, d := range errorsIn(diags) {
		if d.Skill == "" && d.Code != CodeManifest && d.Field != "skills[11].name" {
			t.Errorf("error without a skill name: %s", d)
		}
	}
}

func TestPathEscapes(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	dir := filepath.Join(root, "plugin")
	writeTree(t, outside, map[string]string{
		"stolen/SKILL.md": skillMD("stolen", "Outside the plugin.", ""),
		"x/SKILL.md":      skillMD("x", "Outside too.", ""),
	})
	writeTree(t, dir, map[string]string{
		"plugin.json": `{"id": "p", "name": "P", "version": "1", "trust": "saas_locked", "skills": [
  {"id": "dotdot", "name": "x", "source": {"kind": "directory", "path": "../outside/x"}},
  {"id": "abs", "name": "x", "source": {"kind": "directory", "path": "` + filepath.ToSlash(filepath.Join(outside, "x")) + `"}},
  {"id": "inner-dotdot", "name": "x", "source": {"kind": "file", "path": "skills/../../outside/x/SKILL.md"}},
  {"id": "link-dir", "name": "stolen", "source": {"kind": "directory", "path": "linked"}},
  {"id": "link-file", "name": "stolen", "source": {"kind": "file", "path": "linkfile/SKILL.md"}},
  {"id": "link-parent", "name": "stolen", "source": {"kind": "file", "path": "up/stolen/SKILL.md"}},
  {"id": "backslash", "name": "x", "source": {"kind": "directory", "path": "..\\outside\\x"}},
  {"id": "dangling", "name": "x", "source": {"kind": "directory", "path": "dangling"}},
  {"id": "inside-link", "name": "ok", "source": {"kind": "directory", "path": "alias"}},
  {"id": "abs-inside-link", "name": "ok", "source": {"kind": "directory", "path": "absalias"}},
]}`,
		"real/ok/SKILL.md": skillMD("ok", "Reached through a link that stays inside.", ""),
		"linkfile/":        "",
	})
	for link, target := range map[string]string{
		"linked":            filepath.Join(outside, "stolen"),
		"linkfile/SKILL.md": filepath.Join(outside, "stolen", "SKILL.md"),
		"up":                outside,
		"dangling":          "/nonexistent-loadout-test",
		"alias":             "real/ok",
		"absalias":          filepath.Join(dir, "real", "ok"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip("symlinks not supported:", err)
		}
	}
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("plugin not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("skills = %v, want [ok]\n%s", got, dump(diags))
	}
	if ok := p.Skills[0]; ok.Dir != filepath.Join(realDir(t, dir), "real", "ok") {
		t.Errorf("ok.Dir = %q, want the real folder", ok.Dir)
	}
	mustFind(t, diags, skill.CodePathDotDot, "skills[0].source.path", skill.Error, "..")
	mustFind(t, diags, skill.CodePathAbsolute, "skills[1].source.path", skill.Error, "absolute")
	mustFind(t, diags, skill.CodePathDotDot, "skills[2].source.path", skill.Error)
	mustFind(t, diags, skill.CodeSymlinkEscapes, "skills[3].source.path", skill.Error, "leads out of the plugin folder")
	mustFind(t, diags, skill.CodeSymlinkEscapes, "skills[4].source.path", skill.Error, "leads out of the plugin folder")
	mustFind(t, diags, skill.CodeSymlinkEscapes, "skills[5].source.path", skill.Error, "leads out of the plugin folder")
	mustFind(t, diags, skill.CodePathChars, "skills[6].source.path", skill.Error, "backslash")
	d, ok := find(diags, skill.CodeSymlinkEscapes, "skills[7].source.path")
	if !ok {
		d, ok = find(diags, CodeSkill, "skills[7].source.path")
	}
	if !ok || d.Severity != skill.Error {
		t.Errorf("dangling link not refused:\n%s", dump(diags))
	}
	mustFind(t, diags, skill.CodeSymlinkEscapes, "skills[9].source.path", skill.Error, "absolute target", "make the link relative")
	for _, d := range diags {
		if strings.Contains(d.Path, "outside") {
			t.Errorf("a file outside the plugin was read: %s", d)
		}
	}
}

func TestSymlinkInsideSkillNotServed(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"secret.txt": "secret",
		"plugin/plugin.json": `{"id": "p", "name": "P", "version": "1", "trust": "saas_locked", "skills": [
  {"id": "s", "name": "s", "source": {"kind": "directory", "path": "s"}}]}`,
		"plugin/s/SKILL.md": skillMD("s", "Has a bad link.", ""),
	})
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(root, "plugin", "s", "secret.txt")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	p, diags := Load(filepath.Join(root, "plugin"))
	if p == nil || len(p.Skills) != 1 {
		t.Fatalf("not loaded:\n%s", dump(diags))
	}
	if len(p.Skills[0].Files) != 0 {
		t.Errorf("files = %v", p.Skills[0].Files)
	}
	if _, err := p.Skills[0].ReadFile("secret.txt"); err == nil {
		t.Error("read through a link out of the skill")
	}
	mustFind(t, diags, skill.CodeSymlinkEscapes, "", skill.Warning)
}

func TestInlineFilesRefused(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"plugin.json": `{"id": "p", "name": "P", "version": "1", "trust": "saas_locked", "skills": [
  {"id": "a", "name": "a", "description": "A.", "source": {"kind": "inline", "content": "A."},
   "files": [{"path": "ok.md", "content": "fine"}, {"path": "../escape.md", "content": "x"}]},
  {"id": "b", "name": "b", "description": "B.", "source": {"kind": "inline", "content": "B."},
   "files": [{"path": "/etc/passwd", "content": "x"}]},
  {"id": "c", "name": "c", "description": "C.", "source": {"kind": "inline", "content": "C."},
   "files": [{"path": "Skill.md", "content": "x"}]},
  {"id": "d", "name": "d", "description": "D.", "source": {"kind": "inline", "content": "D."},
   "files": [{"path": "a.md", "content": "x"}, {"path": "./a.md", "content": "y"}]},
  {"id": "e", "name": "e", "description": "E.", "source": {"kind": "inline", "content": "E."},
   "files": [{"path": "a\\b.md", "content": "x"}, {"path": "", "content": "x"}]},
  {"id": "f", "name": "Bad Name", "description": "F.", "source": {"kind": "inline", "content": "F."}},
  {"id": "g", "name": "g", "source": {"kind": "inline", "content": "---\nname: g\n---\nno description\n"}},
  {"id": "h", "name": "h", "description": "H.", "source": {"kind": "inline", "content": "H."},
   "files": [{"path": "templates/h.md", "content": "fine"}]},
]}`})
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"h"}) {
		t.Errorf("skills = %v, want [h]\n%s", got, dump(diags))
	}
	mustFind(t, diags, skill.CodePathDotDot, "skills[0].files[1]", skill.Error, "skill not loaded")
	mustFind(t, diags, skill.CodePathAbsolute, "skills[1].files[0]", skill.Error)
	mustFind(t, diags, skill.CodePathSkillMD, "skills[2].files[0]", skill.Error)
	mustFind(t, diags, skill.CodeDuplicatePath, "skills[3].files[1]", skill.Error)
	mustFind(t, diags, skill.CodePathChars, "skills[4].files[0]", skill.Error)
	mustFind(t, diags, skill.CodePathEmpty, "skills[4].files[1]", skill.Error)
	mustFind(t, diags, skill.CodeNameInvalid, "skills[5].name", skill.Error)
	mustFind(t, diags, skill.CodeDescriptionMissing, "skills[6].source.content", skill.Error)
	for _, d := range diags {
		if d.Path != filepath.Join(realDir(t, dir), "plugin.json") {
			t.Errorf("path %q, want the plugin.json: %s", d.Path, d)
		}
	}
}

func TestDuplicatePluginIDs(t *testing.T) {
	root := t.TempDir()
	one, two, three := filepath.Join(root, "one"), filepath.Join(root, "two"), filepath.Join(root, "three")
	writeTree(t, one, map[string]string{"plugin.json": goodManifest})
	writeTree(t, two, map[string]string{"plugin.json": strings.Replace(goodManifest, `"Good"`, `"Good Again"`, 1)})
	writeTree(t, three, map[string]string{"plugin.json": strings.Replace(goodManifest, `"good"`, `"other"`, 1)})
	plugins, diags := LoadAll([]string{one, two, three, one})
	if len(plugins) != 2 || plugins[0].Manifest.Name != "Good" || plugins[1].Manifest.ID != "other" {
		t.Fatalf("plugins: %d\n%s", len(plugins), dump(diags))
	}
	if len(diags) != 2 {
		t.Errorf("want 2 diagnostics:\n%s", dump(diags))
	}
	d := mustFind(t, diags, CodeDuplicate, "id", skill.Error, `plugin id "good" is already used`)
	if d.Winner != realDir(t, one) || d.Loser != realDir(t, two) {
		t.Errorf("winner %q loser %q", d.Winner, d.Loser)
	}
	if diags[1].Severity != skill.Info || !strings.Contains(diags[1].Message, "listed twice") {
		t.Errorf("second diagnostic: %s", diags[1])
	}
}

func TestNameMismatchAndDuplicateSkillNames(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.json": `{"id": "p", "name": "P", "version": "1", "trust": "self_host_open", "skills": [
  {"id": "d", "name": "deploy-prod", "source": {"kind": "directory", "path": "deploy"}},
  {"id": "i", "name": "notes", "source": {"kind": "inline", "content": "---\nname: jot\ndescription: Jot things.\n---\nBody.\n"}},
  {"id": "again", "name": "deploy", "source": {"kind": "file", "path": "copy/SKILL.md"}},
]}`,
		"deploy/SKILL.md": skillMD("deploy", "Deploy.", ""),
		"copy/SKILL.md":   skillMD("deploy", "Deploy, again.", ""),
	})
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"deploy", "jot"}) {
		t.Errorf("skills = %v\n%s", got, dump(diags))
	}
	mustFind(t, diags, CodeNameMismatch, "skills[0].name", skill.Warning, `"deploy-prod"`, `"deploy"`)
	mustFind(t, diags, CodeNameMismatch, "skills[1].name", skill.Warning, `"notes"`, `"jot"`)
	d := mustFind(t, diags, CodeDuplicate, "skills[2]", skill.Error, `skills[0] already contributes a skill named "deploy"`)
	if d.Winner != p.Skills[0].Location || !strings.HasSuffix(d.Loser, filepath.Join("copy", "SKILL.md")) {
		t.Errorf("winner %q loser %q", d.Winner, d.Loser)
	}
	if p.Skills[1].Key != "plugin:p/jot" || p.Skills[1].Contribution.ID != "i" {
		t.Errorf("jot: key %q contribution %q", p.Skills[1].Key, p.Skills[1].Contribution.ID)
	}
}

func TestFileSourceAtPluginRootIsAllowed(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.json": `{"id": "solo", "name": "Solo", "version": "1", "trust": "self_host_open",
  "skills": [{"id": "s", "name": "solo", "source": {"kind": "file", "path": "SKILL.md"}}]}`,
		"SKILL.md": skillMD("solo", "The plugin is the skill.", ""),
	})
	p, diags := Load(dir)
	if p == nil || len(p.Skills) != 1 || p.Skills[0].Dir != realDir(t, dir) {
		t.Fatalf("not loaded as expected:\n%s", dump(diags))
	}
}

func TestYAMLQuoteRoundTrip(t *testing.T) {
	for _, desc := range []string{
		"plain", `with "quotes" and \backslashes\`, "colon: space", "# hash", "- dash", "[brackets]", "{braces}",
		"multi\nline\ttab\rcr", "null", "true", "1.0", "'single'", "&anchor *alias !tag", "|", ">", "%percent", "@at `tick`",
		"\x00\x01\x7f\u0085\u00a0\u2028\u2029\ufeff\ufffe", "emoji 🚀 and ünïcode", " leading and trailing ", "---", "...",
	} {
		checkRoundTrip(t, "skill-name", desc)
	}
}

func checkRoundTrip(t *testing.T, name, desc string) {
	t.Helper()
	c := Contribution{Name: name, Description: desc, Tags: []string{desc, "b"}, Category: desc, RequiresTools: []string{desc}}
	front := synthFrontmatter(c)
	if len(front) > skill.MaxFrontmatterBytes {
		// Over the bound the loader refuses the contribution by its fields.
		c.ID, c.Source = "big", Source{Kind: KindInline, Content: "Body.\n"}
		l := &loader{file: "/p/plugin.json", m: &Manifest{ID: "p"}, origin: &skill.Origin{Kind: "plugin", Plugin: "p"}}
		sk, diags := l.inline(3, c)
		if sk != nil || len(diags) != 1 || diags[0].Code != skill.CodeFrontmatterTooLarge || diags[0].Field != "skills[3]" ||
			diags[0].Severity != skill.Error || !strings.Contains(diags[0].Message, "shorten them") {
			t.Fatalf("%d-byte frontmatter: skill %v, diags %v", len(front), sk, diags)
		}
		return
	}
	text := front + "Body.\n"
	doc, diags, ok := skill.Parse([]byte(text), "SKILL.md", "")
	if !ok {
		t.Fatalf("%q: not parsed: %v\n%s", desc, diags, text)
	}
	if doc.Name != name || doc.Description != desc || doc.Category != desc ||
		!slices.Equal(doc.Tags, []string{desc, "b"}) || !slices.Equal(doc.RequiresTools, []string{desc}) {
		t.Errorf("%q: round trip gave name %q description %q category %q tags %q tools %q\n%s",
			desc, doc.Name, doc.Description, doc.Category, doc.Tags, doc.RequiresTools, text)
	}
	if doc.Body != "Body.\n" {
		t.Errorf("%q: body %q", desc, doc.Body)
	}
}

func TestHasFrontmatter(t *testing.T) {
	for s, want := range map[string]bool{
		"---\nname: x\n---\n": true, "--- \r\nx": true, "\ufeff---\n": true, "---": true, "---\rname": true,
		"# Title\n---\n": false, "": false, "----\n": false, " ---\n": false,
	} {
		if got := hasFrontmatter(s); got != want {
			t.Errorf("hasFrontmatter(%q) = %v", s, got)
		}
	}
}

// TestSynthFrontmatterTooLarge loads a plugin whose inline contribution has
// fields too long to write as frontmatter: the contribution is refused by
// its fields and the plugin's other skill loads.
func TestSynthFrontmatterTooLarge(t *testing.T) {
	long := strings.Repeat("\b", 9000) // each escapes to four bytes (`\x08`), in four fields
	c := map[string]any{"id": "big", "name": "big", "description": long, "tags": []string{long}, "category": long,
		"requiresTools": []string{long}, "source": map[string]string{"kind": "inline", "content": "Big."}}
	data, err := json.Marshal(map[string]any{"id": "p", "name": "P", "version": "1", "trust": "self_host_open", "skills": []any{
		map[string]any{"id": "ok", "name": "ok", "description": "Fine.", "source": map[string]string{"kind": "inline", "content": "Ok."}}, c}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"plugin.json": string(data)})
	p, diags := Load(dir)
	if p == nil {
		t.Fatalf("plugin not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("skills = %v, want [ok]\n%s", got, dump(diags))
	}
	mustFind(t, diags, skill.CodeFrontmatterTooLarge, "skills[1]", skill.Error, "come to 144081 bytes", "over the 65536-byte limit", "shorten them")
}
