package portable

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// doc builds a v2 document around one file object (given as JSON).
func doc(file string) string {
	return `{"schemaVersion":2,"skill":{"name":"demo","slug":"demo","description":"A demo skill.","content":` +
		mustJSON(okSkill) + `,"files":[` + file + `]},"metadata":{"exportedAt":"2026-02-20T12:00:00Z","exportedFrom":"test"}}`
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const helloSHA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")

func TestImportJSONRefusals(t *testing.T) {
	cases := []struct {
		name, doc, code, entry string
	}{
		{"not JSON", `{"schemaVersion":2,`, CodeJSONInvalid, ""},
		{"not an object", `"skill"`, CodeJSONInvalid, ""},
		{"array", `[` + doc(`{"path":"a.md","content":"x"}`) + `]`, CodeJSONInvalid, ""},
		{"wrong type", `{"schemaVersion":2,"skill":{"name":"demo","content":5}}`, CodeJSONInvalid, "skill.content"},
		{"unknown schemaVersion", `{"schemaVersion":3,"skill":{"content":""}}`, CodeSchemaVersion, "schemaVersion"},
		{"schemaVersion 0", `{"schemaVersion":0,"skill":{"content":""}}`, CodeSchemaVersion, "schemaVersion"},
		{"schemaVersion as a string", `{"schemaVersion":"2","skill":{"content":""}}`, CodeSchemaVersion, "schemaVersion"},
		{"no skill", `{"schemaVersion":2,"metadata":{}}`, CodeJSONInvalid, "skill"},
		{"bad sha256", doc(`{"path":"a.md","content":"hellO","sha256":"` + helloSHA + `"}`), CodeSHA256Mismatch, "skill.files[0]"},
		{"sha256 not hex", doc(`{"path":"a.md","content":"hello","sha256":"xyz"}`), CodeSHA256Invalid, "skill.files[0].sha256"},
		{"sha256 too short", doc(`{"path":"a.md","content":"hello","sha256":"2cf24dba"}`), CodeSHA256Invalid, "skill.files[0].sha256"},
		{"bad base64", doc(`{"path":"a.bin","content":"not base64!","encoding":"base64"}`), CodeBase64, "skill.files[0]"},
		{"base64 with bad padding bits", doc(`{"path":"a.bin","content":"aGVsbG9=","encoding":"base64"}`), CodeBase64, "skill.files[0]"},
		{"unknown encoding", doc(`{"path":"a.bin","content":"68656c6c6f","encoding":"hex"}`), CodeEncoding, "skill.files[0].encoding"},
		{"zip slip", doc(`{"path":"../../.bashrc","content":"evil"}`), skill.CodePathDotDot, "skill.files[0] (../../.bashrc)"},
		{"absolute", doc(`{"path":"/etc/passwd","content":"x"}`), skill.CodePathAbsolute, "skill.files[0] (/etc/passwd)"},
		{"second SKILL.md", doc(`{"path":"Skill.md","content":"x"}`), skill.CodePathSkillMD, "skill.files[0] (Skill.md)"},
		{"duplicate path", doc(`{"path":"a.md","content":"1"},{"path":"./a.md","content":"2"}`), skill.CodeDuplicatePath, "skill.files[1] (a.md)"},
		{"oversize file", doc(`{"path":"a.txt","content":"` + strings.Repeat("x", skill.DefaultMaxFileSize+1) + `"}`), skill.CodeTooLarge, "skill.files[0] (a.txt)"},
		{"no description", `{"schemaVersion":2,"skill":{"content":"---\nname: demo\n---\n"}}`, skill.CodeDescriptionMissing, "skill.content"},
		{"slug mismatch", `{"schemaVersion":2,"skill":{"slug":"other","content":` + mustJSON(okSkill) + `}}`, CodeSlugMismatch, "skill.slug"},
		{"digest mismatch", `{"schemaVersion":2,"skill":{"content":` + mustJSON(okSkill) + `},"metadata":{"digest":"sha256:00"}}`, CodeDigestMismatch, "metadata.digest"},
		{"v1 without a usable name", `{"skill":{"name":"Jira Triage","description":"Triage tickets.","content":"# Jira\n"}}`, skill.CodeNameInvalid, "skill.content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := ImportJSON([]byte(c.doc))
			if b != nil {
				t.Error("got a bundle")
			}
			wantCode(t, err, c.code)
			var e *Error
			if errors.As(err, &e) && e.Entry != c.entry {
				t.Errorf("entry %q, want %q (%v)", e.Entry, c.entry, err)
			}
		})
	}
}

