package skill

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/loadout/loadout/internal/testutil"
)

// typicalSkillMD is a SKILL.md as bench/gen makes them: a folded
// description, a list, a nested mapping, and a body.
const typicalSkillMD = `---
name: auth-build-13318
description: >-
  Use when working on auth tasks in the backend area. Forms pages clean asks
  tasks edit files.
allowed-tools: jq curl write python
tags: [productivity, backend]
metadata:
  author: team-team-beta
  owner: "format@example.com"
  revision: "9"
---

# auth build 13318

Notes limits files lists, examples local version existing defaults.

## Steps

1. Reliably examples large scripts skill workflow errors, after.
`

// TestParseHeaderAllocs bounds the allocations of parsing one typical
// SKILL.md header, the work discovery does per skill. It made 56 before
// the frontmatter text was compacted; the bound leaves room for small
// changes, not for a return to one allocation per value kept.
func TestParseHeaderAllocs(t *testing.T) {
	data := []byte(typicalSkillMD)
	if _, diags, ok := ParseHeader(data, "SKILL.md", "auth-build-13318"); !ok || len(diags) > 0 {
		t.Fatalf("ok=%v diags=%v", ok, diags)
	}
	n := testing.AllocsPerRun(100, func() {
		ParseHeader(data, "SKILL.md", "auth-build-13318")
	})
	const max = 40
	t.Logf("%.0f allocations per header", n)
	if n > max {
		t.Errorf("ParseHeader made %.0f allocations, want at most %d", n, max)
	}
}

// TestParseKeepsNoInput: what a parsed document keeps is text of its own:
// changing the bytes it was parsed from changes nothing in it, so a
// reader may parse from a buffer it reuses.
func TestParseKeepsNoInput(t *testing.T) {
	for _, text := range []string{typicalSkillMD, strings.ReplaceAll(typicalSkillMD, "\n", "\r\n"),
		"---\nname: x\ndescription: |\n  a\n  b\nlist:\n  - &a one\n  - *a\n---\nbody\n"} {
		data := []byte(text)
		doc, _, ok := Parse(data, "SKILL.md", "x")
		if !ok {
			t.Fatalf("not ok: %q", text)
		}
		want, _, _ := Parse([]byte(text), "SKILL.md", "x")
		for i := range data {
			data[i] = '#'
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("the document changed with its input (-want +got):\n%s", diff)
		}
	}
}

// TestHeaderComplete: whenever HeaderComplete says a prefix of a SKILL.md
// is enough, ParseHeader of that prefix is ParseHeader of the whole file,
// for every cut; and the whole of a file with a closed frontmatter is
// enough before its body.
func TestHeaderComplete(t *testing.T) {
	body := strings.Repeat("Some body text. ---\n---\n", 20)
	files := []string{
		typicalSkillMD + body,
		strings.ReplaceAll(typicalSkillMD+body, "\n", "\r\n"),
		strings.ReplaceAll(typicalSkillMD+body, "\n", "\r"),
		"\uFEFF" + typicalSkillMD + body,
		"---  \nname: a\ndescription: b\n---\t\n" + body,
		"---\nname: a\ndescription: b\n---", // fence at the end, no line break
		"---\nname: a\ndescription: b\n----\nmore: c\n---\n" + body,
		"---\nname: a\ndescription: b\n", // unclosed
		"# no frontmatter\n" + body,      // none
		"--- \r\nname: a\r\ndescription: b\r---\r\n",
		"",
		"---",
	}
	for _, f := range files {
		data := []byte(f)
		wantDoc, wantDiags, wantOK := ParseHeader(data, "SKILL.md", "a")
		earliest := -1
		for k := 0; k <= len(data); k++ {
			if !HeaderComplete(data[:k]) {
				continue
			}
			if earliest < 0 {
				earliest = k
			}
			doc, diags, ok := ParseHeader(data[:k:k], "SKILL.md", "a")
			if ok != wantOK || !cmp.Equal(doc, wantDoc) || !cmp.Equal(diags, wantDiags) {
				t.Errorf("%q cut at %d: ParseHeader differs from the whole file's:\n%s\n%s", f, k, cmp.Diff(wantDoc, doc), cmp.Diff(wantDiags, diags))
				break
			}
		}
		if i := bytes.Index(data, []byte(body)); i > 0 && strings.HasSuffix(f, body) && (earliest < 0 || earliest > i) {
			t.Errorf("%q: HeaderComplete first true at %d, want by %d (before the body)", f, earliest, i)
		}
	}
}

