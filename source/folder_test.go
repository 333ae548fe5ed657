package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// tree writes files under dir. A value starting with "-> " makes a symlink.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func md(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\nbody\n", name, desc, name)
}

func names(r *Result) []string {
	out := []string{}
	for _, s := range r.Skills {
		out = append(out, s.Name)
	}
	return out
}

func codes(r *Result) []string {
	out := []string{}
	for _, d := range r.Diagnostics {
		out = append(out, d.Code)
	}
	return out
}

func findDiag(r *Result, code string) *skill.Diagnostic {
	for i := range r.Diagnostics {
		if r.Diagnostics[i].Code == code {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

func scanT(t *testing.T, root string, opt Options) *Result {
	t.Helper()
	return ScanFolder(context.Background(), root, opt)
}

func TestScanSkipsDotDirsNodeModulesAndLooseMarkdown(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"a/SKILL.md":                   md("a", "A."),
		".hidden/SKILL.md":             md("hidden", "H."),
		"node_modules/x/SKILL.md":      md("x", "X."),
		"deep/node_modules/y/SKILL.md": md("y", "Y."),
		"README.md":                    "# not a skill\n",
		"group/b/SKILL.md":             md("b", "B."),
		"group/.git/c/SKILL.md":        md("c", "C."),
	})
	r := scanT(t, dir, Options{})
	if diff := cmp.Diff([]string{"a", "b"}, names(r)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if len(r.Diagnostics) != 0 {
		t.Errorf("unexpected diagnostics: %v", r.Diagnostics)
	}
}

func TestScanHonoursIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		".gitignore":            "drafts/\n/build\n",
		"drafts/d/SKILL.md":     md("d", "D."),
		"build/e/SKILL.md":      md("e", "E."),
		"keep/build/f/SKILL.md": md("f", "F."), // /build is anchored at the root
		"team/.ignore":          "wip-*\n",
		"team/wip-g/SKILL.md":   md("wip-g", "G."),
		"team/h/SKILL.md":       md("h", "H."),
		"team/h/notes.tmp":      "x",
		"team/h/.gitignore":     "*.tmp\n",
		"team/h/keep.md":        "y",
		"other/.fdignore":       "secret\n",
		"other/secret/SKILL.md": md("secret", "S."),
		"other/public/SKILL.md": md("public", "P."),
	})
	r := scanT(t, dir, Options{})
	if diff := cmp.Diff([]string{"f", "public", "h"}, names(r)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	var files []string
	for _, s := range r.Skills {
		if s.Name == "h" {
			for _, f := range s.Files {
				files = append(files, f.Path)
			}
		}
	}
	if diff := cmp.Diff([]string{"keep.md"}, files); diff != "" {
		t.Errorf("h's files (-want +got):\n%s", diff)
	}
}

func TestScanSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	tree(t, outside, map[string]string{
		"shared/SKILL.md": md("shared", "Shared."),
		"secret.txt":      "do not serve",
	})
	tree(t, dir, map[string]string{
		"root/linked":        "-> " + filepath.Join(outside, "shared"),
		"root/again":         "-> " + filepath.Join(outside, "shared"),
		"root/loop/loop":     "-> ..",
		"root/broken":        "-> /nonexistent/place",
		"root/s/SKILL.md":    md("s", "S."),
		"root/s/refs/ok.md":  "fine",
		"root/s/leak.txt":    "-> " + filepath.Join(outside, "secret.txt"),
		"root/s/inside.md":   "-> refs/ok.md",
		"root/s/gone.md":     "-> nowhere.md",
		"root/s/selfloop/up": "-> ..",
	})
	r := scanT(t, filepath.Join(dir, "root"), Options{})
	if diff := cmp.Diff([]string{"shared", "s"}, names(r)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	// "again" comes before "linked": it wins, and linked is the duplicate.
	dup := findDiag(r, skill.CodeDuplicateSkill)
	if dup == nil || !strings.HasSuffix(dup.Loser, filepath.Join("linked", "SKILL.md")) || !strings.HasSuffix(dup.Winner, filepath.Join("again", "SKILL.md")) {
		t.Errorf("want a duplicate diagnostic naming again as the winner and linked as the loser, got %+v", dup)
	}
	for _, code := range []string{skill.CodeSymlinkLoop, skill.CodeSymlinkBroken, skill.CodeSymlinkEscapes} {
		if findDiag(r, code) == nil {
			t.Errorf("missing %s diagnostic; got %v", code, codes(r))
		}
	}
	if d := findDiag(r, skill.CodeSymlinkEscapes); d != nil && !strings.HasSuffix(d.Path, "leak.txt") {
		t.Errorf("escape diagnostic names %s, want leak.txt", d.Path)
	}
	var s *skill.Skill
	for _, sk := range r.Skills {
		if sk.Name == "s" {
			s = sk
		}
	}
	var files []string
	for _, f := range s.Files {
		files = append(files, f.Path)
	}
	if diff := cmp.Diff([]string{"inside.md", "refs/ok.md"}, files); diff != "" {
		t.Errorf("files of s (-want +got):\n%s", diff)
	}
	// The shared skill's location is its real path.
	for _, sk := range r.Skills {
		if sk.Name == "shared" {
			want, _ := filepath.EvalSymlinks(filepath.Join(outside, "shared"))
			if sk.Dir != want {
				t.Errorf("Dir = %s, want real path %s", sk.Dir, want)
			}
		}
	}
	// Reading through the skill refuses the escaping link even if asked directly.
	if _, err := s.ReadFile("leak.txt"); err == nil {
		t.Error("ReadFile of an unlisted escaping symlink succeeded")
	}
}

func TestScanNestedSkillIsAFileNotASkill(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"outer/SKILL.md":       md("outer", "Outer."),
		"outer/inner/SKILL.md": md("inner", "Inner."),
		"outer/inner/notes.md": "n",
	})
	r := scanT(t, dir, Options{})
	if diff := cmp.Diff([]string{"outer"}, names(r)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	d := findDiag(r, skill.CodeNestedSkill)
	if d == nil || d.Severity != skill.Warning || !strings.HasSuffix(d.Path, "inner") {
		t.Fatalf("want a nested-skill warning on outer/inner, got %v", r.Diagnostics)
	}
	var files []string
	for _, f := range r.Skills[0].Files {
		files = append(files, f.Path)
	}
	if diff := cmp.Diff([]string{"inner/SKILL.md", "inner/notes.md"}, files); diff != "" {
		t.Errorf("outer's files (-want +got):\n%s", diff)
	}
}

func TestScanCollisionFirstInWalkOrderWins(t *testing.T) {
	dir := t.TempDir()
	// "a-b" sorts before "a" + "/..." bytewise by string, but a walk visits
	// "a" (and everything below it) before "a-b": the walk order wins.
	tree(t, dir, map[string]string{
		"a-b/dup/SKILL.md": md("dup", "Second in walk order."),
		"a/dup/SKILL.md":   md("dup", "First in walk order."),
		"z/other/SKILL.md": md("dup", "Third, and named differently from its folder."),
	})
	r := scanT(t, dir, Options{Workers: 8})
	if len(r.Skills) != 1 || r.Skills[0].Description != "First in walk order." {
		t.Fatalf("winner = %+v", r.Skills)
	}
	var losers []string
	for _, d := range r.Diagnostics {
		if d.Code == skill.CodeNameCollision {
			if !strings.HasSuffix(d.Winner, filepath.Join("a", "dup", "SKILL.md")) {
				t.Errorf("winner %s", d.Winner)
			}
			rel, _ := filepath.Rel(dir, d.Loser)
			losers = append(losers, filepath.ToSlash(rel))
		}
	}
	if diff := cmp.Diff([]string{"a-b/dup/SKILL.md", "z/other/SKILL.md"}, losers); diff != "" {
		t.Errorf("losers (-want +got):\n%s", diff)
	}
}

