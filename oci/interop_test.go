package oci_test

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

// The interop runs build oras and crane from the module proxy (compat/oras,
// compat/crane) and are asked for with LOADOUT_OCI_INTEROP=1: each cold
// build takes over 90 s of wall time on a shared 2-core machine (docs/testing.md).
// CI replays the artifacts they made, kept in testdata/interop
// (TestInteropGolden), against the same real registry.
func interopTool(t *testing.T, dir, pkg string) string {
	t.Helper()
	if os.Getenv("LOADOUT_OCI_INTEROP") != "1" {
		t.Skip("LOADOUT_OCI_INTEROP=1 builds oras and crane and runs them against a real registry (docs/testing.md); TestInteropGolden replays what they made")
	}
	return testutil.GoTool(t, dir, pkg)
}

func run(t *testing.T, dir string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
	}
	return out.String()
}

// interopSkill writes a skill folder with an executable script and a
// binary file, and returns its path.
func interopSkill(t *testing.T, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, "pdf-tools")
	testutil.Mkdir(t, filepath.Join(dir, "scripts"))
	testutil.Mkdir(t, filepath.Join(dir, "references"))
	testutil.Write(t, filepath.Join(dir, "SKILL.md"), "---\nname: pdf-tools\ndescription: Fill PDF forms.\nversion: 1.2.0\n---\n# PDF\n")
	testutil.WriteBytes(t, filepath.Join(dir, "scripts", "fill.sh"), []byte("#!/bin/sh\necho fill\n"), 0o755)
	testutil.WriteBytes(t, filepath.Join(dir, "references", "table.bin"), []byte{0, 1, 2, 0xff}, 0o644)
	return dir
}

// sameAsFolder checks that b holds exactly the folder's files, bytes and
// executable bits.
func sameAsFolder(t *testing.T, dir string, b *skill.Bundle) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if err != nil || !bytes.Equal(want, b.Content) {
		t.Fatalf("SKILL.md: %q, want %q", b.Content, want)
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "SKILL.md" && filepath.Dir(p) == dir {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, p)
		fi, _ := d.Info()
		data, _ := os.ReadFile(p)
		for _, f := range b.Files {
			if f.Path == filepath.ToSlash(rel) {
				if !bytes.Equal(f.Data, data) || f.Executable != (fi.Mode()&0o111 != 0) {
					t.Errorf("%s: %q exec %v, want %q exec %v", rel, f.Data, f.Executable, data, fi.Mode()&0o111 != 0)
				}
				return nil
			}
		}
		t.Errorf("%s is missing", rel)
		return nil
	})
	if err != nil || n != len(b.Files) {
		t.Fatalf("%d files, want %d (%v)", len(b.Files), n, err)
	}
}

// saveGolden keeps an artifact a real client pushed, for TestInteropGolden.
func saveGolden(t *testing.T, name string, c *oci.Client, ref string) {
	t.Helper()
	if os.Getenv("LOADOUT_OCI_GOLDEN") != "1" {
		return
	}
	ctx := testutil.Context(t)
	d, m, err := c.FetchManifest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := oci.ParseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "interop", name)
	testutil.Must(t, os.MkdirAll(filepath.Join(dir, "blobs"), 0o755))
	testutil.WriteBytes(t, filepath.Join(dir, "manifest.json"), m, 0o644)
	testutil.Write(t, filepath.Join(dir, "manifest.mediatype"), d.MediaType)
	for _, l := range append([]oci.Descriptor{mf.Config}, mf.Layers...) {
		b, err := c.FetchBlob(ctx, ref, l, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		testutil.WriteBytes(t, filepath.Join(dir, "blobs", strings.TrimPrefix(l.Digest, "sha256:")), b, 0o644)
	}
}

