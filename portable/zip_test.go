package portable

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

const okSkill = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n"

// zent is one entry of a test archive.
type zent struct {
	name  string
	data  string
	mode  fs.FileMode // 0: 0644
	store bool
	flags uint16
	// lie, when set, is the uncompressed size the headers declare; the
	// entry is written raw.
	lie uint64
}

func makeZip(t testing.TB, ents ...zent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Flags: e.flags}
		if e.store {
			fh.Method = zip.Store
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		fh.SetMode(mode)
		if e.lie != 0 {
			var comp bytes.Buffer
			fw, _ := flate.NewWriter(&comp, flate.BestCompression)
			fw.Write([]byte(e.data))
			fw.Close()
			fh.CRC32 = crc32.ChecksumIEEE([]byte(e.data))
			fh.CompressedSize64 = uint64(comp.Len())
			fh.UncompressedSize64 = e.lie
			w, err := zw.CreateRaw(fh)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(comp.Bytes())
			continue
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func importZipBytes(data []byte, lim ZipLimits) (*skill.Bundle, error) {
	return ImportZip(bytes.NewReader(data), int64(len(data)), lim)
}

func TestImportZipRefusals(t *testing.T) {
	md := zent{name: "demo/SKILL.md", data: okSkill}
	many := []zent{md}
	for i := range 1000 {
		many = append(many, zent{name: fmt.Sprintf("demo/f%04d.txt", i), data: "x"})
	}
	zeros := strings.Repeat("\x00", skill.DefaultMaxFileSize-1)
	cases := []struct {
		name  string
		ents  []zent
		lim   ZipLimits
		code  string
		entry string
	}{
		{"zip slip", []zent{md, {name: "demo/../../.bashrc", data: "evil"}}, ZipLimits{}, skill.CodePathDotDot, "demo/../../.bashrc"},
		{"zip slip at the root", []zent{{name: "SKILL.md", data: okSkill}, {name: "../../.bashrc", data: "evil"}}, ZipLimits{}, skill.CodePathDotDot, "../../.bashrc"},
		{"absolute", []zent{md, {name: "/etc/passwd", data: "x"}}, ZipLimits{}, skill.CodePathAbsolute, "/etc/passwd"},
		{"drive letter", []zent{md, {name: "C:/Windows/evil.dll", data: "x"}}, ZipLimits{}, skill.CodePathAbsolute, "C:/Windows/evil.dll"},
		{"backslash", []zent{md, {name: `demo\..\..\evil`, data: "x"}}, ZipLimits{}, skill.CodePathChars, `demo\..\..\evil`},
		{"empty segment", []zent{md, {name: "demo//x", data: "x"}}, ZipLimits{}, skill.CodePathSegment, "demo//x"},
		{"symlink", []zent{md, {name: "demo/key", data: "/home/u/.ssh/id_rsa", mode: fs.ModeSymlink | 0o777}}, ZipLimits{}, CodeSymlink, "demo/key"},
		{"named pipe", []zent{md, {name: "demo/fifo", mode: fs.ModeNamedPipe | 0o644}}, ZipLimits{}, CodeSpecialFile, "demo/fifo"},
		{"bomb by ratio", []zent{md, {name: "demo/zeros.bin", data: zeros}}, ZipLimits{}, CodeRatio, "demo/zeros.bin"},
		{"bomb by ratio, custom limit", []zent{md, {name: "demo/a.txt", data: strings.Repeat("ab", 40_000)}}, ZipLimits{MaxRatio: 10}, CodeRatio, "demo/a.txt"},
		{"too many entries", many, ZipLimits{}, CodeTooManyEntries, ""},
		{"too many entries, custom limit", []zent{md, {name: "demo/a", data: "1"}, {name: "demo/b", data: "2"}}, ZipLimits{MaxEntries: 2}, CodeTooManyEntries, ""},
		{"oversize file", []zent{md, {name: "demo/big.bin", data: strings.Repeat("x", skill.DefaultMaxFileSize+1), store: true}}, ZipLimits{}, skill.CodeTooLarge, "demo/big.bin"},
		{"oversize file with a lying header", []zent{md, {name: "demo/big.txt", data: strings.Repeat("x", 2<<20), lie: 100}}, ZipLimits{}, CodeSizeMismatch, "demo/big.txt"},
		{"header lies small, within limits", []zent{md, {name: "demo/a.txt", data: strings.Repeat("abc", 100), lie: 10}}, ZipLimits{}, CodeSizeMismatch, "demo/a.txt"},
		{"total size", []zent{md, {name: "demo/a", data: strings.Repeat("a", 600), store: true}, {name: "demo/b", data: strings.Repeat("b", 600), store: true}}, ZipLimits{MaxTotalSize: 1000}, skill.CodeTooLarge, ""},
		{"per-file size, custom limit", []zent{md, {name: "demo/a", data: strings.Repeat("a", 600)}}, ZipLimits{MaxFileSize: 500}, skill.CodeTooLarge, "demo/a"},
		{"two top folders", []zent{md, {name: "other/SKILL.md", data: okSkill}}, ZipLimits{}, CodeTopLevel, "other"},
		{"folder and a top-level file", []zent{md, {name: "README.md", data: "x"}}, ZipLimits{}, CodeTopLevel, "README.md"},
		{"no SKILL.md in the folder", []zent{{name: "demo/README.md", data: "x"}, {name: "demo/sub/SKILL.md", data: okSkill}}, ZipLimits{}, CodeSkillMDMissing, "demo/SKILL.md"},
		{"no SKILL.md at all", []zent{{name: "README.md", data: "x"}}, ZipLimits{}, CodeSkillMDMissing, "SKILL.md"},
		{"empty archive", nil, ZipLimits{}, CodeSkillMDMissing, ""},
		{"only junk", []zent{{name: "__MACOSX/demo/._SKILL.md", data: "x"}, {name: ".DS_Store", data: "x"}}, ZipLimits{}, CodeSkillMDMissing, ""},
		{"duplicate entry", []zent{md, {name: "demo/a.md", data: "1"}, {name: "demo/a.md", data: "2"}}, ZipLimits{}, CodeDuplicateEntry, "demo/a.md"},
		{"duplicate after cleaning", []zent{md, {name: "demo/a.md", data: "1"}, {name: "demo/./a.md", data: "2"}}, ZipLimits{}, CodeDuplicateEntry, "demo/./a.md"},
		{"duplicate SKILL.md", []zent{md, md}, ZipLimits{}, CodeDuplicateEntry, "demo/SKILL.md"},
		{"second entry file at the top", []zent{md, {name: "demo/Skill.MD", data: okSkill}}, ZipLimits{}, skill.CodePathSkillMD, "demo/Skill.MD"},
		{"encrypted", []zent{md, {name: "demo/secret.txt", data: "x", flags: 0x1}}, ZipLimits{}, CodeEncrypted, "demo/secret.txt"},
		{"bad SKILL.md", []zent{{name: "demo/SKILL.md", data: "---\nname: demo\n---\n"}}, ZipLimits{}, skill.CodeDescriptionMissing, "demo/SKILL.md"},
		{"bad name", []zent{{name: "demo/SKILL.md", data: "---\nname: Demo Skill\ndescription: x\n---\n"}}, ZipLimits{}, skill.CodeNameInvalid, "demo/SKILL.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := makeZip(t, c.ents...)
			b, err := importZipBytes(data, c.lim)
			if b != nil {
				t.Errorf("got a bundle with %d files", len(b.Files))
			}
			wantCode(t, err, c.code)
			var e *Error
			if errors.As(err, &e) {
				if e.Entry != c.entry {
					t.Errorf("entry %q, want %q (%v)", e.Entry, c.entry, err)
				}
				if e.Source != "zip" {
					t.Errorf("source %q", e.Source)
				}
			}
		})
	}
}

func TestImportZipNotAZip(t *testing.T) {
	_, err := importZipBytes([]byte("PK\x03\x04 not really"), ZipLimits{})
	wantCode(t, err, CodeZipInvalid)
	// A corrupt entry: flip bytes inside the compressed data.
	data := makeZip(t, zent{name: "demo/SKILL.md", data: okSkill}, zent{name: "demo/a.txt", data: strings.Repeat("hello world ", 50)})
	i := bytes.Index(data, []byte("demo/a.txt")) + len("demo/a.txt") + 4
	data[i] ^= 0xff
	data[i+1] ^= 0xff
	_, err = importZipBytes(data, ZipLimits{})
	wantCode(t, err, CodeZipInvalid)
}

func TestImportZipAccepts(t *testing.T) {
	exe := zent{name: "demo/scripts/run.sh", data: "#!/bin/sh\necho hi\n", mode: 0o755}
	cases := []struct {
		name  string
		ents  []zent
		files []string
	}{
		{"one folder", []zent{{name: "demo/SKILL.md", data: okSkill}, exe, {name: "demo/references/a.md", data: "# A\n"}}, []string{"references/a.md", "scripts/run.sh"}},
		{"SKILL.md at the root", []zent{{name: "SKILL.md", data: okSkill}, {name: "scripts/run.sh", data: "x", mode: 0o755}}, []string{"scripts/run.sh"}},
		{"folder entries and junk", []zent{{name: "demo/", mode: fs.ModeDir | 0o755}, {name: "demo/SKILL.md", data: okSkill}, {name: "demo/scripts/", mode: fs.ModeDir | 0o755}, exe,
			{name: "__MACOSX/demo/._SKILL.md", data: "\x00\x05\x16\x07"}, {name: "demo/.DS_Store", data: "Bud1"}, {name: ".DS_Store", data: "Bud1"}}, []string{"scripts/run.sh"}},
		{"lowercase skill.md", []zent{{name: "demo/skill.md", data: okSkill}}, nil},
		{"dot files kept", []zent{{name: "demo/SKILL.md", data: okSkill}, {name: "demo/.env.example", data: "KEY=\n"}}, []string{".env.example"}},
		{"a folder folder entry that looks like a slip is ignored", []zent{{name: "../", mode: fs.ModeDir | 0o755}, {name: "demo/SKILL.md", data: okSkill}}, nil},
		{"large but compressible within the ratio", []zent{{name: "demo/SKILL.md", data: okSkill}, {name: "demo/log.txt", data: strings.Repeat("a line of a log file, more or less\n", 20)}}, []string{"log.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := importZipBytes(makeZip(t, c.ents...), ZipLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(b.Content) != okSkill {
				t.Errorf("content %q", b.Content)
			}
			var got []string
			for _, f := range b.Files {
				got = append(got, f.Path)
				if f.Path == "scripts/run.sh" && !f.Executable {
					t.Error("scripts/run.sh lost its executable bit")
				}
				if f.Path != "scripts/run.sh" && f.Executable {
					t.Errorf("%s is executable", f.Path)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.files) {
				t.Errorf("files %v, want %v", got, c.files)
			}
		})
	}
}

func TestImportZipFile(t *testing.T) {
	_, err := ImportZipFile("testdata/no-such.zip", ZipLimits{})
	wantCode(t, err, CodeRead)
	if e := err.(*Error); e.Source != "testdata/no-such.zip" {
		t.Errorf("source %q", e.Source)
	}
}

func TestImportZipFileNamesSource(t *testing.T) {
	p := filepath.Join(t.TempDir(), "demo.zip")
	if err := os.WriteFile(p, makeZip(t, zent{name: "demo/SKILL.md", data: okSkill}, zent{name: "demo/../x", data: "x"}), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ImportZipFile(p, ZipLimits{})
	want := p + `: demo/../x: it contains "..": paths may not leave the skill folder`
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if err := os.WriteFile(p, makeZip(t, zent{name: "demo/SKILL.md", data: okSkill}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportZipFile(p, ZipLimits{}); err != nil {
		t.Error(err)
	}
}

// A refusal by Bundle.Check keeps the whole list of problems.
func TestCheckErrorUnwraps(t *testing.T) {
	data := makeZip(t, zent{name: "demo/SKILL.md", data: "---\nname: Bad Name\ndescription: x\n---\n"},
		zent{name: "demo/a.txt", data: strings.Repeat("a", 1000)})
	_, err := importZipBytes(data, ZipLimits{})
	var ce *skill.CheckError
	if !errors.As(err, &ce) || len(ce.Problems) == 0 {
		t.Fatalf("error %v does not unwrap to a *skill.CheckError", err)
	}
	if !strings.HasPrefix(err.Error(), "zip: demo/SKILL.md: refused: ") {
		t.Errorf("message %q", err)
	}
}
