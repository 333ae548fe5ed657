package oci_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout/loadout/oci"
)

// The layouts as their tools write them (docs/oci.md cites the source of each).
func TestUnpackPublishedLayouts(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		build  func(b blobs) oci.Manifest
		layout oci.Layout
		root   string
		files  []string
		status string
	}{
		{"agentskills proposal, rooted at NAME/", func(b blobs) oci.Manifest {
			return oci.Manifest{ArtifactType: oci.ArtifactTypeSkill, MediaType: oci.MediaTypeImageManifest,
				Config: b.add(oci.MediaTypeSkillConfig, []byte(`{"name":"demo"}`)),
				Layers: []oci.Descriptor{b.add(oci.MediaTypeSkillContent, tarLayer(t, true,
					entry{name: "demo/", typ: tar.TypeDir, mode: 0o755}, entry{name: "demo/SKILL.md", data: skillMD}, entry{name: "demo/scripts/run.sh", data: "echo\n", mode: 0o755}))}}
		}, oci.LayoutAgentSkills, "demo", []string{"scripts/run.sh"}, ""},
		{"ACR: empty config, artifactType, org.agent.skill annotations", func(b blobs) oci.Manifest {
			return oci.Manifest{ArtifactType: oci.ArtifactTypeACRSkill, MediaType: oci.MediaTypeImageManifest,
				Config:      b.add(oci.MediaTypeEmptyJSON, []byte(`{}`)),
				Layers:      []oci.Descriptor{b.add(oci.MediaTypeACRSkillContent, tarLayer(t, true, entry{name: "SKILL.md", data: skillMD}, entry{name: "ref.md", data: "r"}))},
				Annotations: map[string]string{oci.AnnotationACRName: "demo", oci.AnnotationACRVersion: "2.0.0", "org.opencontainers.image.created": "2026-01-01T00:00:00Z"}}
		}, oci.LayoutACR, "", []string{"ref.md"}, ""},
		{"skillimage standard profile: an OCI image, skill.yaml beside SKILL.md", func(b blobs) oci.Manifest {
			return oci.Manifest{MediaType: oci.MediaTypeImageManifest,
				Config:      b.add(oci.MediaTypeImageConfig, []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)),
				Layers:      []oci.Descriptor{b.add(oci.MediaTypeImageLayerGzip, tarLayer(t, true, entry{name: "SKILL.md", data: skillMD}, entry{name: "skill.yaml", data: "apiVersion: skillimage.io/v1alpha1\n"}))},
				Annotations: map[string]string{oci.AnnotationSkillimageStatus: "draft", oci.AnnotationVersion: "1.0.0"}}
		}, oci.LayoutSkillimage, "", []string{"skill.yaml"}, "draft"},
		{"skillimage redhat profile", func(b blobs) oci.Manifest {
			return oci.Manifest{MediaType: oci.MediaTypeImageManifest,
				Config: b.add(oci.MediaTypeRedHatSkillConfig, []byte(`{}`)),
				Layers: []oci.Descriptor{b.add(oci.MediaTypeRedHatSkillLayer, tarLayer(t, true, entry{name: "SKILL.md", data: skillMD}))}}
		}, oci.LayoutSkillimage, "", nil, ""},
		{"a docker image FROM scratch (kagent), ./ names, uncompressed second layer", func(b blobs) oci.Manifest {
			return oci.Manifest{MediaType: oci.MediaTypeDockerManifest,
				Config: b.add(oci.MediaTypeDockerConfig, []byte(`{}`)),
				Layers: []oci.Descriptor{
					b.add(oci.MediaTypeDockerLayerGzip, tarLayer(t, true, entry{name: "./", typ: tar.TypeDir, mode: 0o755}, entry{name: "./SKILL.md", data: skillMD})),
					b.add(oci.MediaTypeImageLayer, tarLayer(t, false, entry{name: "scripts/", typ: tar.TypeDir, mode: 0o755}, entry{name: "scripts/x.py", data: "print(1)\n", mode: 0o755})),
				}}
		}, oci.LayoutImage, "", []string{"scripts/x.py"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := blobs{}
			m := manifestJSON(t, c.build(b))
			u, err := oci.Unpack(ctx, b, m, oci.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if u.Layout != c.layout || u.Root != c.root || string(u.Bundle.Content) != skillMD || u.Meta.Name != "demo" || u.Meta.Status != c.status {
				t.Fatalf("layout %s root %q meta %+v", u.Layout, u.Root, u.Meta)
			}
			var got []string
			for _, f := range u.Bundle.Files {
				got = append(got, f.Path)
				if strings.HasSuffix(f.Path, ".sh") || strings.HasSuffix(f.Path, ".py") {
					if !f.Executable {
						t.Errorf("%s lost its executable bit", f.Path)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(c.files, ",") {
				t.Fatalf("files %v, want %v", got, c.files)
			}
		})
	}
}

func TestUnpackRefusesUnknownLayouts(t *testing.T) {
	for _, m := range []oci.Manifest{
		{Config: oci.Descriptor{MediaType: "application/vnd.cncf.helm.config.v1+json", Digest: sha([]byte("{}")), Size: 2}},
		{Config: oci.Descriptor{MediaType: oci.MediaTypeImageConfig, Digest: sha([]byte("{}")), Size: 2}, Layers: []oci.Descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+zstd", Digest: sha([]byte("x")), Size: 1}}},
		{ArtifactType: oci.ArtifactTypeSkill, Config: oci.Descriptor{MediaType: oci.MediaTypeEmptyJSON, Digest: sha([]byte("{}")), Size: 2}},
	} {
		_, err := oci.Unpack(context.Background(), blobs{}, manifestJSON(t, m), oci.Limits{})
		if oci.CodeOf(err) != oci.CodeLayout {
			t.Errorf("%+v: %v", m, err)
		}
	}
}

func TestPickManifest(t *testing.T) {
	d := func(n string, p *oci.Platform, mt string) oci.Descriptor {
		return oci.Descriptor{MediaType: mt, Digest: sha([]byte(n)), Size: 100, Platform: p}
	}
	idx := func(ds ...oci.Descriptor) []byte {
		b, _ := json.Marshal(oci.Index{SchemaVersion: 2, MediaType: oci.MediaTypeImageIndex, Manifests: ds})
		return b
	}
	arm := &oci.Platform{OS: "linux", Architecture: "arm64"}
	amd := &oci.Platform{OS: "linux", Architecture: "amd64"}
	win := &oci.Platform{OS: "windows", Architecture: "amd64"}
	att := d("att", &oci.Platform{OS: "unknown", Architecture: "unknown"}, oci.MediaTypeImageManifest)
	att.Annotations = map[string]string{"vnd.docker.reference.type": "attestation-manifest"}
	for _, c := range []struct {
		name string
		data []byte
		want string
		code string
	}{
		{"neutral first", idx(d("a", arm, oci.MediaTypeImageManifest), d("n", nil, oci.MediaTypeImageManifest)), sha([]byte("n")), ""},
		{"linux/amd64 before other linux", idx(d("a", arm, oci.MediaTypeImageManifest), d("b", amd, oci.MediaTypeImageManifest)), sha([]byte("b")), ""},
		{"other linux", idx(att, d("w", win, oci.MediaTypeImageManifest), d("a", arm, oci.MediaTypeImageManifest)), sha([]byte("a")), ""},
		{"windows only", idx(d("w", win, oci.MediaTypeImageManifest)), "", oci.CodeIndex},
		{"nested index", idx(d("i", nil, oci.MediaTypeImageIndex)), "", oci.CodeIndex},
		{"manifest over the bound", idx(oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha([]byte("big")), Size: 1<<20 + 1}), "", oci.CodeTooLarge},
		{"manifest at the bound", idx(oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha([]byte("big")), Size: 1 << 20}), sha([]byte("big")), ""},
	} {
		got, err := oci.PickManifest(c.data, oci.Limits{})
		if oci.CodeOf(err) != c.code || (c.code == "" && got.Digest != c.want) {
			t.Errorf("%s: got %s, %v", c.name, got.Digest, err)
		}
	}
	// The entry count bound: at the limit and one past.
	var many []oci.Descriptor
	for i := 0; i < 64; i++ {
		many = append(many, d(string(rune('a'+i%26))+string(rune(i)), arm, oci.MediaTypeImageManifest))
	}
	if _, err := oci.PickManifest(idx(many...), oci.Limits{}); err != nil {
		t.Errorf("64 entries: %v", err)
	}
	many = append(many, d("last", arm, oci.MediaTypeImageManifest))
	if _, err := oci.PickManifest(idx(many...), oci.Limits{}); oci.CodeOf(err) != oci.CodeIndex {
		t.Errorf("65 entries: %v", err)
	}
}
