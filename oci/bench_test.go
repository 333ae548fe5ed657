package oci_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

// benchBundle is a skill of 50 text files of 20 KB (1 MB in all).
func benchBundle() *skill.Bundle {
	b := &skill.Bundle{Content: []byte(skillMD)}
	for i := 0; i < 50; i++ {
		b.Files = append(b.Files, skill.BundleFile{Path: fmt.Sprintf("references/r%02d.md", i), Data: []byte(strings.Repeat(fmt.Sprintf("line %d of a reference file\n", i), 700))})
	}
	return b
}

func BenchmarkPack(b *testing.B) {
	bundle := benchBundle()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := oci.Pack(bundle, oci.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnpack(b *testing.B) {
	a, err := oci.Pack(benchBundle(), oci.Meta{})
	if err != nil {
		b.Fatal(err)
	}
	f := blobs{a.Layer.Descriptor.Digest: a.Layer.Data, a.Config.Descriptor.Digest: a.Config.Data}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := oci.Unpack(context.Background(), f, a.Manifest.Data, oci.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
