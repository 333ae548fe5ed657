package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
)

// ociTree maps every file under dir to its bytes and mode bits.
func ociTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fi.Mode().Perm().String() + " " + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeSkillFolder(t *testing.T, dir string) {
	t.Helper()
	testutil.Mkdir(t, filepath.Join(dir, "scripts"))
	testutil.Mkdir(t, filepath.Join(dir, "references", "deep"))
	testutil.Write(t, filepath.Join(dir, "SKILL.md"), "---\nname: pdf-tools\ndescription: Fill PDF forms. Use when a PDF form must be filled.\nversion: 1.2.0\nlicense: MIT\n---\n# PDF\n")
	testutil.WriteBytes(t, filepath.Join(dir, "scripts", "fill.sh"), []byte("#!/bin/sh\necho fill\n"), 0o755)
	testutil.Write(t, filepath.Join(dir, "references", "deep", "forms.md"), "# Forms\n")
	testutil.WriteBytes(t, filepath.Join(dir, "references", "logo.bin"), []byte{0, 1, 2, 0xff, 0xfe}, 0o644)
}

// The round trip folder -> push -> pull -> folder is byte-identical,
// executable bits included; pushing again gives the same digest.
func TestPushPullFolderRoundTrip(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	src := filepath.Join(t.TempDir(), "pdf-tools")
	writeSkillFolder(t, src)
	env := func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return "1700000000"
		}
		return ""
	}
	r := runCLIEnv(t, env, "push", src, reg.Ref("team/pdf-tools"), "--insecure")
	if r.code != 0 {
		t.Fatalf("push: %d %s", r.code, r.stderr)
	}
	ref := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(ref, reg.Ref("team/pdf-tools:1.2.0@sha256:")) {
		t.Fatalf("push printed %q", ref)
	}
	again := runCLIEnv(t, env, "push", src, reg.Ref("team/pdf-tools:again"), "--insecure")
	if again.code != 0 || strings.Split(strings.TrimSpace(again.stdout), "@")[1] != strings.Split(ref, "@")[1] {
		t.Fatalf("a second push of the same folder: %q vs %q (%s)", again.stdout, ref, again.stderr)
	}
	dst := filepath.Join(t.TempDir(), "out")
	p := runCLI(t, "pull", reg.Ref("team/pdf-tools:1.2.0"), dst, "--insecure")
	if p.code != 0 || strings.TrimSpace(p.stdout) != ref {
		t.Fatalf("pull: %d %q %s", p.code, p.stdout, p.stderr)
	}
	want, got := ociTree(t, src), ociTree(t, dst)
	if len(want) != len(got) {
		t.Fatalf("pulled %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: pulled %q, want %q", k, got[k], v)
		}
	}
	// Pull refuses a folder that is not empty.
	if p := runCLI(t, "pull", reg.Ref("team/pdf-tools:1.2.0"), dst, "--insecure"); p.code == 0 {
		t.Fatal("pull wrote into a folder that is not empty")
	}
	// Without --insecure, plain HTTP is refused, with the code.
	if p := runCLI(t, "pull", reg.Ref("team/pdf-tools:1.2.0"), t.TempDir()); p.code != 1 || !strings.Contains(p.stderr, oci.CodePlainHTTP) {
		t.Fatalf("plain HTTP without --insecure: %d %s", p.code, p.stderr)
	}
}

// A stored version pushes to the same manifest every time (its creation
// time is the created annotation); @VERSION picks an older one.
func TestPushStoredVersion(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{TLS: true, Users: map[string]string{"ci": "tok"}})
	dir := t.TempDir()
	db := filepath.Join(dir, "loadout.db")
	src := filepath.Join(dir, "pdf-tools")
	writeSkillFolder(t, src)
	if r := runCLI(t, "import", "--db", db, src); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	testutil.Write(t, filepath.Join(src, "SKILL.md"), "---\nname: pdf-tools\ndescription: Fill PDF forms. Use when a PDF form must be filled.\nversion: 1.3.0\n---\n# PDF v2\n")
	if r := runCLI(t, "import", "--db", db, src); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	env := func(k string) string {
		if k == "REG_PASSWORD" {
			return "tok"
		}
		return ""
	}
	args := []string{"--db", db, "--ca-file", reg.CAFile, "--username", "ci", "--password-env", "REG_PASSWORD"}
	r1 := runCLIEnv(t, env, append([]string{"push", "pdf-tools@1", reg.Ref("team/pdf-tools")}, args...)...)
	r2 := runCLIEnv(t, env, append([]string{"push", "pdf-tools@1", reg.Ref("team/pdf-tools")}, args...)...)
	if r1.code != 0 || r2.code != 0 || r1.stdout != r2.stdout || !strings.Contains(r1.stdout, ":1.2.0@sha256:") {
		t.Fatalf("push @1 twice: %q %q %s %s", r1.stdout, r2.stdout, r1.stderr, r2.stderr)
	}
	cur := runCLIEnv(t, env, append([]string{"push", "pdf-tools", reg.Ref("team/pdf-tools")}, args...)...)
	if cur.code != 0 || !strings.Contains(cur.stdout, ":1.3.0@sha256:") {
		t.Fatalf("push current: %q %s", cur.stdout, cur.stderr)
	}
	// The password comes from the environment only; a missing one is named.
	if r := runCLI(t, append([]string{"push", "pdf-tools", reg.Ref("team/pdf-tools")}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "REG_PASSWORD") {
		t.Fatalf("an unset password variable: %d %s", r.code, r.stderr)
	}
	// --sign without a signer built in is refused before anything is pushed.
	if newSigner == nil {
		if r := runCLIEnv(t, env, append([]string{"push", "pdf-tools", reg.Ref("team/pdf-tools:signed"), "--sign", "cosign.key"}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "--sign") {
			t.Fatalf("--sign: %d %s", r.code, r.stderr)
		}
	}
	// An unknown skill is named.
	if r := runCLIEnv(t, env, append([]string{"push", "nope", reg.Ref("team/nope:1")}, args...)...); r.code != 1 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("unknown skill: %d %s", r.code, r.stderr)
	}
}
