package skill

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
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
		{"second SKILL.md", func(b *Bundle) { b.Files[0].Path = "skill.md" }, CodePathSkillMD, "files[0]"},
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

// TestBundleControlCharacters: the write gate refuses control characters
// in SKILL.md and in every frontmatter field the same way for every store,
// naming the field and where the character is.
func TestBundleControlCharacters(t *testing.T) {
	md := func(front, body string) []byte {
		return []byte("---\nname: ctl\n" + front + "---\n" + body)
	}
	refused := []struct {
		name    string
		content []byte
		field   string
		want    string // in the message
	}{
		{"NUL in description", md("description: \"a\\0b\"\n", "# x\n"), "description", "character 2 of the value is the control character U+0000 (NUL)"},
		{"ESC in description", md("description: \"red \\e[31m\"\n", ""), "description", "U+001B (ESC)"},
		{"C1 in description", md("description: \"a\\x9bb\"\n", ""), "description", "U+009B (CSI)"},
		{"DEL in license", md("description: d\nlicense: \"MIT\\x7f\"\n", ""), "license", "U+007F (DEL)"},
		{"in a tag", md("description: d\ntags: [a, \"b\\x07\"]\n", ""), "tags[1]", "U+0007 (BEL)"},
		{"in metadata", md("description: d\nmetadata:\n  author: \"x\\by\"\n", ""), "metadata.author", "U+0008 (BACKSPACE)"},
		{"in an unknown nested field", md("description: d\nx:\n  y: [\"\\0\"]\n", ""), "x.y[0]", "U+0000 (NUL)"},
		{"line break in a key", md("description: d\n\"a\\nb\": c\n", ""), `"a\nb"`, "of the key is the control character U+000A (LINE FEED)"},
		{"NUL in the body", md("description: d\n", "# x\n\nline two \x00 here\n"), "content", "SKILL.md line 7, column 10: the control character U+0000 (NUL)"},
		{"ESC in the body", md("description: d\n", "\x1b[2J\x1b[31m\n"), "content", "line 5, column 1: the control character U+001B (ESC) (and 1 more)"},
		{"C1 in the body", md("description: d\n", "a\u0085b\n"), "content", "U+0085 (NEXT LINE)"},
		{"ESC in the name", md("description: d\n", ""), "name", ""},
	}
	refused[len(refused)-1].content = []byte("---\nname: \"ctl\\e[0m\"\ndescription: d\n---\n")
	for _, c := range refused {
		b := &Bundle{Content: c.content}
		_, _, err := b.Check(Limits{})
		var ce *CheckError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a CheckError, got %v", c.name, err)
			continue
		}
		p := ce.Problems[0]
		if p.Code != CodeControlChar || p.Field != c.field || p.Path != "SKILL.md" || p.Severity != Error || !strings.Contains(p.Message, c.want) {
			t.Errorf("%s: got %+v, want %s on %s saying %q", c.name, ce.Problems, CodeControlChar, c.field, c.want)
		}
	}
	// Tabs and line breaks are text: in the body, and in values that block
	// scalars or escapes spread over lines.
	ok := &Bundle{Content: []byte("---\r\nname: ctl\r\ndescription: |\r\n  Two\tcolumns,\r\n  two lines.\r\nnote: \"a\\tb\\r\\nc\"\r\n---\r\n# Body\r\n\tindented\r\n")}
	if _, warns, err := ok.Check(Limits{}); err != nil || len(warns) != 0 {
		t.Errorf("tabs and line breaks: %v %v", err, warns)
	}
	// Lenient loading warns and still loads, except for the name.
	_, diags, loaded := Parse(md("description: \"a\\0b\"\n", ""), "/s/ctl/SKILL.md", "ctl")
	if !loaded || len(diags) != 1 || diags[0].Code != CodeControlChar || diags[0].Severity != Warning || diags[0].Path != "/s/ctl/SKILL.md" {
		t.Errorf("lenient: %v %v", loaded, diags)
	}
	for _, dir := range []string{"ctl\x1b[31m", "c\u202etl"} {
		if _, diags, loaded := Parse([]byte("---\ndescription: d\n---\n"), "/s/x/SKILL.md", dir); loaded || diags[len(diags)-1].Code != CodeControlChar {
			t.Errorf("folder name %q: %v %v", dir, loaded, diags)
		}
	}
}

func TestBundleUnicodeDuplicates(t *testing.T) {
	content := []byte("---\nname: u\ndescription: d\n---\n")
	b := &Bundle{Content: content, Files: []BundleFile{
		{Path: "caf\u00e9.md", Data: []byte("composed")},
		{Path: "cafe\u0301.md", Data: []byte("decomposed")},
	}}
	_, _, err := b.Check(Limits{})
	var ce *CheckError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Code != CodeDuplicatePath || ce.Problems[0].Field != "files[1]" || !strings.Contains(ce.Problems[0].Message, "Unicode forms") {
		t.Fatalf("NFC/NFD duplicate: %v", err)
	}
	// A file and a folder of the same name in two forms clash too.
	b = &Bundle{Content: content, Files: []BundleFile{
		{Path: "caf\u00e9", Data: []byte("file")},
		{Path: "cafe\u0301/x.md", Data: []byte("in a folder")},
	}}
	if _, _, err := b.Check(Limits{}); !errors.As(err, &ce) || ce.Problems[0].Code != CodeDuplicatePath {
		t.Fatalf("file and folder in two forms: %v", err)
	}
	// One form alone is fine.
	b = &Bundle{Content: content, Files: []BundleFile{{Path: "cafe\u0301.md", Data: []byte("x")}}}
	if _, _, err := b.Check(Limits{}); err != nil {
		t.Fatal(err)
	}
}

