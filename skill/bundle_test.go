package skill

import (
	"errors"
	"strings"
	"testing"
)

func TestBundleCheck(t *testing.T) {
	good := func() *Bundle {
		return &Bundle{Content: []byte("---\nname: pdf\ndescription: PDFs.\n---\n# PDF\n"), Files: []BundleFile{
			{Path: "./scripts/run.sh", Data: []byte("#!/bin/sh\n"), Executable: true},
			{Path: "assets/logo.png", Data: []byte("\x89PNG\r\n\x1a\n\x00")},
			{Path: "data.bin", Data: []byte{0xff, 0x00, 0x10}},
		}}
	}
	b := good()
	doc, warns, err := b.Check(Limits{})
	if err != nil || doc.Name != "pdf" || len(warns) != 0 {
		t.Fatalf("good bundle: %v %v", err, warns)
	}
	var paths []string
	for _, f := range b.Files {
		paths = append(paths, f.Path+":"+f.ContentType)
	}
	if got := strings.Join(paths, " "); got != "assets/logo.png:image/png data.bin:application/octet-stream scripts/run.sh:application/x-sh" {
		t.Errorf("normalised files: %s", got)
	}
	if !b.Files[0].Binary || !b.Files[1].Binary || b.Files[2].Binary {
		t.Errorf("binary flags: %+v", b.Files)
	}
	d1 := b.Digest()
	b.Files[2].Executable = false
	if b.Digest() == d1 {
		t.Error("the digest must cover the executable bit")
	}

	cases := []struct {
		name   string
		mutate func(*Bundle)
		code   string
		field  string
	}{
		{"dotdot", func(b *Bundle) { b.Files[0].Path = "../../.bashrc" }, CodePathDotDot, "files[0]"},
		{"absolute", func(b *Bundle) { b.Files[1].Path = "/etc/passwd" }, CodePathAbsolute, "files[1]"},
		{"backslash", func(b *Bundle) { b.Files[0].Path = `a\b` }, CodePathChars, "files[0]"},
		{"second SKILL.md", func(b *Bundle) { b.Files[0].Path = "sub/SKILL.md" }, CodePathSkillMD, "files[0]"},
		{"duplicate", func(b *Bundle) { b.Files[1].Path = "scripts/run.sh" }, CodeDuplicatePath, "files[1]"},
		{"file too large", func(b *Bundle) { b.Files[2].Data = make([]byte, DefaultMaxFileSize+1) }, CodeTooLarge, "files[2]"},
		{"too many files", func(b *Bundle) {
			for i := 0; i < DefaultMaxFiles; i++ {
				b.Files = append(b.Files, BundleFile{Path: "f/" + strings.Repeat("x", 1+i%50) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26)), Data: []byte("x")})
			}
		}, CodeTooManyFiles, "files"},
		{"no description", func(b *Bundle) { b.Content = []byte("---\nname: pdf\n---\n") }, CodeDescriptionMissing, "description"},
		{"bad yaml", func(b *Bundle) { b.Content = []byte("---\nname: [\n---\n") }, CodeYAMLInvalid, "content"},
		{"bad name", func(b *Bundle) { b.Content = []byte("---\nname: PDF_Tools\ndescription: d\n---\n") }, CodeNameInvalid, "name"},
		{"file and folder", func(b *Bundle) { b.Files[2].Path = "scripts" }, CodeDuplicatePath, "files[2]"},
		{"no name", func(b *Bundle) { b.Content = []byte("---\ndescription: d\n---\n") }, CodeNameInvalid, "name"},
	}
	for _, c := range cases {
		b := good()
		c.mutate(b)
		before := b.Files[0].Path
		_, _, err := b.Check(Limits{})
		var ce *CheckError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a CheckError, got %v", c.name, err)
			continue
		}
		found := false
		for _, p := range ce.Problems {
			if p.Code == c.code && p.Field == c.field && p.Message != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s on %s, got %+v", c.name, c.code, c.field, ce.Problems)
		}
		_ = before
	}
	big := good()
	big.Files = append(big.Files, BundleFile{Path: "references/big.md", Data: []byte(strings.Repeat("a", 60_000))})
	if _, warns, err := big.Check(Limits{}); err != nil || len(warns) != 1 || warns[0].Code != CodeLargeText {
		t.Errorf("large text: %v %v", err, warns)
	}
	if _, _, err := good().Check(Limits{MaxTotalSize: 30}); err == nil || !strings.Contains(err.Error(), "in all") {
		t.Errorf("total limit: %v", err)
	}
}

func TestBundleCaseWarning(t *testing.T) {
	b := &Bundle{Content: []byte("---\nname: x\ndescription: d\n---\n"), Files: []BundleFile{{Path: "Read.md", Data: []byte("a")}, {Path: "read.md", Data: []byte("b")}}}
	_, warns, err := b.Check(Limits{})
	if err != nil || len(warns) != 1 || warns[0].Code != CodeDuplicatePath {
		t.Errorf("%v %v", err, warns)
	}
}