func TestInteropOras(t *testing.T) {
	oras := interopTool(t, "compat/oras", "oras.land/oras/cmd/oras")
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	work := t.TempDir()
	src := interopSkill(t, work)

	// oras pushes a skill folder as the proposal's layout; loadout pulls it.
	run(t, work, oras, "push", "--plain-http", "--artifact-type", oci.ArtifactTypeSkill, reg.Ref("team/pdf-tools:oras"), "pdf-tools/:"+oci.MediaTypeSkillContent)
	p, err := c.Pull(ctx, reg.Ref("team/pdf-tools:oras"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Layout != oci.LayoutAgentSkills || p.Root != "pdf-tools" {
		t.Fatalf("layout %s root %q", p.Layout, p.Root)
	}
	sameAsFolder(t, src, p.Bundle)
	saveGolden(t, "oras-push", c, reg.Ref("team/pdf-tools:oras"))

	// ACR's layout, pushed with oras as ACR's documentation says.
	run(t, work, oras, "push", "--plain-http", "--artifact-type", oci.ArtifactTypeACRSkill, "--annotation", oci.AnnotationACRName+"=pdf-tools", "--annotation", oci.AnnotationACRVersion+"=1.2.0",
		reg.Ref("team/pdf-tools:acr"), "pdf-tools/:"+oci.MediaTypeACRSkillContent)
	p, err = c.Pull(ctx, reg.Ref("team/pdf-tools:acr"))
	if err != nil || p.Layout != oci.LayoutACR || p.Meta.Version != "1.2.0" {
		t.Fatalf("ACR layout: %v %+v", err, p)
	}
	sameAsFolder(t, src, p.Bundle)
	saveGolden(t, "oras-acr", c, reg.Ref("team/pdf-tools:acr"))

	// loadout pushes; oras pulls the same bytes.
	a, err := oci.PackDir(src, oci.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, reg.Ref("team/pdf-tools:loadout"), a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	run(t, out, oras, "pull", "--plain-http", "-o", out, reg.Ref("team/pdf-tools:loadout"))
	layer, err := os.ReadFile(filepath.Join(out, "pdf-tools.tar.gz"))
	if err != nil || !bytes.Equal(layer, a.Layer.Data) {
		t.Fatalf("oras pulled a layer of %d bytes (%v), loadout pushed %d", len(layer), err, len(a.Layer.Data))
	}
	if m := run(t, out, oras, "manifest", "fetch", "--plain-http", reg.Ref("team/pdf-tools:loadout")); m != string(a.Manifest.Data) {
		t.Fatalf("oras fetched the manifest\n%s\nloadout pushed\n%s", m, a.Manifest.Data)
	}
}

func TestInteropCrane(t *testing.T) {
	crane := interopTool(t, "compat/crane", "github.com/google/go-containerregistry/cmd/crane")
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	work := t.TempDir()
	src := interopSkill(t, work)

	// crane appends the skill folder to an empty image (kagent's and
	// skillimage's shape: an image whose layer holds the skill); loadout pulls it.
	tarPath := filepath.Join(work, "skill.tar")
	testutil.WriteBytes(t, tarPath, folderTar(t, src), 0o644)
	run(t, work, crane, "append", "--insecure", "--oci-empty-base", "-f", tarPath, "-t", reg.Ref("team/pdf-tools:crane"))
	p, err := c.Pull(ctx, reg.Ref("team/pdf-tools:crane"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Layout != oci.LayoutImage || p.Root != "" {
		t.Fatalf("layout %s root %q", p.Layout, p.Root)
	}
	sameAsFolder(t, src, p.Bundle)
	saveGolden(t, "crane-append", c, reg.Ref("team/pdf-tools:crane"))

	// loadout pushes; crane reads the same bytes.
	a, err := oci.PackDir(src, oci.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, reg.Ref("team/pdf-tools:loadout"), a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := run(t, work, crane, "manifest", "--insecure", reg.Ref("team/pdf-tools:loadout")); m != string(a.Manifest.Data) {
		t.Fatalf("crane fetched the manifest\n%s\nloadout pushed\n%s", m, a.Manifest.Data)
	}
	if b := run(t, work, crane, "blob", "--insecure", reg.Ref("team/pdf-tools@"+a.Layer.Descriptor.Digest)); b != string(a.Layer.Data) {
		t.Fatalf("crane fetched a layer of %d bytes, loadout pushed %d", len(b), len(a.Layer.Data))
	}
	if d := strings.TrimSpace(run(t, work, crane, "digest", "--insecure", reg.Ref("team/pdf-tools:loadout"))); d != a.Manifest.Descriptor.Digest {
		t.Fatalf("crane digest %s, loadout %s", d, a.Manifest.Descriptor.Digest)
	}
	// crane copies loadout's artifact to another repository; loadout pulls the copy.
	run(t, work, crane, "copy", "--insecure", reg.Ref("team/pdf-tools:loadout"), reg.Ref("mirror/pdf-tools:copied"))
	cp, err := c.Pull(ctx, reg.Ref("mirror/pdf-tools:copied"))
	if err != nil || cp.Digest != a.Manifest.Descriptor.Digest {
		t.Fatalf("the copy: %v", err)
	}
	sameAsFolder(t, src, cp.Bundle)
}

// folderTar tars a folder's files at the tar's top, modes kept.
func folderTar(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, _ := d.Info()
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			tw.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return buf.Bytes()
}