func TestScanLimits(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"d1/d2/d3/d4/deep/SKILL.md": md("deep", "Deep.")}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("many/s%02d/SKILL.md", i)] = md(fmt.Sprintf("s%02d", i), "S.")
	}
	files["big/SKILL.md"] = md("big", "Big.")
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("big/f%02d.md", i)] = "x"
	}
	tree(t, dir, files)

	r := scanT(t, dir, Options{MaxDepth: 3})
	if d := findDiag(r, skill.CodeLimitDepth); d == nil || !strings.Contains(d.Path, "d4") {
		t.Errorf("want a depth limit diagnostic at d4, got %v", r.Diagnostics)
	}
	for _, n := range names(r) {
		if n == "deep" {
			t.Error("found a skill below max depth")
		}
	}

	r = scanT(t, dir, Options{MaxDirs: 10})
	if findDiag(r, skill.CodeLimitDirs) == nil {
		t.Errorf("want limit-dirs, got %v", codes(r))
	}
	first := names(r)
	// The cut is deterministic, whatever the worker count.
	for w := 1; w <= 8; w *= 2 {
		if diff := cmp.Diff(first, names(scanT(t, dir, Options{MaxDirs: 10, Workers: w}))); diff != "" {
			t.Errorf("workers=%d changed the result:\n%s", w, diff)
		}
	}

	r = scanT(t, dir, Options{MaxFiles: 5})
	if d := findDiag(r, skill.CodeLimitFiles); d == nil || d.Skill != "big" {
		t.Errorf("want limit-files for big, got %v", r.Diagnostics)
	}
	for _, s := range r.Skills {
		if s.Name == "big" && len(s.Files) != 5 {
			t.Errorf("big lists %d files, want 5", len(s.Files))
		}
	}
}

func TestScanReportsReadErrorsAndSkips(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Log("running as root: unreadable folders are readable; checking the other cases only")
	}
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"nodesc/SKILL.md":   "---\nname: nodesc\n---\nbody\n",
		"badyaml/SKILL.md":  "---\nname: badyaml\ndescription: [unclosed\n---\n",
		"ok/SKILL.md":       md("ok", "Fine."),
		"locked/x/SKILL.md": md("x", "X."),
	})
	if os.Geteuid() != 0 {
		testutil.Must(t, os.Chmod(filepath.Join(dir, "locked"), 0))
		t.Cleanup(func() { testutil.Must(t, os.Chmod(filepath.Join(dir, "locked"), 0o755)) })
	}
	r := scanT(t, dir, Options{})
	if diff := cmp.Diff([]string{"ok"}[:1], names(r)[:1]); diff != "" && len(names(r)) == 0 {
		t.Errorf("skills: %v", names(r))
	}
	for _, code := range []string{skill.CodeDescriptionMissing, skill.CodeYAMLInvalid} {
		d := findDiag(r, code)
		if d == nil || d.Severity != skill.Error {
			t.Errorf("want error %s, got %v", code, r.Diagnostics)
		}
	}
	if os.Geteuid() != 0 {
		if d := findDiag(r, skill.CodeReadError); d == nil || !strings.HasSuffix(d.Path, "locked") {
			t.Errorf("want a read error on locked, got %v", r.Diagnostics)
		}
	}
	r = scanT(t, filepath.Join(dir, "missing"), Options{})
	if d := findDiag(r, skill.CodeRootMissing); d == nil {
		t.Errorf("want root-missing, got %v", r.Diagnostics)
	}
}

