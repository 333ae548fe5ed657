package portable

import (
	"archive/zip"
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const testSkill = "testdata/roundtrip/pdf-tools"

// fileState is what a round trip must keep of a file.
type fileState struct {
	data []byte
	exec bool
}

// readTree reads every regular file under dir with plain os calls, as the
// independent reference the importers are compared with.
func readTree(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fileState{data, info.Mode().Perm()&0o111 != 0}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func bundleTree(b *skill.Bundle) map[string]fileState {
	out := map[string]fileState{"SKILL.md": {b.Content, false}}
	for _, f := range b.Files {
		out[f.Path] = fileState{f.Data, f.Executable}
	}
	return out
}

func compareTrees(t *testing.T, step string, want, got map[string]fileState) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: %s is missing", step, p)
		case !bytes.Equal(w.data, g.data):
			t.Errorf("%s: %s differs: %d bytes, want %d", step, p, len(g.data), len(w.data))
		case runtime.GOOS != "windows" && w.exec != g.exec:
			t.Errorf("%s: %s executable = %v, want %v", step, p, g.exec, w.exec)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: unexpected file %s", step, p)
		}
	}
}

func loadTestSkill(t testing.TB) *skill.Bundle {
	t.Helper()
	b, err := ImportDir(testSkill)
	if err != nil {
		t.Fatalf("ImportDir: %v", err)
	}
	return b
}

// The test skill must reach the test as committed: git keeps the x bit,
// .gitattributes keeps CRLF and Latin-1 bytes.
func TestTestSkillAsCommitted(t *testing.T) {
	tree := readTree(t, testSkill)
	if runtime.GOOS != "windows" {
		for _, p := range []string{"scripts/fill_form.py", "scripts/merge.sh"} {
			if !tree[p].exec {
				t.Errorf("%s is not executable in the checkout: commit it with chmod +x", p)
			}
		}
		if tree["scripts/common.py"].exec {
			t.Errorf("scripts/common.py is executable; it must not be, to test both modes")
		}
	}
	if !bytes.Contains(tree["references/api.md"].data, []byte("\r\n")) {
		t.Errorf("references/api.md lost its CRLF line ends (check .gitattributes)")
	}
	if _, ok := tree["templates/forms/tax/us/federal/2025/q4/w9-fields.json"]; !ok {
		t.Errorf("the file 7 folders deep is missing")
	}
	if _, ok := tree["references/glossaire-été-日本.md"]; !ok {
		t.Errorf("the file with a non-ASCII name is missing")
	}
}

// folder → JSON → bundle → zip → folder, comparing bytes, modes and
// digests at every step.
func TestRoundTrip(t *testing.T) {
	want := readTree(t, testSkill)
	b1 := loadTestSkill(t)
	compareTrees(t, "ImportDir", want, bundleTree(b1))
	digest := b1.Digest()
	bins := 0
	for _, f := range b1.Files {
		if f.Binary {
			bins++
		}
	}
	if bins < 3 { // logo.png, sample.pdf, latin1.txt
		t.Errorf("the test skill has %d binary files, want at least 3", bins)
	}

	js, err := ExportJSON(b1, ExportMeta{ExportedAt: time.Unix(0, 0), ExportedFrom: "test"})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := ImportJSON(js)
	if err != nil {
		t.Fatalf("ImportJSON: %v", err)
	}
	compareTrees(t, "JSON", want, bundleTree(b2))
	if d := b2.Digest(); d != digest {
		t.Errorf("digest after JSON = %s, want %s", d, digest)
	}

	var zbuf bytes.Buffer
	if err := ExportZip(&zbuf, "", b2); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "pdf-tools/") {
			t.Errorf("zip entry %s is not under pdf-tools/", f.Name)
		}
		rel := strings.TrimPrefix(f.Name, "pdf-tools/")
		wantMode := fs.FileMode(0o644)
		if want[rel].exec {
			wantMode = 0o755
		}
		if f.Mode() != wantMode {
			t.Errorf("zip entry %s has mode %v, want %v", f.Name, f.Mode(), wantMode)
		}
	}
	b3, err := ImportZip(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()), ZipLimits{})
	if err != nil {
		t.Fatalf("ImportZip: %v", err)
	}
	compareTrees(t, "zip", want, bundleTree(b3))
	if d := b3.Digest(); d != digest {
		t.Errorf("digest after zip = %s, want %s", d, digest)
	}

	out := filepath.Join(t.TempDir(), "out", "pdf-tools")
	if err := ExportDir(out, b3); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "ExportDir", want, readTree(t, out))
	if runtime.GOOS != "windows" {
		for p, w := range want {
			info, err := os.Stat(filepath.Join(out, filepath.FromSlash(p)))
			if err != nil {
				t.Fatal(err)
			}
			wantMode := fs.FileMode(0o644)
			if w.exec {
				wantMode = 0o755
			}
			if info.Mode().Perm() != wantMode {
				t.Errorf("ExportDir: %s has mode %v, want %v", p, info.Mode().Perm(), wantMode)
			}
		}
	}
	b4, err := ImportDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := b4.Digest(); d != digest {
		t.Errorf("digest after the folder = %s, want %s", d, digest)
	}
}