func TestImportJSONAccepts(t *testing.T) {
	b, err := ImportJSON([]byte(doc(`{"path":"a.md","content":"hello","sha256":"` + strings.ToUpper(helloSHA) + `"},` +
		`{"path":"b.bin","content":"aGVsbG8=","encoding":"base64","sha256":"sha256:` + helloSHA + `","executable":true,"contentType":"application/x-demo"},` +
		`{"path":"c.dat","content":"x","contentType":"not a type;;"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 3 || string(b.Files[1].Data) != "hello" || !b.Files[1].Executable || b.Files[1].ContentType != "application/x-demo" {
		t.Errorf("files %+v", b.Files)
	}
	if b.Files[2].ContentType != "text/plain" {
		t.Errorf("an invalid contentType was kept: %q", b.Files[2].ContentType)
	}
}

func TestImportJSONv1(t *testing.T) {
	// The v1 shape, with frontmatter in content.
	v1 := `{"schemaVersion":1,"skill":{"name":"Demo","slug":"demo","description":"A demo skill.","content":` + mustJSON(okSkill) + `}}`
	b, err := ImportJSON([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Content) != okSkill || len(b.Files) != 0 {
		t.Errorf("content %q", b.Content)
	}
	// Without schemaVersion, and content without frontmatter: the
	// frontmatter is built from the document's fields.
	v0 := `{"skill":{"name":"Jira Triage","slug":"jira-triage","description":"Triage Jira tickets: \"bugs\" first.","category":"ops","tags":["jira","triage"],"version":"1.0","content":"# Jira Triage\n\nWhen triaging tickets...\n"}}`
	b, err = ImportJSON([]byte(v0))
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := b.Check(skill.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "jira-triage" || d.Description != `Triage Jira tickets: "bugs" first.` || d.Category != "ops" ||
		strings.Join(d.Tags, ",") != "jira,triage" || d.Version != "1.0" || d.Body != "# Jira Triage\n\nWhen triaging tickets...\n" {
		t.Errorf("synthesized frontmatter gave %+v", d)
	}
	// The database shape: a bare skill object.
	bare := `{"name":"API Review Checklist","slug":"api-review","description":"Review APIs.","content":"# API Review\n","is_directory":true,
		"files":[{"path":"references/checklist.md","content":"## Checklist\n"}]}`
	b, err = ImportJSON([]byte(bare))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 1 || b.Files[0].Path != "references/checklist.md" {
		t.Errorf("files %+v", b.Files)
	}
}

func TestImportJSONMany(t *testing.T) {
	one := doc(`{"path":"a.md","content":"x"}`)
	bs, err := ImportJSONMany([]byte(`[` + one + `,` + one + `]`))
	if err != nil || len(bs) != 2 {
		t.Fatalf("%d bundles, %v", len(bs), err)
	}
	bs, err = ImportJSONMany([]byte(one))
	if err != nil || len(bs) != 1 {
		t.Fatalf("%d bundles, %v", len(bs), err)
	}
	_, err = ImportJSONMany([]byte(`[` + one + `,` + doc(`{"path":"../x","content":"x"}`) + `]`))
	wantCode(t, err, skill.CodePathDotDot)
	if e, ok := err.(*Error); ok && e.Entry != "[1].skill.files[0] (../x)" {
		t.Errorf("entry %q", e.Entry)
	}
	_, err = ImportJSONMany([]byte(`[1]`))
	wantCode(t, err, CodeJSONInvalid)
}

// Text that JSON escapes (NUL, CR, U+2028, <, &) and text on the edge of
// UTF-8 survive the round trip byte for byte.
func TestJSONRoundTripBytes(t *testing.T) {
	files := map[string]string{
		"escapes.txt": "nul \x00 cr \r tab \t ls \u2028 ps \u2029 <b>&amp;</b> \"q\" \\ \x7f",
		"bom.md":      "\uFEFF# with a BOM\n",
		"empty.txt":   "",
		"invalid.txt": "ok then \xff\xfe bad",
		"cut.txt":     "cut rune \xe6\x97",
		"noext":       "\x00\x01\x02binary without extension",
	}
	b := &skill.Bundle{Content: []byte(okSkill)}
	for p, d := range files {
		b.Files = append(b.Files, skill.BundleFile{Path: p, Data: []byte(d)})
	}
	js, err := ExportJSON(b, ExportMeta{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ImportJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got.Files {
		if string(f.Data) != files[f.Path] {
			t.Errorf("%s: %q, want %q", f.Path, f.Data, files[f.Path])
		}
	}
	if got.Digest() != mustDigest(t, b) {
		t.Error("digest changed")
	}
	if strings.Contains(string(js), "exportedAt") {
		t.Error("a zero ExportedAt was written")
	}
}

// TestImportJSONKeepsCategoryTagsVersion: category, tags and version given
// beside content used to be dropped unless SKILL.md's frontmatter also had
// them. They are added to the frontmatter, survive a round trip, and a
// document whose fields disagree with its frontmatter is refused.
func TestImportJSONKeepsCategoryTagsVersion(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n"} {
		content := strings.ReplaceAll("---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\nDo it.\n", "\n", nl)
		in := `{"schemaVersion":2,"skill":{"name":"demo","slug":"demo","description":"A demo skill.","category":"docs","tags":["pdf","a \"quoted\" tag"],"version":"1.2.0","content":` +
			mustJSON(content) + `,"files":[]}}`
		b, err := ImportJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		doc, _, err := b.Check(skill.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Category != "docs" || strings.Join(doc.Tags, "|") != `pdf|a "quoted" tag` || doc.Version != "1.2.0" {
			t.Errorf("fields dropped: category %q tags %q version %q\n%s", doc.Category, doc.Tags, doc.Version, b.Content)
		}
		if !strings.HasSuffix(string(b.Content), "# Demo"+nl+nl+"Do it."+nl) {
			t.Errorf("body changed:\n%q", b.Content)
		}
		out, err := ExportJSON(b, ExportMeta{ExportedFrom: "test"})
		if err != nil {
			t.Fatal(err)
		}
		var got jsonDoc
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if got.Skill.Category != "docs" || len(got.Skill.Tags) != 2 || got.Skill.Version != "1.2.0" {
			t.Errorf("round trip lost fields: %+v", got.Skill)
		}
		b2, err := ImportJSON(out)
		if err != nil || b2.Digest() != b.Digest() {
			t.Errorf("second import: %v, digest %s vs %s", err, b2.Digest(), b.Digest())
		}
	}
	// The document's fields and the frontmatter disagree: refused, naming both.
	withFM := "---\nname: demo\ndescription: A demo skill.\ncategory: docs\ntags: [pdf]\nversion: 1.0.0\n---\nBody.\n"
	for field, js := range map[string]string{
		"category": `"category":"other"`,
		"tags":     `"tags":["x"]`,
		"version":  `"version":"2.0.0"`,
	} {
		in := `{"schemaVersion":2,"skill":{"name":"demo",` + js + `,"content":` + mustJSON(withFM) + `}}`
		_, err := ImportJSON([]byte(in))
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != CodeFieldMismatch || pe.Entry != "skill."+field || !strings.Contains(pe.Msg, "frontmatter") {
			t.Errorf("%s mismatch: %v", field, err)
		}
	}
	// Agreeing fields are fine and change nothing.
	in := `{"schemaVersion":2,"skill":{"name":"demo","category":"docs","tags":["pdf"],"version":"1.0.0","content":` + mustJSON(withFM) + `}}`
	if b, err := ImportJSON([]byte(in)); err != nil || string(b.Content) != withFM {
		t.Errorf("agreeing fields: %v", err)
	}
}