func TestScanManifest(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"s/SKILL.md":            md("s", "S."),
		"s/scripts/run.sh":      "#!/bin/sh\n",
		"s/scripts/helper.py":   "print(1)\n",
		"s/assets/font.ttf":     "\x00\x01binary",
		"s/assets/blob":         "\x00\xff\x00",
		"s/assets/notes":        "plain text without extension",
		"s/references/guide.md": "# guide",
	})
	r := scanT(t, dir, Options{})
	if len(r.Skills) != 1 {
		t.Fatalf("skills: %v %v", names(r), r.Diagnostics)
	}
	got := r.Skills[0].Files
	want := []skill.File{
		{Path: "assets/blob", Size: 3, ContentType: "application/octet-stream", Binary: true},
		{Path: "assets/font.ttf", Size: 8, ContentType: "font/ttf", Binary: true},
		{Path: "assets/notes", Size: 28, ContentType: "text/plain"},
		{Path: "references/guide.md", Size: 7, ContentType: "text/markdown"},
		{Path: "scripts/helper.py", Size: 9, ContentType: "text/x-python", Script: true},
		{Path: "scripts/run.sh", Size: 10, ContentType: "application/x-sh", Executable: true, Script: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	d1, err := r.Skills[0].Digest("references/guide.md")
	if err != nil || d1 != skill.DigestBytes([]byte("# guide")) {
		t.Errorf("digest = %q, %v", d1, err)
	}
}

func TestScanDeterministicAcrossWorkers(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		n := fmt.Sprintf("s%03d", i)
		files[fmt.Sprintf("g%d/%s/SKILL.md", i%7, n)] = md(n, "D.")
		if i%13 == 0 { // collisions in other groups
			files[fmt.Sprintf("g%d/x%s/SKILL.md", (i+3)%7, n)] = md(n, "dup")
		}
	}
	tree(t, dir, files)
	base := scanT(t, dir, Options{Workers: 1})
	for _, w := range []int{2, runtime.NumCPU() * 4, 64} {
		r := scanT(t, dir, Options{Workers: w})
		if diff := cmp.Diff(names(base), names(r)); diff != "" {
			t.Errorf("workers=%d skills differ:\n%s", w, diff)
		}
		if diff := cmp.Diff(base.Diagnostics, r.Diagnostics); diff != "" {
			t.Errorf("workers=%d diagnostics differ:\n%s", w, diff)
		}
	}
}

