package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestContentDigestCoversTheWholeSkill: a folder skill's digest used to
// cover SKILL.md only, so editing a script did not change it, and export
// (Bundle.Digest) printed another digest for the same skill. It is the
// bundle digest now: export and listing agree, and any file's bytes, path
// or executable bit change it.
func TestContentDigestCoversTheWholeSkill(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pdf")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: pdf\ndescription: PDF tools.\n---\n# PDF\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("#!/bin/sh\necho one\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "notes.md"), []byte("notes\n"), 0o644))
	digest := func() string {
		t.Helper()
		res := ScanFolder(context.Background(), root, Options{})
		if len(res.Skills) != 1 {
			t.Fatalf("want one skill, got %d: %+v", len(res.Skills), res.Diagnostics)
		}
		sk := res.Skills[0]
		d := sk.ContentDigest()
		b, err := sk.Bundle()
		if err != nil {
			t.Fatal(err)
		}
		if d == "" || d != b.Digest() {
			t.Fatalf("listing digest %q, export digest %q: they must be the same", d, b.Digest())
		}
		if again := sk.ContentDigest(); again != d {
			t.Fatalf("digest not stable: %s then %s", d, again)
		}
		return d
	}
	seen := map[string]string{}
	step := func(what string) {
		t.Helper()
		d := digest()
		if prev, ok := seen[d]; ok {
			t.Errorf("%s did not change the digest (same as after %s)", what, prev)
		}
		seen[d] = what
	}
	step("the first scan")
	must(os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("#!/bin/sh\necho two\n"), 0o755))
	step("editing the script")
	must(os.Chmod(filepath.Join(dir, "scripts", "run.sh"), 0o644))
	step("clearing the executable bit")
	must(os.Rename(filepath.Join(dir, "notes.md"), filepath.Join(dir, "notes2.md")))
	step("renaming a file")
	must(os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: pdf\ndescription: PDF tools, v2.\n---\n# PDF\n"), 0o644))
	step("editing SKILL.md")
}