func TestExportJSONGolden(t *testing.T) {
	b := loadTestSkill(t)
	got, err := ExportJSON(b, ExportMeta{
		ExportedAt:   time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC),
		ExportedFrom: "loadout",
		Origin:       &skill.Origin{Kind: "store", Version: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "pdf-tools.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./portable -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ExportJSON differs from %s (run go test ./portable -update and review the diff)\n%s", golden, got)
	}
	// The golden document imports to the same skill, origin included.
	b2, meta, err := ImportJSONMeta(want)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Digest() != b.Digest() || meta.Origin == nil || meta.Origin.Version != 3 || meta.ExportedFrom != "loadout" ||
		!meta.ExportedAt.Equal(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)) || meta.Digest != b.Digest() {
		t.Errorf("golden import: digest %s, meta %+v", b2.Digest(), meta)
	}
	// Exporting does not change the caller's bundle, and is deterministic.
	again, err := ExportJSON(b, ExportMeta{ExportedAt: time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC), ExportedFrom: "loadout", Origin: &skill.Origin{Kind: "store", Version: 3}})
	if err != nil || !bytes.Equal(again, got) {
		t.Errorf("second export differs (err %v)", err)
	}
}

func TestExportZipDeterministic(t *testing.T) {
	b := loadTestSkill(t)
	var z1, z2 bytes.Buffer
	if err := ExportZip(&z1, "pdf-tools", b); err != nil {
		t.Fatal(err)
	}
	// A second bundle read afresh, with its files in another order.
	b2 := loadTestSkill(t)
	for i, j := 0, len(b2.Files)-1; i < j; i, j = i+1, j-1 {
		b2.Files[i], b2.Files[j] = b2.Files[j], b2.Files[i]
	}
	if err := ExportZip(&z2, "pdf-tools", b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(z1.Bytes(), z2.Bytes()) {
		t.Fatal("two zip exports of the same skill differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(z1.Bytes()), int64(z1.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if zr.File[0].Name != "pdf-tools/SKILL.md" {
		t.Errorf("first entry %s, want pdf-tools/SKILL.md", zr.File[0].Name)
	}
	for i, f := range zr.File {
		if !f.Modified.Equal(zipTime) {
			t.Errorf("%s modified %v", f.Name, f.Modified)
		}
		if i > 1 && f.Name < zr.File[i-1].Name {
			t.Errorf("entries out of order: %s after %s", f.Name, zr.File[i-1].Name)
		}
	}
}

func TestExportZipStoresHighlyCompressible(t *testing.T) {
	b := &skill.Bundle{Content: []byte("---\nname: blanks\ndescription: A large file of blanks.\n---\n"),
		Files: []skill.BundleFile{{Path: "blank.txt", Data: bytes.Repeat([]byte(" "), 900_000)}}}
	var buf bytes.Buffer
	if err := ExportZip(&buf, "", b); err != nil {
		t.Fatal(err)
	}
	got, err := ImportZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), ZipLimits{})
	if err != nil {
		t.Fatalf("our own export does not import: %v", err)
	}
	if got.Digest() != mustDigest(t, b) {
		t.Error("digest changed")
	}
}

func mustDigest(t *testing.T, b *skill.Bundle) string {
	t.Helper()
	c, _, err := checked("test", b)
	if err != nil {
		t.Fatal(err)
	}
	return c.Digest()
}

func TestExportRefusals(t *testing.T) {
	good := []byte("---\nname: ok\ndescription: Fine.\n---\nbody\n")
	cases := []struct {
		name string
		b    *skill.Bundle
		code string
	}{
		{"slip", &skill.Bundle{Content: good, Files: []skill.BundleFile{{Path: "../../.bashrc", Data: []byte("x")}}}, skill.CodePathDotDot},
		{"no description", &skill.Bundle{Content: []byte("---\nname: ok\n---\n")}, skill.CodeDescriptionMissing},
		{"nil", nil, CodeRead},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ExportJSON(c.b, ExportMeta{})
			wantCode(t, err, c.code)
			wantCode(t, ExportZip(&bytes.Buffer{}, "", c.b), c.code)
			wantCode(t, ExportDir(t.TempDir(), c.b), c.code)
		})
	}
	ok := &skill.Bundle{Content: good}
	wantCode(t, ExportZip(&bytes.Buffer{}, "a/b", ok), CodeFolderName)
	wantCode(t, ExportZip(&bytes.Buffer{}, "..", ok), CodeFolderName)
	wantCode(t, ExportZip(&bytes.Buffer{}, "__MACOSX", ok), CodeFolderName)
	_, err := ExportJSON(&skill.Bundle{Content: []byte("---\nname: ok\ndescription: Fine.\n---\ncaf\xe9\n")}, ExportMeta{})
	wantCode(t, err, CodeNotUTF8)
}

func TestExportDirRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCode(t, ExportDir(dir, loadTestSkill(t)), CodeDirNotEmpty)
	if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil {
		t.Error("ExportDir wrote into a non-empty folder")
	}
}

// wantCode fails unless err is an *Error with the code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want code %s", code)
		return
	}
	e, ok := err.(*Error)
	if !ok {
		t.Errorf("error %T %v is not *portable.Error", err, err)
		return
	}
	if e.Code != code {
		t.Errorf("code %q, want %q (%v)", e.Code, code, err)
	}
}
