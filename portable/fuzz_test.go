package portable

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
)

// checkImported is what every successful import must satisfy: every path
// passes the shared path check, the bundle passes Check again, and it
// survives a JSON and a zip round trip unchanged.
func checkImported(t *testing.T, b *skill.Bundle) {
	t.Helper()
	for _, f := range b.Files {
		if c, err := skill.CleanFilePath(f.Path); err != nil || c != f.Path {
			t.Fatalf("imported path %q fails CleanFilePath (%v)", f.Path, err)
		}
	}
	if _, _, err := b.Check(skill.Limits{}); err != nil {
		t.Fatalf("imported bundle fails Check: %v", err)
	}
	d := b.Digest()
	js, err := ExportJSON(b, ExportMeta{ExportedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatalf("imported bundle does not export to JSON: %v", err)
	}
	b2, err := ImportJSON(js)
	if err != nil || b2.Digest() != d {
		t.Fatalf("JSON round trip: %v", err)
	}
	var z bytes.Buffer
	if err := ExportZip(&z, "", b); err != nil {
		t.Fatalf("imported bundle does not export to zip: %v", err)
	}
	b3, err := ImportZip(bytes.NewReader(z.Bytes()), int64(z.Len()), ZipLimits{})
	if err != nil || b3.Digest() != d {
		t.Fatalf("zip round trip: %v", err)
	}
}

func FuzzImportZip(f *testing.F) {
	var good bytes.Buffer
	if err := ExportZip(&good, "", loadTestSkill(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	md := zent{name: "demo/SKILL.md", data: okSkill}
	for _, ents := range [][]zent{
		{md},
		{{name: "SKILL.md", data: okSkill}, {name: "run.sh", data: "#!/bin/sh\n", mode: 0o755}},
		{md, {name: "demo/../../.bashrc", data: "evil"}},
		{md, {name: "/etc/passwd", data: "x"}},
		{md, {name: `demo\evil`, data: "x"}},
		{md, {name: "demo/key", data: "/etc/shadow", mode: fs.ModeSymlink | 0o777}},
		{md, {name: "demo/a.txt", data: strings.Repeat("abc", 100), lie: 10}},
		{md, {name: "other/SKILL.md", data: okSkill}},
		{md, {name: "demo/a", data: "1"}, {name: "demo/./a", data: "2"}},
		{{name: "__MACOSX/demo/._SKILL.md", data: "x"}, md, {name: "demo/.DS_Store", data: "x"}},
	} {
		f.Add(makeZip(f, ents...))
	}
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ImportZip(bytes.NewReader(data), int64(len(data)), ZipLimits{MaxEntries: 64, MaxTotalSize: 4 << 20})
		if err != nil {
			if b != nil {
				t.Fatal("a bundle and an error")
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error", err)
			}
			return
		}
		checkImported(t, b)
	})
}

func FuzzImportJSON(f *testing.F) {
	good, err := ExportJSON(loadTestSkill(f), ExportMeta{ExportedAt: time.Unix(0, 0), ExportedFrom: "fuzz", Origin: &skill.Origin{Kind: "plugin", Plugin: "p", Trust: "low"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, s := range []string{
		doc(`{"path":"a.md","content":"hello","sha256":"` + helloSHA + `"}`),
		doc(`{"path":"b.bin","content":"aGVsbG8=","encoding":"base64","executable":true}`),
		doc(`{"path":"../../.bashrc","content":"evil"}`),
		doc(`{"path":"a.bin","content":"!!","encoding":"base64"}`),
		`{"skill":{"slug":"jira-triage","description":"d","tags":["a"],"content":"# J\n"}}`,
		`{"name":"x","slug":"x","description":"d","content":"body"}`,
		`{"schemaVersion":3}`,
		`[` + doc(`{"path":"a","content":"x"}`) + `]`,
		`{"schemaVersion":2,"skill":{"content":"---\nname: a\ndescription: b\n---\n"},"metadata":{"digest":"sha256:0"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ImportJSON(data)
		if err != nil {
			if b != nil {
				t.Fatal("a bundle and an error")
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error", err)
			}
		} else {
			checkImported(t, b)
		}
		bs, err := ImportJSONMany(data)
		if err == nil {
			for _, b := range bs {
				checkImported(t, b)
			}
		}
	})
}