func TestBundleContentType(t *testing.T) {
	for ct, ok := range map[string]bool{
		"text/markdown": true, "text/plain; charset=utf-8": true,
		"text/plain\r\nX-Evil: 1": false, "text/\x00plain": false, "not a type": false, "text/plain; x=\"\x1b\"": false, "text/plaïn": false,
	} {
		b := &Bundle{Content: []byte("---\nname: c\ndescription: d\n---\n"), Files: []BundleFile{{Path: "a.md", Data: []byte("x"), ContentType: ct}}}
		_, _, err := b.Check(Limits{})
		var ce *CheckError
		if ok != (err == nil) || !ok && (!errors.As(err, &ce) || ce.Problems[0].Code != CodeContentType || ce.Problems[0].Field != "files[0].contentType") {
			t.Errorf("content type %q: %v", ct, err)
		}
	}
}

// TestContentDigestIsTheBundleDigest: a skill served from a bundle (as
// plugin and stored skills are) has the bundle's digest as ContentDigest,
// not the digest of SKILL.md alone.
func TestContentDigestIsTheBundleDigest(t *testing.T) {
	b := &Bundle{Content: []byte("---\nname: pdf\ndescription: PDFs.\n---\n# PDF\n"), Files: []BundleFile{
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\n"), Executable: true},
		{Path: "a.md", Data: []byte("a")},
	}}
	doc, _, err := b.Check(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sk := NewVirtual(doc, "plugin://x/pdf", b.Manifest(), &Origin{Kind: "plugin"}, b.Reader())
	if got := sk.ContentDigest(); got != b.Digest() || got == DigestBytes(b.Content) {
		t.Errorf("ContentDigest %s, bundle digest %s", got, b.Digest())
	}
	b2, err := sk.Bundle()
	if err != nil || b2.Digest() != sk.ContentDigest() {
		t.Errorf("export digest %s, listing digest %s (%v)", b2.Digest(), sk.ContentDigest(), err)
	}
}

// A SKILL.md below the top is one of the skill's files, as discovery lists
// it: Check keeps it and warns nested-skill; a second one at the top is
// refused.
func TestBundleCheckNestedSkillMD(t *testing.T) {
	b := &Bundle{Content: []byte("---\nname: outer\ndescription: O.\n---\n"), Files: []BundleFile{
		{Path: "examples/inner/SKILL.md", Data: []byte("---\nname: inner\ndescription: I.\n---\n")},
	}}
	_, warns, err := b.Check(Limits{})
	if err != nil || len(warns) != 1 || warns[0].Code != CodeNestedSkill || warns[0].Path != "examples/inner/SKILL.md" || warns[0].Severity != Warning {
		t.Fatalf("nested SKILL.md: %v %+v", err, warns)
	}
	b.Files = append(b.Files, BundleFile{Path: "SKILL.MD", Data: []byte("x")})
	_, _, err = b.Check(Limits{})
	var ce *CheckError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Code != CodePathSkillMD || ce.Problems[0].Path != "SKILL.MD" {
		t.Errorf("a second SKILL.md at the top: %v", err)
	}
}

// TestContentDigestGarbage: the digest of a skill of 21 files makes less
// than 16 KiB of garbage, whatever its file count (io.Copy made a 32 KiB
// buffer for each file: 672 KiB here, 6 GB for a skill list of 50,000
// skills).
func TestContentDigestGarbage(t *testing.T) {
	b := &Bundle{Content: []byte("---\nname: pdf\ndescription: PDFs.\n---\n# PDF\n")}
	for i := range 20 {
		b.Files = append(b.Files, BundleFile{Path: fmt.Sprintf("references/r%02d.md", i), Data: []byte("notes\n")})
	}
	doc, _, err := b.Check(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sk := NewVirtual(doc, "plugin://x/pdf", b.Manifest(), &Origin{Kind: "plugin"}, b.Reader())
	want := sk.ContentDigest()
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		sk.digests.Store(nil) // not cached: computed again
		if got := sk.ContentDigest(); got != want {
			t.Fatalf("digest %s, then %s", want, got)
		}
	}
	runtime.ReadMemStats(&after)
	bound := uint64(16 << 10)
	if testutil.Race { // the pool drops a quarter of its buffers: allow half
		bound = 21 * (32 << 10) / 2
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > bound {
		t.Errorf("a digest of 21 files allocated %d bytes, want under %d", per, bound)
	}
}

// BenchmarkContentDigestCached is a cached ContentDigest read on loads
// spread over many skills (every load's receipt names it): a pointer
// load since the digest has its own field, a sync.Map lookup before.
func BenchmarkContentDigestCached(b *testing.B) {
	b0 := Bundle{Content: []byte("---\nname: x\ndescription: d\n---\nbody\n")}
	doc, _, err := b0.Check(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	sks := make([]*Skill, 10000)
	for i := range sks {
		sks[i] = NewVirtual(doc, "plugin://x/x", b0.Manifest(), &Origin{Kind: "plugin"}, b0.Reader())
		sks[i].ContentDigest()
	}
	i := 0
	for b.Loop() {
		sks[i].ContentDigest()
		i = (i + 7919) % len(sks)
	}
}
