package oci_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

func sampleBundle() *skill.Bundle {
	return &skill.Bundle{
		Content: []byte("---\nname: pdf-tools\ndescription: Fill PDF forms.\nlicense: MIT\nversion: 1.2.0\n---\n# PDF\n"),
		Files: []skill.BundleFile{
			{Path: "scripts/fill.sh", Data: []byte("#!/bin/sh\necho fill\n"), Executable: true},
			{Path: "references/forms.md", Data: []byte("# Forms\n")},
		},
	}
}

func TestPushPullRoundTripPlainHTTP(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	a, err := oci.Pack(sampleBundle(), oci.Meta{Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Source: "https://git.example.com/skills"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Push(ctx, reg.Ref("team/pdf-tools"), a, oci.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Ref.Tag != "1.2.0" || p.Manifest.Digest != a.Manifest.Descriptor.Digest {
		t.Fatalf("pushed %+v", p)
	}
	d, err := c.Resolve(ctx, reg.Ref("team/pdf-tools:1.2.0"))
	if err != nil || d.Digest != a.Manifest.Descriptor.Digest {
		t.Fatalf("resolve: %+v %v", d, err)
	}
	tags, err := c.Tags(ctx, reg.Ref("team/pdf-tools"), 0)
	if err != nil || len(tags) != 1 || tags[0] != "1.2.0" {
		t.Fatalf("tags %v %v", tags, err)
	}
	got, err := c.Pull(ctx, reg.Ref("team/pdf-tools:1.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != a.Manifest.Descriptor.Digest || got.Layout != oci.LayoutAgentSkills || got.Root != "pdf-tools" {
		t.Fatalf("pulled digest %s layout %s root %q", got.Digest, got.Layout, got.Root)
	}
	want := sampleBundle()
	if !bytes.Equal(got.Bundle.Content, want.Content) || len(got.Bundle.Files) != 2 {
		t.Fatalf("bundle %+v", got.Bundle)
	}
	for _, f := range got.Bundle.Files {
		switch f.Path {
		case "scripts/fill.sh":
			if !f.Executable || string(f.Data) != "#!/bin/sh\necho fill\n" {
				t.Errorf("fill.sh: %+v", f)
			}
		case "references/forms.md":
			if f.Executable || string(f.Data) != "# Forms\n" {
				t.Errorf("forms.md: %+v", f)
			}
		default:
			t.Errorf("unexpected %s", f.Path)
		}
	}
	if got.Meta.Version != "1.2.0" || got.Meta.License != "MIT" || got.Meta.Source != "https://git.example.com/skills" || !got.Meta.Created.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("meta %+v", got.Meta)
	}
	// By digest too.
	if _, err := c.Pull(ctx, reg.Ref("team/pdf-tools@"+a.Manifest.Descriptor.Digest)); err != nil {
		t.Fatal(err)
	}
}

func TestPlainHTTPRefusedWithoutInsecure(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	c, err := oci.NewClient(oci.Options{NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve(testutil.Context(t), reg.Ref("team/x:1"))
	if oci.CodeOf(err) != oci.CodePlainHTTP {
		t.Fatalf("got %v, want %s", err, oci.CodePlainHTTP)
	}
}

func TestTLSAndBasicAuth(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{TLS: true, Users: map[string]string{"alice": "s3cret"}})
	ctx := testutil.Context(t)
	a, err := oci.Pack(sampleBundle(), oci.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	// No credentials: refused by the registry.
	anon, err := oci.NewClient(oci.Options{NoDockerConfig: true, CAFile: reg.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Push(ctx, reg.Ref("team/pdf-tools:1"), a, oci.PushOptions{}); oci.CodeOf(err) != oci.CodeRegistry {
		t.Fatalf("anonymous push: %v", err)
	}
	// Wrong password: refused.
	bad, _ := oci.NewClient(oci.Options{NoDockerConfig: true, CAFile: reg.CAFile, Username: "alice", Password: "nope"})
	if _, err := bad.Push(ctx, reg.Ref("team/pdf-tools:1"), a, oci.PushOptions{}); err == nil {
		t.Fatal("a wrong password pushed")
	}
	// Untrusted certificate: refused.
	untrusted, _ := oci.NewClient(oci.Options{NoDockerConfig: true, Username: "alice", Password: "s3cret"})
	if _, err := untrusted.Resolve(ctx, reg.Ref("team/pdf-tools:1")); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	c, err := oci.NewClient(oci.Options{NoDockerConfig: true, CAFile: reg.CAFile, Username: "alice", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, reg.Ref("team/pdf-tools:1"), a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Pull(ctx, reg.Ref("team/pdf-tools:1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != a.Manifest.Descriptor.Digest {
		t.Fatalf("digest %s", got.Digest)
	}
}