// TestSkillSize: a Skill keeps its body (KeepBody, KeepBodyRef) behind a
// pointer, so the skills of a large catalog that keep none (check and
// list keep none) do not carry room for one (360 bytes, in a size class
// of 384, was 320), and points to the Origin its source's skills share
// (120 bytes each when held by value): 208 bytes, 8 MB less at 50,000
// skills than 384. The Stamp (16 bytes, which spares check reading the
// files of unchanged skills again) makes it 224, a size class of its own.
func TestSkillSize(t *testing.T) {
	if n := unsafe.Sizeof(Skill{}); n > 224 {
		t.Errorf("a Skill is %d bytes, want at most 224", n)
	}
}

// TestKeptBody: what KeepBody and KeepBodyRef keep is what Body returns,
// and a later KeepBodyRef of nothing drops it.
func TestKeptBody(t *testing.T) {
	s := New(&Document{Frontmatter: Frontmatter{Name: "x", Description: "d"}}, "/nowhere", "SKILL.md", nil, &Origin{Kind: "folder"}, nil)
	if s.HasBody() {
		t.Fatal("a new skill keeps a body")
	}
	s.KeepBody("")
	if b, err := s.Body(); !s.HasBody() || b != "" || err != nil {
		t.Errorf("KeepBody(\"\"): HasBody %v, Body %q, %v", s.HasBody(), b, err)
	}
	s.KeepBody("text")
	if b, err := s.Body(); b != "text" || err != nil {
		t.Errorf("KeepBody: Body %q, %v", b, err)
	}
	s.KeepBodyRef(BodyRef{})
	if s.HasBody() {
		t.Error("KeepBodyRef of nothing left a body kept")
	}
}

// TestBatchNew: a skill made by Batch.New is the one New makes after
// TypedOnly, field by field, and what it holds is its own: changing the
// document and file list it was made of changes nothing in it.
func TestBatchNew(t *testing.T) {
	parse := func() *Document {
		doc, _, ok := ParseHeader([]byte(typicalSkillMD), "SKILL.md", "auth-build-13318")
		if !ok {
			t.Fatal("parse failed")
		}
		doc.Tags = append(doc.Tags, "") // an empty string in a list
		doc.RequiresTools = []string{}  // empty, not nil
		return doc
	}
	doc := parse()
	files := []File{{Path: "scripts/run.sh", Size: 10, ContentType: "text/x-shellscript", Script: true}, {Path: "notes.md", Size: 3}}
	origin := Origin{Kind: "folder", Root: "/r"}
	b := NewBatch()
	var got []*Skill
	for range 3 * batchChunk { // past a chunk of each
		got = append(got, b.New(doc, "/r/auth-build-13318", "SKILL.md", files, &origin, nil))
	}
	want := New(parse(), "/r/auth-build-13318", "SKILL.md", slices.Clone(files), &origin, nil)
	want.Meta.TypedOnly()
	for j := range doc.Tags {
		doc.Tags[j] = "changed"
	}
	for j := range doc.AllowedTools {
		doc.AllowedTools[j] = "changed"
	}
	doc.Description, doc.Name = "changed", "changed"
	files[0].Path = "changed"
	for _, s := range got {
		if diff := cmp.Diff(want, s, cmp.AllowUnexported(Skill{}), cmpopts.IgnoreFields(Skill{}, "digests")); diff != "" {
			t.Fatalf("Batch.New differs from New and TypedOnly (-want +got):\n%s", diff)
		}
		if s.Meta.RequiresTools == nil || s.Meta.Raw != nil || s.Meta.Metadata != nil {
			t.Fatalf("Meta %+v", s.Meta)
		}
	}
	if got[0].Meta == got[1].Meta || &got[0].Files[0] == &got[1].Files[0] {
		t.Fatal("two skills share their frontmatter or files")
	}
}

// TestDigestOfPooledBuffer: DigestOf reads through a pooled buffer, not a
// 32 KiB one of its own every call (the MCP resource reads and the
// well-known route hash every file they serve).
func TestDigestOfPooledBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 40<<10/16)
	c := BytesContent(data)
	if d, err := DigestOf(c); err != nil || d != DigestBytes(data) {
		t.Fatalf("DigestOf = %s, %v; want %s", d, err, DigestBytes(data))
	}
	// About 0.4 KB a call; under -race, where sync.Pool drops buffers at
	// random, 4-5 KB. A 32 KiB buffer a call (the old way) fails either.
	bound := uint64(4 << 10)
	if testutil.Race {
		bound = 16 << 10
	}
	if per := testutil.LeastAllocated(10, 20, func() { DigestOf(c) }); per > bound {
		t.Errorf("DigestOf of 40 KiB allocated %d bytes a call (at most %d)", per, bound)
	}
}
