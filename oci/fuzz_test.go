package oci_test

import (
	"archive/tar"
	"context"
	"testing"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/skill"
)

// FuzzUnpack feeds any bytes to Unpack as an image layer (tar, or gzip
// when they start as gzip), under small limits: it never panics, and what
// it accepts is a skill whose every path passes skill.CleanPath unchanged
// and whose files fit the limits.
func FuzzUnpack(f *testing.F) {
	f.Add(tarLayer(f, false, entry{name: "SKILL.md", data: skillMD}))
	f.Add(tarLayer(f, true, entry{name: "demo/", typ: tar.TypeDir, mode: 0o755}, entry{name: "demo/SKILL.md", data: skillMD}, entry{name: "demo/run.sh", data: "echo\n", mode: 0o755}))
	f.Add(tarLayer(f, false, entry{name: "SKILL.md", data: skillMD}, entry{name: "l", typ: tar.TypeSymlink, linkname: "SKILL.md"}, entry{name: "h", typ: tar.TypeLink, linkname: "../x"}))
	f.Add(tarLayer(f, false, entry{name: "SKILL.md", data: skillMD}, entry{name: "a/../b", data: "x"}, entry{name: "/abs", data: "y"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
	lim := oci.Limits{MaxFileBytes: 4096, MaxTotalBytes: 16384, MaxFiles: 16, MaxEntries: 64, MaxUnpackedBytes: 1 << 16, MaxLayerBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, layer []byte) {
		b := blobs{}
		mt := oci.MediaTypeImageLayer
		if len(layer) > 1 && layer[0] == 0x1f && layer[1] == 0x8b {
			mt = oci.MediaTypeImageLayerGzip
		}
		m := manifestJSON(t, oci.Manifest{MediaType: oci.MediaTypeImageManifest,
			Config: b.add(oci.MediaTypeImageConfig, []byte(`{}`)), Layers: []oci.Descriptor{b.add(mt, layer)}})
		u, err := oci.Unpack(context.Background(), b, m, lim)
		if err != nil {
			if oci.CodeOf(err) == "" {
				t.Fatalf("an error without a code: %v", err)
			}
			return
		}
		if len(u.Bundle.Files)+1 > lim.MaxFiles {
			t.Fatalf("%d files accepted", len(u.Bundle.Files)+1)
		}
		total := int64(len(u.Bundle.Content))
		for _, f := range u.Bundle.Files {
			if c, err := skill.CleanPath(f.Path); err != nil || c != f.Path {
				t.Fatalf("path %q accepted (%v)", f.Path, err)
			}
			if int64(len(f.Data)) > lim.MaxFileBytes {
				t.Fatalf("%s: %d bytes accepted", f.Path, len(f.Data))
			}
			total += int64(len(f.Data))
		}
		if total > lim.MaxTotalBytes {
			t.Fatalf("%d bytes accepted", total)
		}
	})
}