func TestRescanUsesCache(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a/SKILL.md": md("a", "Old."), "b/SKILL.md": md("b", "B.")})
	c := NewCache()
	r1 := scanT(t, dir, Options{Cache: c})
	// Make a's file unreadable: a cached rescan must not read it again
	// unless it changed.
	if err := os.WriteFile(filepath.Join(dir, "b", "SKILL.md"), []byte(md("b", "New description.")), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := scanT(t, dir, Options{Cache: c})
	if r1.Skills[0].Meta != r2.Skills[0].Meta {
		t.Error("unchanged skill a was parsed again")
	}
	if r2.Skills[1].Description != "New description." {
		t.Errorf("changed skill b not reparsed: %q", r2.Skills[1].Description)
	}
}

// TestRescanKeepsUnchangedSkills: a rescan with the cache gives back the
// same *skill.Skill for a skill whose SKILL.md and supporting files are
// unchanged, and a new one when anything it was built from changed, even
// a file rewritten at its old size with its modification time put back.
func TestRescanKeepsUnchangedSkills(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"a/SKILL.md": md("a", "A."), "a/references/r.md": "1234",
		"b/SKILL.md": md("b", "B."), "b/scripts/x.sh": "echo",
		"c/SKILL.md": md("c", "C."),
		"d/SKILL.md": md("d", "D."),
		"e/SKILL.md": md("e", "E."), "e/old.md": "old",
	})
	if err := os.Mkdir(filepath.Join(dir, "d", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewCache()
	opt := Options{Cache: c}
	byName := func(r *Result) map[string]*skill.Skill {
		m := map[string]*skill.Skill{}
		for _, sk := range r.Skills {
			m[sk.Name] = sk
		}
		return m
	}
	r1 := byName(scanT(t, dir, opt))
	r2 := byName(scanT(t, dir, opt))
	for name, sk := range r1 {
		if r2[name] != sk {
			t.Errorf("%s: an unchanged skill was built again", name)
		}
	}
	oldDigest, err := r1["a"].Digest("references/r.md")
	if err != nil {
		t.Fatal(err)
	}

	// a: same size, modification time put back (as cp -p does).
	ref := filepath.Join(dir, "a", "references", "r.md")
	fi, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a change time the file system can tell apart
	if err := os.WriteFile(ref, []byte("5678"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(ref, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	// b: made executable.
	if err := os.Chmod(filepath.Join(dir, "b", "scripts", "x.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// d: its empty folder gets a file.
	if err := os.WriteFile(filepath.Join(dir, "d", "empty", "n.md"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// e: a file renamed.
	if err := os.Rename(filepath.Join(dir, "e", "old.md"), filepath.Join(dir, "e", "new.md")); err != nil {
		t.Fatal(err)
	}
	r3 := byName(scanT(t, dir, opt))
	for _, name := range []string{"a", "b", "d", "e"} {
		if r3[name] == r2[name] {
			t.Errorf("%s: changed, but the rescan gave back the old skill", name)
		}
	}
	if r3["c"] != r2["c"] {
		t.Error("c: unchanged, but built again")
	}
	if got, _ := r3["a"].Digest("references/r.md"); got == oldDigest {
		t.Errorf("a: the new skill has the old digest %s", got)
	}
	if !r3["b"].Files[0].Executable {
		t.Error("b: the script is not marked executable")
	}
	if len(r3["d"].Dirs) != 0 || len(r3["d"].Files) != 1 {
		t.Errorf("d: dirs %v, files %v", r3["d"].Dirs, r3["d"].Files)
	}

	// ReloadSkill of an unchanged skill gives back the same one too.
	sk, _ := ReloadSkill(context.Background(), dir, filepath.Join(dir, "c"), opt)
	if sk != r3["c"] {
		t.Error("ReloadSkill built an unchanged skill again")
	}
	// Options the skill carries count: another MaxFileSize, another skill.
	opt2 := opt
	opt2.MaxFileSize = 1 << 20
	if r4 := byName(scanT(t, dir, opt2)); r4["c"] == r3["c"] || r4["c"].MaxFileSize != 1<<20 {
		t.Errorf("c: MaxFileSize %d after a scan with another limit", r4["c"].MaxFileSize)
	}
}

func TestReloadSkillAndKeepLastGood(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		".gitignore":          "*.tmp\n",
		"g/s/SKILL.md":        md("s", "First."),
		"g/s/notes.tmp":       "ignored",
		"g/s/references/a.md": "a",
	})
	c := NewCache()
	opt := Options{Cache: c, KeepBodies: true}
	r := scanT(t, dir, opt)
	if len(r.Skills) != 1 || len(r.Dirs) != 1 || r.Dirs[0] != filepath.Join(dir, "g", "s") {
		t.Fatalf("scan: %v %v", names(r), r.Dirs)
	}
	// An edit: only this skill is read again, with the root's ignore rules.
	testutil.Write(t, filepath.Join(dir, "g", "s", "SKILL.md"), md("s", "Second."))
	testutil.Write(t, filepath.Join(dir, "g", "s", "references", "b.md"), "b")
	sk, diags := ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt)
	if sk == nil || sk.Description != "Second." || len(diags) != 0 {
		t.Fatalf("reload: %+v %v", sk, diags)
	}
	var files []string
	for _, f := range sk.Files {
		files = append(files, f.Path)
	}
	if diff := cmp.Diff([]string{"references/a.md", "references/b.md"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// A broken edit keeps the last good version, body included, and says so.
	testutil.Write(t, filepath.Join(dir, "g", "s", "SKILL.md"), "---\nname: s\ndescription: [broken\n---\nnew body\n")
	sk, diags = ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt)
	if sk == nil || sk.Description != "Second." {
		t.Fatalf("broken edit dropped the skill: %+v %v", sk, diags)
	}
	if body, _ := sk.Body(); body != "# s\nbody\n" {
		t.Errorf("body of the last good version: %q", body)
	}
	if len(diags) != 1 || diags[0].Code != skill.CodeKeptLastGood || !strings.Contains(diags[0].Message, "yaml-invalid") {
		t.Errorf("diagnostics: %v", diags)
	}
	// A full rescan agrees.
	r = scanT(t, dir, opt)
	if len(r.Skills) != 1 || r.Skills[0].Description != "Second." || findDiag(r, skill.CodeKeptLastGood) == nil {
		t.Errorf("rescan: %v %v", names(r), r.Diagnostics)
	}
	// Fixed: the new version is served.
	testutil.Write(t, filepath.Join(dir, "g", "s", "SKILL.md"), md("s", "Third."))
	if sk, _ := ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt); sk == nil || sk.Description != "Third." {
		t.Errorf("fixed: %+v", sk)
	}
	// Removed: nil.
	testutil.Must(t, os.Remove(filepath.Join(dir, "g", "s", "SKILL.md")))
	if sk, _ := ReloadSkill(context.Background(), dir, filepath.Join(dir, "g", "s"), opt); sk != nil {
		t.Errorf("removed skill still loads")
	}
}

// TestDuplicateRealpathNamesTheLink: a link that sorts before the real
// folder it points to used to give a duplicate-realpath diagnostic whose
// winner and loser were the same (real) path. The winner is named as
// reached, through the link.
func TestDuplicateRealpathNamesTheLink(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"a-link":          "-> " + filepath.Join(dir, "b-real"),
		"b-real/SKILL.md": md("b-real", "B."),
	})
	r := scanT(t, dir, Options{})
	dup := findDiag(r, skill.CodeDuplicateSkill)
	if dup == nil {
		t.Fatalf("no duplicate-realpath diagnostic: %v", codes(r))
	}
	if dup.Winner == dup.Loser || !strings.HasSuffix(dup.Winner, filepath.Join("a-link", "SKILL.md")) || !strings.HasSuffix(dup.Loser, filepath.Join("b-real", "SKILL.md")) ||
		!strings.Contains(dup.Message, "a-link") {
		t.Errorf("winner %s, loser %s: %s", dup.Winner, dup.Loser, dup.Message)
	}
}

func TestScanRecordsEmptyFolders(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"s/SKILL.md":        md("s", "S."),
		"s/docs/guide.md":   "g",
		"s/scripts/x.py":    "x",
		"other/SKILL.md":    md("other", "O."),
		"other/notes/a.txt": "a",
	})
	for _, d := range []string{"s/empty", "s/docs/blank", "s/deep/er/est", "s/a-b", "s/.hidden-empty"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := scanT(t, dir, Options{})
	got := map[string][]string{}
	for _, sk := range r.Skills {
		got[sk.Name] = sk.Dirs
	}
	want := map[string][]string{"s": {"a-b", "deep/er/est", "docs/blank", "empty"}, "other": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("empty folders (-want +got):\n%s", diff)
	}

	// Folders count against max_files: with room for 3 entries the
	// listing stops there and says so.
	r = scanT(t, dir, Options{MaxFiles: 3})
	if findDiag(r, skill.CodeLimitFiles) == nil {
		t.Errorf("max_files 3: no %s diagnostic: %v", skill.CodeLimitFiles, codes(r))
	}
	for _, sk := range r.Skills {
		if n := len(sk.Files) + len(sk.Dirs); sk.Name == "s" && n > 3 {
			t.Errorf("max_files 3: %d files and empty folders listed", n)
		}
	}
}

// len is the number of entries of the cache.
func (c *Cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// The cache holds what the root holds: a complete rescan drops the
// entries of folders it no longer reaches; a scan cut short (cancelled,
// or at the max_dirs limit) drops nothing.
func TestCacheDropsWhatIsGone(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"a/SKILL.md": md("a", "A."), "b/SKILL.md": md("b", "B."), "g/c/SKILL.md": md("c", "C."),
	})
	other := t.TempDir()
	tree(t, other, map[string]string{"o/SKILL.md": md("o", "O.")})
	c := NewCache()
	opt := Options{Cache: c}
	scanT(t, dir, opt)
	scanT(t, other, opt)
	if n := c.len(); n != 4 {
		t.Fatalf("cache holds %d entries after scanning 4 skills", n)
	}
	if err := os.RemoveAll(filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "b"), filepath.Join(dir, "b2")); err != nil {
		t.Fatal(err)
	}
	// Cut short: nothing is dropped.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ScanFolder(ctx, dir, opt)
	limited := opt
	limited.MaxDirs = 1
	ScanFolder(context.Background(), dir, limited)
	if n := c.len(); n != 4 {
		t.Errorf("a scan cut short changed the cache to %d entries", n)
	}
	// Complete: c and the old b are gone, b2 is new, the other root's
	// entry stays.
	r := scanT(t, dir, opt)
	if len(r.Skills) != 2 {
		t.Fatalf("rescan: %v", names(r))
	}
	if n := c.len(); n != 3 {
		t.Errorf("cache holds %d entries after a rescan that found 2 skills (and 1 in the other root), want 3", n)
	}
	for _, gone := range []string{filepath.Join(dir, "g", "c", "SKILL.md"), filepath.Join(dir, "b", "SKILL.md")} {
		if c.has(gone) {
			t.Errorf("%s is still cached", gone)
		}
	}
	if !c.has(filepath.Join(other, "o", "SKILL.md")) {
		t.Error("the other root's entry was dropped")
	}
}
