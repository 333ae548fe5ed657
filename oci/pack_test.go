package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

func TestPackIsReproducible(t *testing.T) {
	a1, err := oci.Pack(sampleBundle(), oci.Meta{Created: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// The same files in another order, another day: the same layer.
	b := sampleBundle()
	b.Files[0], b.Files[1] = b.Files[1], b.Files[0]
	a2, err := oci.Pack(b, oci.Meta{Created: time.Unix(1800000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if a1.Layer.Descriptor.Digest != a2.Layer.Descriptor.Digest || !bytes.Equal(a1.Layer.Data, a2.Layer.Data) {
		t.Fatalf("layer digests differ: %s %s", a1.Layer.Descriptor.Digest, a2.Layer.Descriptor.Digest)
	}
	if a1.Manifest.Descriptor.Digest == a2.Manifest.Descriptor.Digest {
		t.Fatal("manifests with different created dates have one digest")
	}
	// The same date: the same manifest, byte for byte.
	a3, _ := oci.Pack(sampleBundle(), oci.Meta{Created: time.Unix(1700000000, 0)})
	if !bytes.Equal(a1.Manifest.Data, a3.Manifest.Data) {
		t.Fatal("the same skill and date gave two manifests")
	}
	// One changed bit (the executable bit) changes the layer.
	c := sampleBundle()
	c.Files[0].Executable = false
	a4, _ := oci.Pack(c, oci.Meta{})
	if a4.Layer.Descriptor.Digest == a1.Layer.Descriptor.Digest {
		t.Fatal("dropping an executable bit kept the layer digest")
	}

	// The gzip header: no name, no time, OS unknown.
	zr, err := gzip.NewReader(bytes.NewReader(a1.Layer.Data))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() || zr.OS != 255 {
		t.Errorf("gzip header %+v", zr.Header)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d gid %d uname %q gname %q mtime %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		wantMode := map[string]int64{"pdf-tools/": 0o755, "pdf-tools/SKILL.md": 0o644, "pdf-tools/references/": 0o755,
			"pdf-tools/references/forms.md": 0o644, "pdf-tools/scripts/": 0o755, "pdf-tools/scripts/fill.sh": 0o755}[h.Name]
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
	}
	want := []string{"pdf-tools/", "pdf-tools/SKILL.md", "pdf-tools/references/", "pdf-tools/references/forms.md", "pdf-tools/scripts/", "pdf-tools/scripts/fill.sh"}
	if len(names) != len(want) {
		t.Fatalf("entries %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("entries %v, want %v", names, want)
		}
	}
}

func TestPackManifest(t *testing.T) {
	a, err := oci.Pack(sampleBundle(), oci.Meta{Created: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Source: "https://git.example.com/s", Revision: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	var m oci.Manifest
	if err := json.Unmarshal(a.Manifest.Data, &m); err != nil {
		t.Fatal(err)
	}
	if m.MediaType != oci.MediaTypeImageManifest || m.ArtifactType != oci.ArtifactTypeSkill || m.Config.MediaType != oci.MediaTypeSkillConfig ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != oci.MediaTypeSkillContent || m.Layers[0].Annotations[oci.AnnotationTitle] != "pdf-tools.tar.gz" {
		t.Fatalf("manifest %s", a.Manifest.Data)
	}
	want := map[string]string{
		oci.AnnotationTitle: "pdf-tools", oci.AnnotationSkillName: "pdf-tools", oci.AnnotationVersion: "1.2.0",
		oci.AnnotationDescription: "Fill PDF forms.", oci.AnnotationLicenses: "MIT", oci.AnnotationCreated: "2026-03-04T05:06:07Z",
		oci.AnnotationSource: "https://git.example.com/s", oci.AnnotationRevision: "abc",
	}
	if len(m.Annotations) != len(want) {
		t.Errorf("annotations %v", m.Annotations)
	}
	for k, v := range want {
		if m.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, m.Annotations[k], v)
		}
	}
	var cfg map[string]any
	if err := json.Unmarshal(a.Config.Data, &cfg); err != nil || cfg["name"] != "pdf-tools" || cfg["version"] != "1.2.0" {
		t.Errorf("config %s", a.Config.Data)
	}
	// A name that is not the frontmatter's is refused.
	if _, err := oci.Pack(sampleBundle(), oci.Meta{Name: "other"}); oci.CodeOf(err) != oci.CodeBadSkill {
		t.Errorf("another name: %v", err)
	}
	// A bundle that fails the format's checks is refused.
	if _, err := oci.Pack(&skill.Bundle{Content: []byte("no frontmatter")}, oci.Meta{}); oci.CodeOf(err) != oci.CodeBadSkill {
		t.Errorf("a bad bundle: %v", err)
	}
}
