// Package storetest is the conformance suite for store.Store: every
// implementation (SQLite, PostgreSQL) passes the same Run.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// FaultInjector is implemented by stores that can fail a statement on
// purpose (sqlstore.Store.SetFault). The rollback tests need it.
type FaultInjector interface {
	SetFault(f func(stmt string) error)
}

// Run runs the whole suite. open must return a new, empty store for each
// call, and arrange (t.Cleanup) to close it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateGetList", testCreateGetList},
		{"UpdateAndDelete", testUpdateAndDelete},
		{"Files", testFiles},
		{"Versions", testVersions},
		{"Restore", testRestore},
		{"Conflicts", testConflicts},
		{"PathRefusals", testPathRefusals},
		{"Limits", testLimits},
		{"TextRefusals", testTextRefusals},
		{"Binary", testBinary},
		{"Executable", testExecutable},
		{"EnableDisable", testEnableDisable},
		{"Overrides", testOverrides},
		{"Import", testImport},
		{"ImportRollback", testImportRollback},
		{"WriteRollback", testWriteRollback},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentCreates", testConcurrentCreates},
		{"Skills", testSkills},
		// Drafts, review, pins and withdrawal (review.go).
		{"Drafts", testDrafts},
		{"ApproveReject", testApproveReject},
		{"ApprovalRace", testApprovalRace},
		{"PinsWithdraw", testPinsWithdraw},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var ctx = context.Background()

// md is a SKILL.md with the given frontmatter lines after name and
// description.
func md(name, desc string, extra ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n", name, desc)
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "---\n# %s\n\nDo the %s thing.\n", name, name)
	return []byte(b.String())
}

func bundle(name string, files ...skill.BundleFile) *skill.Bundle {
	return &skill.Bundle{Content: md(name, "Use for "+name+"."), Files: files}
}

func file(p, data string) skill.BundleFile { return skill.BundleFile{Path: p, Data: []byte(data)} }

// clone copies a bundle, so a test can reuse one after Check normalised it.
func clone(b *skill.Bundle) *skill.Bundle {
	c := &skill.Bundle{Content: append([]byte(nil), b.Content...)}
	for _, f := range b.Files {
		f.Data = append([]byte{}, f.Data...)
		c.Files = append(c.Files, f)
	}
	return c
}

// digest is the digest the store must report for b.
func digest(t *testing.T, b *skill.Bundle) string {
	t.Helper()
	c := clone(b)
	if _, _, err := c.Check(skill.Limits{}); err != nil {
		t.Fatalf("test bundle refused: %v", err)
	}
	return c.Digest()
}

func put(t *testing.T, s store.Store, b *skill.Bundle, ifVersion int) *store.Record {
	t.Helper()
	rec, err := s.Put(ctx, clone(b), store.PutOptions{IfVersion: ifVersion, Source: "test", Provenance: "storetest"})
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return rec
}

// wantCode fails unless err is a *store.Error with code.
func wantCode(t *testing.T, err error, code string) *store.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	var e *store.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v, want a *store.Error %s", err, err, code)
	}
	if e.Code != code || store.ErrorCode(err) != code {
		t.Fatalf("got code %q (%v), want %s", e.Code, err, code)
	}
	return e
}

func hasProblem(e *store.Error, code, path string) bool {
	for _, p := range e.Problems {
		if p.Code == code && (path == "" || p.Path == path) && p.Severity == skill.Error {
			return true
		}
	}
	return false
}

// state is everything a store holds, for "nothing changed" comparisons.
type state struct {
	Records   []*store.Record
	Versions  map[string][]store.Version
	Bytes     map[string]map[int]*skill.Bundle
	Overrides map[string]bool
}

func snapshot(t *testing.T, s store.Store) state {
	t.Helper()
	st := state{Versions: map[string][]store.Version{}, Bytes: map[string]map[int]*skill.Bundle{}}
	var err error
	if st.Records, err = s.List(ctx); err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, r := range st.Records {
		vs, err := s.Versions(ctx, r.Name)
		if err != nil {
			t.Fatalf("Versions(%s): %v", r.Name, err)
		}
		st.Versions[r.Name] = vs
		st.Bytes[r.Name] = map[int]*skill.Bundle{}
		for _, v := range vs {
			b, _, err := s.Bundle(ctx, r.Name, v.Version)
			if err != nil {
				t.Fatalf("Bundle(%s, %d): %v", r.Name, v.Version, err)
			}
			st.Bytes[r.Name][v.Version] = b
			for _, f := range append([]skill.BundleFile{{Path: "SKILL.md", Data: b.Content}}, b.Files...) {
				data, err := s.ReadFile(ctx, r.Name, v.Version, f.Path)
				if err != nil {
					t.Fatalf("ReadFile(%s, %d, %s): %v", r.Name, v.Version, f.Path, err)
				}
				if !bytes.Equal(data, f.Data) {
					t.Fatalf("ReadFile(%s, %d, %s) differs from Bundle", r.Name, v.Version, f.Path)
				}
			}
		}
	}
	if st.Overrides, err = s.Overrides(ctx); err != nil {
		t.Fatalf("Overrides: %v", err)
	}
	return st
}

func sameState(t *testing.T, what string, before, after state) {
	t.Helper()
	if d := cmp.Diff(before, after, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("%s changed the store (-before +after):\n%s", what, d)
	}
}

func testCreateGetList(t *testing.T, s store.Store) {
	b := &skill.Bundle{
		Content: md("deploy", "Deploy with safety checks.", "version: 1.0", "category: ops", "tags: [ops, release]",
			"requires-tools: [bash, read_file]", "x-custom: kept"),
		Files: []skill.BundleFile{file("references/env.md", "# Envs\n"), file("./scripts/deploy.sh", "#!/bin/sh\necho hi\n")},
	}
	rec, err := s.Put(ctx, clone(b), store.PutOptions{IfVersion: 0, Source: "api", Provenance: "upload deploy.zip", Note: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID == "" || rec.Name != "deploy" || rec.Description != "Deploy with safety checks." || rec.Version != 1 ||
		rec.Digest != digest(t, b) || !rec.Enabled || !rec.IsDirectory || rec.Category != "ops" || rec.SkillVersion != "1.0" ||
		rec.Source != "api" || rec.Provenance != "upload deploy.zip" {
		t.Errorf("record: %+v", rec)
	}
	if d := cmp.Diff([]string{"ops", "release"}, rec.Tags); d != "" {
		t.Errorf("tags: %s", d)
	}
	if d := cmp.Diff([]string{"bash", "read_file"}, rec.RequiresTools); d != "" {
		t.Errorf("requires tools: %s", d)
	}
	if got := rec.Frontmatter.Keys(); !cmp.Equal(got, []string{"name", "description", "version", "category", "tags", "requires-tools", "x-custom"}) {
		t.Errorf("frontmatter keys (in written order): %v", got)
	}
	if v, _ := rec.Frontmatter.Get("version"); v != "1.0" {
		t.Errorf("frontmatter version kept as written: %#v", v)
	}
	if !bytes.Equal(rec.Content, b.Content) {
		t.Errorf("content differs")
	}
	wantFiles := []skill.File{
		{Path: "references/env.md", Size: 7, ContentType: "text/markdown"},
		{Path: "scripts/deploy.sh", Size: 18, ContentType: "application/x-sh", Script: true},
	}
	if d := cmp.Diff(wantFiles, rec.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if rec.Size != int64(len(b.Content))+7+18 {
		t.Errorf("size %d", rec.Size)
	}
	if rec.CreatedAt.IsZero() || !rec.UpdatedAt.Equal(rec.CreatedAt) {
		t.Errorf("times: %v %v", rec.CreatedAt, rec.UpdatedAt)
	}

	got, err := s.Get(ctx, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rec, got); d != "" {
		t.Errorf("Get differs from Put's record:\n%s", d)
	}
	put(t, s, &skill.Bundle{Content: md("alpha", "Plain.")}, 0)
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "deploy" {
		t.Fatalf("List: %v", list)
	}
	if list[0].IsDirectory || len(list[0].Files) != 0 || len(list[0].Content) == 0 {
		t.Errorf("inline skill: %+v", list[0])
	}
	if d := cmp.Diff(rec, list[1]); d != "" {
		t.Errorf("List differs from Put's record:\n%s", d)
	}

	_, err = s.Get(ctx, "nope")
	wantCode(t, err, store.NotFound)
	_, _, err = s.Bundle(ctx, "nope", 0)
	wantCode(t, err, store.NotFound)
	_, err = s.ReadFile(ctx, "nope", 0, "SKILL.md")
	wantCode(t, err, store.NotFound)
	_, err = s.ReadFile(ctx, "deploy", 0, "references/none.md")
	wantCode(t, err, store.NotFound)
	_, err = s.Versions(ctx, "nope")
	wantCode(t, err, store.NotFound)
}

func testUpdateAndDelete(t *testing.T, s store.Store) {
	put(t, s, bundle("notes", file("a.md", "A")), 0)
	// Create-only refuses an existing name.
	_, err := s.Put(ctx, bundle("notes"), store.PutOptions{IfVersion: 0})
	if e := wantCode(t, err, store.Conflict); e.Current != 1 {
		t.Errorf("Current = %d, want 1", e.Current)
	}
	b2 := &skill.Bundle{Content: md("notes", "Updated notes."), Files: []skill.BundleFile{file("b.md", "B")}}
	rec := put(t, s, b2, 1)
	if rec.Version != 2 || rec.Description != "Updated notes." || len(rec.Files) != 1 || rec.Files[0].Path != "b.md" {
		t.Fatalf("update: %+v", rec)
	}
	if !rec.UpdatedAt.After(rec.CreatedAt) && !rec.UpdatedAt.Equal(rec.CreatedAt) {
		t.Errorf("times: %v %v", rec.CreatedAt, rec.UpdatedAt)
	}
	if _, err := s.ReadFile(ctx, "notes", 0, "a.md"); store.ErrorCode(err) != store.NotFound {
		t.Errorf("a.md is gone from the current version: %v", err)
	}
	// The same bytes again change nothing.
	same := put(t, s, b2, -1)
	if same.Version != 2 {
		t.Errorf("identical Put made version %d", same.Version)
	}
	// Unconditional update.
	if rec := put(t, s, bundle("notes"), -1); rec.Version != 3 || rec.IsDirectory {
		t.Errorf("unconditional: %+v", rec)
	}
	// An update of a skill that is gone is a conflict.
	_, err = s.Put(ctx, bundle("ghost"), store.PutOptions{IfVersion: 4})
	if e := wantCode(t, err, store.Conflict); e.Current != 0 {
		t.Errorf("Current = %d, want 0", e.Current)
	}

	if err := s.Delete(ctx, "notes", 2); err == nil {
		t.Fatal("stale delete succeeded")
	} else if e := wantCode(t, err, store.Conflict); e.Current != 3 {
		t.Errorf("Current = %d", e.Current)
	}
	if err := s.Delete(ctx, "notes", 3); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "notes")
	wantCode(t, err, store.NotFound)
	_, err = s.Versions(ctx, "notes")
	wantCode(t, err, store.NotFound)
	wantCode(t, s.Delete(ctx, "notes", -1), store.NotFound)
	// The name is free again, and history starts over.
	if rec := put(t, s, b2, 0); rec.Version != 1 {
		t.Errorf("recreated at version %d", rec.Version)
	}
	if data, err := s.ReadFile(ctx, "notes", 0, "b.md"); err != nil || string(data) != "B" {
		t.Errorf("recreated file: %q %v", data, err)
	}
}

func testFiles(t *testing.T, s store.Store) {
	put(t, s, bundle("pdf"), 0)
	rec, err := s.PutFile(ctx, "pdf", "./references/forms.md", []byte("# Forms\n"), false, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 2 || !rec.IsDirectory || len(rec.Files) != 1 || rec.Files[0].Path != "references/forms.md" {
		t.Fatalf("PutFile add: %+v", rec)
	}
	rec, err = s.PutFile(ctx, "pdf", "references/forms.md", []byte("# Forms v2\n"), false, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 3 || len(rec.Files) != 1 || rec.Files[0].Size != 11 {
		t.Fatalf("PutFile replace: %+v", rec)
	}
	if data, _ := s.ReadFile(ctx, "pdf", 0, "references/forms.md"); string(data) != "# Forms v2\n" {
		t.Errorf("read %q", data)
	}
	// The same bytes again change nothing.
	if rec, err := s.PutFile(ctx, "pdf", "references/forms.md", []byte("# Forms v2\n"), false, 3); err != nil || rec.Version != 3 {
		t.Errorf("identical PutFile: %v %v", rec, err)
	}
	// SKILL.md through PutFile replaces the content, and is still checked.
	content := md("pdf", "Fill PDF forms.")
	rec, err = s.PutFile(ctx, "pdf", "SKILL.md", content, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 4 || rec.Description != "Fill PDF forms." || !bytes.Equal(rec.Content, content) {
		t.Fatalf("PutFile SKILL.md: %+v", rec)
	}
	_, err = s.PutFile(ctx, "pdf", "SKILL.md", []byte("no frontmatter"), false, 4)
	wantCode(t, err, store.Invalid)
	_, err = s.PutFile(ctx, "pdf", "SKILL.md", md("other", "Renamed."), false, 4)
	wantCode(t, err, store.Invalid)

	rec, err = s.DeleteFile(ctx, "pdf", "references/forms.md", 4)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 5 || rec.IsDirectory || len(rec.Files) != 0 {
		t.Fatalf("DeleteFile: %+v", rec)
	}
	_, err = s.DeleteFile(ctx, "pdf", "references/forms.md", 5)
	wantCode(t, err, store.NotFound)
	_, err = s.DeleteFile(ctx, "pdf", "SKILL.md", 5)
	wantCode(t, err, store.Invalid)
	_, err = s.PutFile(ctx, "nope", "a.md", []byte("x"), false, -1)
	wantCode(t, err, store.NotFound)
	_, err = s.DeleteFile(ctx, "nope", "a.md", -1)
	wantCode(t, err, store.NotFound)
	// The old versions still hold the file.
	if data, err := s.ReadFile(ctx, "pdf", 2, "references/forms.md"); err != nil || string(data) != "# Forms\n" {
		t.Errorf("version 2: %q %v", data, err)
	}
}

func testVersions(t *testing.T, s store.Store) {
	b1 := bundle("notes", file("a.md", "one"))
	b2 := bundle("notes", file("a.md", "two"), file("b.md", "bee"))
	rec1 := put(t, s, b1, 0)
	if _, err := s.Put(ctx, clone(b2), store.PutOptions{IfVersion: 1, Source: "cli", Provenance: "notes/", Note: "second"}); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Versions(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 {
		t.Fatalf("versions (newest first): %+v", vs)
	}
	if vs[0].Digest != digest(t, b2) || vs[0].Files != 2 || vs[0].Note != "second" || vs[0].Source != "cli" || vs[0].Provenance != "notes/" ||
		vs[0].Size != int64(len(b2.Content)+6) || vs[0].CreatedAt.IsZero() {
		t.Errorf("version 2: %+v", vs[0])
	}
	if vs[1].Digest != rec1.Digest || vs[1].Files != 1 || vs[1].Source != "test" {
		t.Errorf("version 1: %+v", vs[1])
	}
	// Old bytes stay readable, by Bundle and by ReadFile.
	old, orec, err := s.Bundle(ctx, "notes", 1)
	if err != nil {
		t.Fatal(err)
	}
	if old.Digest() != rec1.Digest || orec.Version != 1 || orec.Digest != rec1.Digest || len(orec.Files) != 1 || orec.Name != "notes" {
		t.Errorf("Bundle(1): %+v", orec)
	}
	if data, err := s.ReadFile(ctx, "notes", 1, "a.md"); err != nil || string(data) != "one" {
		t.Errorf("ReadFile(1): %q %v", data, err)
	}
	if data, err := s.ReadFile(ctx, "notes", 0, "a.md"); err != nil || string(data) != "two" {
		t.Errorf("ReadFile(0): %q %v", data, err)
	}
	if data, err := s.ReadFile(ctx, "notes", 2, "SKILL.md"); err != nil || !bytes.Equal(data, b2.Content) {
		t.Errorf("ReadFile(2, SKILL.md): %q %v", data, err)
	}
	if _, err := s.ReadFile(ctx, "notes", 1, "b.md"); store.ErrorCode(err) != store.NotFound {
		t.Errorf("b.md did not exist at version 1: %v", err)
	}
	cur, crec, err := s.Bundle(ctx, "notes", 0)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Digest() != digest(t, b2) || crec.Version != 2 || len(cur.Files) != 2 || cur.Files[0].Path != "a.md" || cur.Files[1].ContentType != "text/markdown" {
		t.Errorf("Bundle(0): %+v %+v", cur, crec)
	}
	_, _, err = s.Bundle(ctx, "notes", 7)
	wantCode(t, err, store.NotFound)
	_, err = s.ReadFile(ctx, "notes", 7, "SKILL.md")
	wantCode(t, err, store.NotFound)
}

func testRestore(t *testing.T, s store.Store) {
	b1 := bundle("notes", file("a.md", "one"), file("bin/x.bin", "\x00\x01"))
	rec1 := put(t, s, b1, 0)
	put(t, s, bundle("notes", file("a.md", "two")), 1)
	rec, err := s.Restore(ctx, "notes", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 3 || rec.Digest != rec1.Digest || len(rec.Files) != 2 {
		t.Fatalf("restore: %+v", rec)
	}
	vs, _ := s.Versions(ctx, "notes")
	if len(vs) != 3 || vs[0].Note != "restored from version 1" {
		t.Errorf("versions: %+v", vs)
	}
	if data, _ := s.ReadFile(ctx, "notes", 0, "bin/x.bin"); !bytes.Equal(data, []byte{0, 1}) {
		t.Errorf("restored bytes %q", data)
	}
	// Restoring the current bytes still makes a new version: it was asked for.
	if rec, err := s.Restore(ctx, "notes", 3, 3); err != nil || rec.Version != 4 || rec.Digest != rec1.Digest {
		t.Errorf("restore of current: %+v %v", rec, err)
	}
	_, err = s.Restore(ctx, "notes", 9, -1)
	wantCode(t, err, store.NotFound)
	_, err = s.Restore(ctx, "nope", 1, -1)
	wantCode(t, err, store.NotFound)
	_, err = s.Restore(ctx, "notes", 1, 2)
	if e := wantCode(t, err, store.Conflict); e.Current != 4 {
		t.Errorf("Current = %d", e.Current)
	}
}

func testConflicts(t *testing.T, s store.Store) {
	put(t, s, bundle("notes", file("a.md", "A")), 0)
	put(t, s, bundle("notes", file("a.md", "A2")), 1)
	before := snapshot(t, s)
	check := func(what string, err error) {
		t.Helper()
		if e := wantCode(t, err, store.Conflict); e.Current != 2 || e.Message == "" {
			t.Errorf("%s: %+v", what, e)
		}
	}
	_, err := s.Put(ctx, bundle("notes", file("a.md", "A3")), store.PutOptions{IfVersion: 1})
	check("Put", err)
	_, err = s.PutFile(ctx, "notes", "b.md", []byte("B"), false, 1)
	check("PutFile", err)
	_, err = s.PutFile(ctx, "notes", "b.md", []byte("B"), false, 0)
	check("PutFile ifVersion 0", err)
	_, err = s.DeleteFile(ctx, "notes", "a.md", 1)
	check("DeleteFile", err)
	_, err = s.Restore(ctx, "notes", 1, 1)
	check("Restore", err)
	check("Delete", s.Delete(ctx, "notes", 1))
	sameState(t, "stale writes", before, snapshot(t, s))
}

func testPathRefusals(t *testing.T, s store.Store) {
	put(t, s, bundle("notes", file("a.md", "A")), 0)
	before := snapshot(t, s)
	bad := []struct{ path, code string }{
		{"../x", skill.CodePathDotDot},
		{"a/../../x", skill.CodePathDotDot},
		{"/abs", skill.CodePathAbsolute},
		{"C:/x", skill.CodePathAbsolute},
		{`a\b`, skill.CodePathChars},
		{"a\x00b", skill.CodePathChars},
		{"a//b", skill.CodePathSegment},
		{"a/", skill.CodePathSegment},
		{"", skill.CodePathEmpty},
		{"Skill.MD", skill.CodePathSkillMD}, // a second entry file at the top
		{"skill.md", skill.CodePathSkillMD},
		{strings.Repeat("a", 300), skill.CodePathLong},
	}
	for _, tc := range bad {
		_, err := s.Put(ctx, bundle("notes", file("ok.md", "ok"), file(tc.path, "x")), store.PutOptions{IfVersion: -1})
		e := wantCode(t, err, store.Invalid)
		if !hasProblem(e, tc.code, tc.path) || e.Field != "files[1]" || e.Path != tc.path {
			t.Errorf("Put %q: field %q path %q problems %v", tc.path, e.Field, e.Path, e.Problems)
		}
		_, err = s.PutFile(ctx, "notes", tc.path, []byte("x"), false, -1)
		if tc.path == "" {
			wantCode(t, err, store.Invalid)
		} else if e := wantCode(t, err, store.Invalid); !hasProblem(e, tc.code, tc.path) || e.Path != tc.path {
			t.Errorf("PutFile %q: path %q problems %v", tc.path, e.Path, e.Problems)
		}
		_, err = s.DeleteFile(ctx, "notes", tc.path, -1)
		wantCode(t, err, store.Invalid)
		if tc.code != skill.CodePathSkillMD {
			_, err = s.ReadFile(ctx, "notes", 0, tc.path)
			if e := wantCode(t, err, store.Invalid); e.Field != "path" {
				t.Errorf("ReadFile %q: %+v", tc.path, e)
			}
		}
		res, err := s.Import(ctx, []store.ImportItem{{Bundle: bundle("other", file(tc.path, "x"))}})
		if err != nil || len(res) != 1 || res[0].Action != store.ActionRefused {
			t.Errorf("Import %q: %+v %v", tc.path, res, err)
		}
	}
	// Two files with one clean path.
	_, err := s.Put(ctx, bundle("notes", file("a.md", "1"), file("./a.md", "2")), store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeDuplicatePath, "a.md") {
		t.Errorf("duplicate: %v", e.Problems)
	}
	// Every problem is listed, not just the first.
	_, err = s.Put(ctx, bundle("notes", file("../x", "1"), file("/y", "2")), store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); len(e.Problems) != 2 {
		t.Errorf("problems: %v", e.Problems)
	}
	// Content and name problems.
	_, err = s.Put(ctx, &skill.Bundle{Content: []byte("# no frontmatter\n")}, store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); e.Field != "content" {
		t.Errorf("no frontmatter: %+v", e)
	}
	_, err = s.Put(ctx, &skill.Bundle{Content: md("Bad_Name", "x")}, store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); e.Field != "name" {
		t.Errorf("bad name: %+v", e)
	}
	_, err = s.Put(ctx, nil, store.PutOptions{})
	wantCode(t, err, store.Invalid)
	sameState(t, "refused writes", before, snapshot(t, s))
	if _, err := s.Get(ctx, "other"); store.ErrorCode(err) != store.NotFound {
		t.Errorf("a refused import was written: %v", err)
	}
}

// testTextRefusals: control characters in SKILL.md or its fields, file
// names equal after Unicode normalisation and frontmatter alias bombs are
// refused by every store alike, as invalid input naming the field (a NUL
// once got 200 from SQLite and 500 from PostgreSQL).
func testTextRefusals(t *testing.T, s store.Store) {
	put(t, s, bundle("text"), 0)
	before := snapshot(t, s)
	bomb := "a0: &a0 [lol]"
	for i := 1; i <= 9; i++ {
		bomb += fmt.Sprintf("\na%d: &a%d [%s]", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	cases := []struct {
		name, code, field string
		b                 *skill.Bundle
	}{
		{"NUL in description", skill.CodeControlChar, "description", &skill.Bundle{Content: md("text", `"a\0b"`)}},
		{"ESC in category", skill.CodeControlChar, "category", &skill.Bundle{Content: md("text", "d", `category: "\e[31m"`)}},
		{"NUL in a tag", skill.CodeControlChar, "tags[0]", &skill.Bundle{Content: md("text", "d", `tags: ["a\0"]`)}},
		{"NUL in metadata", skill.CodeControlChar, "metadata.k", &skill.Bundle{Content: md("text", "d", "metadata:", `  k: "\0"`)}},
		{"NUL in the body", skill.CodeControlChar, "content", &skill.Bundle{Content: append(md("text", "d"), "tail \x00\n"...)}},
		{"NFC duplicate", skill.CodeDuplicatePath, "files[1]", bundle("text", file("caf\u00e9.md", "1"), file("cafe\u0301.md", "2"))},
		{"bidi file name", skill.CodePathChars, "files[0]", bundle("text", file("a\u202egnp.md", "1"))},
		{"alias bomb", skill.CodeYAMLAliasLimit, "content", &skill.Bundle{Content: md("text", "d", bomb)}},
	}
	for _, tc := range cases {
		_, err := s.Put(ctx, clone(tc.b), store.PutOptions{IfVersion: -1})
		e := wantCode(t, err, store.Invalid)
		if !hasProblem(e, tc.code, "") || e.Field != tc.field {
			t.Errorf("Put %s: field %q problems %v", tc.name, e.Field, e.Problems)
		}
		res, err := s.Import(ctx, []store.ImportItem{{Bundle: clone(tc.b)}})
		if err != nil || len(res) != 1 || res[0].Action != store.ActionRefused || store.ErrorCode(res[0].Error) != store.Invalid {
			t.Errorf("Import %s: %+v %v", tc.name, res, err)
		}
	}
	_, err := s.PutFile(ctx, "text", "\x1b[31m.md", []byte("x"), false, -1)
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodePathChars, "") {
		t.Errorf("PutFile with ESC: %v", e.Problems)
	}
	sameState(t, "refused text", before, snapshot(t, s))
	// Tabs and line breaks are text.
	put(t, s, &skill.Bundle{Content: md("text", "|", "  two\tcolumns", "  and lines")}, -1)
}

func testLimits(t *testing.T, s store.Store) {
	put(t, s, bundle("big"), 0)
	before := snapshot(t, s)
	mib := int(skill.DefaultMaxFileSize)
	over := skill.BundleFile{Path: "data/huge.bin", Data: make([]byte, mib+1)}
	_, err := s.Put(ctx, bundle("big", over), store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeTooLarge, "data/huge.bin") {
		t.Errorf("file over 1 MiB: %v", e.Problems)
	}
	_, err = s.PutFile(ctx, "big", "data/huge.bin", over.Data, false, -1)
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeTooLarge, "data/huge.bin") {
		t.Errorf("PutFile over 1 MiB: %v", e.Problems)
	}
	many := bundle("big")
	for i := range skill.DefaultMaxFiles + 1 {
		many.Files = append(many.Files, file(fmt.Sprintf("f/%03d.txt", i), "x"))
	}
	_, err = s.Put(ctx, many, store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeTooManyFiles, "") {
		t.Errorf("over 512 files: %v", e.Problems)
	}
	total := bundle("big")
	for i := range 16 {
		total.Files = append(total.Files, skill.BundleFile{Path: fmt.Sprintf("blob/%02d.bin", i), Data: make([]byte, mib)})
	}
	_, err = s.Put(ctx, total, store.PutOptions{IfVersion: -1})
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeTooLarge, "") || e.Field != "files" {
		t.Errorf("over 16 MiB in all: %+v", e)
	}
	// Tighter limits of the caller's own.
	_, err = s.Put(ctx, bundle("big", file("a.txt", "12345")), store.PutOptions{IfVersion: -1, Limits: skill.Limits{MaxFileSize: 4}})
	if e := wantCode(t, err, store.Invalid); !hasProblem(e, skill.CodeTooLarge, "") {
		t.Errorf("caller's limit: %v", e.Problems)
	}
	res, err := s.Import(ctx, []store.ImportItem{{Bundle: bundle("huge", over)}, {Bundle: bundle("tight", file("a.txt", "12345")), Limits: skill.Limits{MaxFiles: 1, MaxFileSize: 4}}})
	if err != nil || res[0].Action != store.ActionRefused || !hasProblem(res[0].Error.(*store.Error), skill.CodeTooLarge, "") ||
		res[1].Action != store.ActionRefused || !hasProblem(res[1].Error.(*store.Error), skill.CodeTooLarge, "a.txt") {
		t.Errorf("import over the limit: %+v %v", res, err)
	}
	sameState(t, "over-limit writes", before, snapshot(t, s))

	// Exactly at the limits is fine; a large text file is a warning.
	text := strings.Repeat("word ", 12_000) // 60 KB
	rec, err := s.Put(ctx, bundle("big", skill.BundleFile{Path: "data/max.bin", Data: make([]byte, mib)}, file("references/long.md", text)),
		store.PutOptions{IfVersion: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Warnings) != 1 || rec.Warnings[0].Code != skill.CodeLargeText || rec.Warnings[0].Path != "references/long.md" || rec.Warnings[0].Severity != skill.Warning {
		t.Errorf("warnings: %v", rec.Warnings)
	}
	// Exactly 512 files, each with bytes of its own.
	full := bundle("full")
	for i := range skill.DefaultMaxFiles {
		full.Files = append(full.Files, file(fmt.Sprintf("f/%03d.txt", i), fmt.Sprintf("file %d\n", i)))
	}
	if rec := put(t, s, full, 0); len(rec.Files) != skill.DefaultMaxFiles || rec.Files[511].Path != "f/511.txt" {
		t.Errorf("512 files: %d listed", len(rec.Files))
	}
	got, _, err := s.Bundle(ctx, "full", 1)
	if err != nil || got.Digest() != digest(t, full) {
		t.Errorf("512 files read back: %v", err)
	}
	if data, err := s.ReadFile(ctx, "full", 0, "f/300.txt"); err != nil || string(data) != "file 300\n" {
		t.Errorf("f/300.txt: %q %v", data, err)
	}
	res, err = s.Import(ctx, []store.ImportItem{{Bundle: bundle("long", file("long.md", text))}})
	if err != nil || res[0].Action != store.ActionCreated || len(res[0].Problems) != 1 || res[0].Problems[0].Code != skill.CodeLargeText {
		t.Errorf("import with a warning: %+v %v", res, err)
	}
	if data, err := s.ReadFile(ctx, "big", 0, "references/long.md"); err != nil || string(data) != text {
		t.Errorf("long text: %d bytes, %v", len(data), err)
	}
}

func testBinary(t *testing.T, s store.Store) {
	all := make([]byte, 256*4)
	for i := range all {
		all[i] = byte(i)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), all...)
	b := bundle("images", skill.BundleFile{Path: "assets/logo.png", Data: png},
		skill.BundleFile{Path: "assets/blob", Data: []byte{0xff, 0xfe, 0x00, 0x80, 'a'}},
		skill.BundleFile{Path: "assets/latin1.txt", Data: []byte("caf\xe9")},
		skill.BundleFile{Path: "assets/empty.md", Data: []byte{}})
	rec := put(t, s, b, 0)
	want := map[string]struct {
		ct  string
		bin bool
	}{
		"assets/logo.png":   {"image/png", true},
		"assets/blob":       {"application/octet-stream", true},
		"assets/latin1.txt": {"text/plain", true},
		"assets/empty.md":   {"text/markdown", false},
	}
	for _, f := range rec.Files {
		if w := want[f.Path]; f.ContentType != w.ct || f.Binary != w.bin {
			t.Errorf("%s: %+v, want %+v", f.Path, f, w)
		}
	}
	for _, f := range b.Files {
		data, err := s.ReadFile(ctx, "images", 0, f.Path)
		if err != nil || !bytes.Equal(data, f.Data) {
			t.Errorf("%s: read %q %v, want %q", f.Path, data, err, f.Data)
		}
	}
	got, _, err := s.Bundle(ctx, "images", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != rec.Digest {
		t.Errorf("bundle digest %s, want %s", got.Digest(), rec.Digest)
	}
	for _, f := range got.Files {
		if w := want[f.Path]; f.Binary != w.bin || f.ContentType != w.ct || f.Data == nil {
			t.Errorf("bundle %s: binary %v type %q", f.Path, f.Binary, f.ContentType)
		}
	}
	// Binary content survives an unrelated edit.
	if _, err := s.PutFile(ctx, "images", "notes.md", []byte("n"), false, 1); err != nil {
		t.Fatal(err)
	}
	if data, _ := s.ReadFile(ctx, "images", 0, "assets/logo.png"); !bytes.Equal(data, png) {
		t.Error("png changed after an edit")
	}
}

func testExecutable(t *testing.T, s store.Store) {
	b := bundle("tools", skill.BundleFile{Path: "bin/run", Data: []byte("#!/bin/sh\n"), Executable: true}, file("bin/data.txt", "d"))
	rec := put(t, s, b, 0)
	files := map[string]skill.File{}
	for _, f := range rec.Files {
		files[f.Path] = f
	}
	if f := files["bin/run"]; !f.Executable || !f.Script {
		t.Errorf("bin/run: %+v", f)
	}
	if f := files["bin/data.txt"]; f.Executable || f.Script {
		t.Errorf("bin/data.txt: %+v", f)
	}
	// Flipping only the bit is a change of its own (the digest covers it).
	rec2, err := s.PutFile(ctx, "tools", "bin/data.txt", []byte("d"), true, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Version != 2 || rec2.Digest == rec.Digest {
		t.Errorf("executable bit change: %+v", rec2)
	}
	got, _, _ := s.Bundle(ctx, "tools", 0)
	for _, f := range got.Files {
		if !f.Executable {
			t.Errorf("%s lost its executable bit", f.Path)
		}
	}
	old, _, _ := s.Bundle(ctx, "tools", 1)
	if old.Files[0].Path != "bin/data.txt" || old.Files[0].Executable || !old.Files[1].Executable {
		t.Errorf("version 1 bits: %+v", old.Files)
	}
}

func testEnableDisable(t *testing.T, s store.Store) {
	put(t, s, bundle("notes"), 0)
	put(t, s, bundle("other"), 0)
	if err := s.SetEnabled(ctx, "notes", false); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Get(ctx, "notes")
	if rec.Enabled || rec.Version != 1 {
		t.Errorf("disabled: %+v", rec)
	}
	if vs, _ := s.Versions(ctx, "notes"); len(vs) != 1 {
		t.Errorf("disabling made a version: %+v", vs)
	}
	skills, _, err := store.Skills(ctx, s)
	if err != nil || len(skills) != 1 || skills[0].Name != "other" {
		t.Errorf("Skills with notes disabled: %v %v", skills, err)
	}
	// An update keeps the skill disabled.
	if rec := put(t, s, bundle("notes", file("a.md", "a")), 1); rec.Enabled {
		t.Error("an update enabled the skill")
	}
	if err := s.SetEnabled(ctx, "notes", true); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.Get(ctx, "notes"); !rec.Enabled {
		t.Error("not enabled again")
	}
	wantCode(t, s.SetEnabled(ctx, "nope", true), store.NotFound)
}

func testOverrides(t *testing.T, s store.Store) {
	if m, err := s.Overrides(ctx); err != nil || len(m) != 0 {
		t.Fatalf("empty overrides: %v %v", m, err)
	}
	for _, o := range []struct {
		key string
		on  bool
	}{{"plugin:acme/deploy", false}, {"folder:/skills/notes", true}, {"plugin:acme/deploy", true}, {"plugin:acme/lint", false}} {
		if err := s.SetOverride(ctx, o.key, o.on); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.Overrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]bool{"plugin:acme/deploy": true, "folder:/skills/notes": true, "plugin:acme/lint": false}, m); d != "" {
		t.Errorf("overrides: %s", d)
	}
	wantCode(t, s.SetOverride(ctx, "", true), store.Invalid)
	wantCode(t, s.SetOverride(ctx, " x", true), store.Invalid)
}

func testImport(t *testing.T, s store.Store) {
	put(t, s, bundle("same", file("a.md", "A")), 0)
	put(t, s, bundle("changed", file("a.md", "A")), 0)
	items := []store.ImportItem{
		{Bundle: bundle("same", file("a.md", "A")), Source: "import", Provenance: "pack.zip"},
		{Bundle: bundle("fresh", file("scripts/x.sh", "#!/bin/sh\n")), Source: "import", Provenance: "pack.zip"},
		{Bundle: &skill.Bundle{Content: []byte("---\nname: broken\n---\nno description\n")}, Provenance: "pack.zip"},
		{Bundle: bundle("changed", file("a.md", "A2")), Provenance: "https://example.com/pack"},
		{Bundle: bundle("fresh")},
		{Bundle: nil},
		{Bundle: bundle("escape", file("../../etc/passwd", "x"))},
		{Err: errors.New("pack.json: [7]: not valid JSON"), Provenance: "pack.json [7]"},
	}
	// All or nothing: a refusal keeps every item out, and each says why.
	before := snapshot(t, s)
	res, err := s.Import(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	wantActions := []string{store.ActionSkipped, store.ActionSkipped, store.ActionRefused, store.ActionSkipped,
		store.ActionRefused, store.ActionRefused, store.ActionRefused, store.ActionRefused}
	if len(res) != len(wantActions) {
		t.Fatalf("results: %+v", res)
	}
	for i, w := range wantActions {
		r := res[i]
		if r.Action != w || r.Error == nil || r.Version != 0 || r.Provenance != items[i].Provenance {
			t.Errorf("all or nothing, item %d: %+v, want %s with an error", i, r, w)
		}
		if w == store.ActionSkipped && !strings.Contains(r.Error.Error(), `not written because item 2 ("broken") and 4 other items of this import were refused`) {
			t.Errorf("item %d: skipped without naming the refusal: %v", i, r.Error)
		}
	}
	if res[1].Name != "fresh" || res[3].Name != "changed" || res[7].Error != items[7].Err {
		t.Errorf("all or nothing: %+v", res)
	}
	sameState(t, "an import with refused items", before, snapshot(t, s))

	// ImportPartial writes the accepted items.
	items = items[:7]
	res, err = store.ImportPartial(ctx, s, items)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, action string
		version      int
	}{
		{"same", store.ActionUnchanged, 1},
		{"fresh", store.ActionCreated, 1},
		{"broken", store.ActionRefused, 0},
		{"changed", store.ActionUpdated, 2},
		{"fresh", store.ActionRefused, 0},
		{"", store.ActionRefused, 0},
		{"escape", store.ActionRefused, 0},
	}
	if len(res) != len(want) {
		t.Fatalf("results: %+v", res)
	}
	for i, w := range want {
		r := res[i]
		if r.Name != w.name || r.Action != w.action || r.Version != w.version || r.Provenance != items[i].Provenance {
			t.Errorf("item %d: %+v, want %+v", i, r, w)
		}
		if (w.action == store.ActionRefused) != (r.Error != nil) {
			t.Errorf("item %d: error %v", i, r.Error)
		}
	}
	if e := res[2].Error.(*store.Error); e.Code != store.Invalid || !hasProblem(e, skill.CodeDescriptionMissing, "") {
		t.Errorf("broken: %+v", e)
	}
	if !hasProblem(res[6].Error.(*store.Error), skill.CodePathDotDot, "../../etc/passwd") || len(res[6].Problems) == 0 {
		t.Errorf("escape: %+v", res[6])
	}
	if _, err := s.Get(ctx, "escape"); store.ErrorCode(err) != store.NotFound {
		t.Error("a refused item was written")
	}
	fresh, err := s.Get(ctx, "fresh")
	if err != nil || fresh.Source != "import" || fresh.Provenance != "pack.zip" || len(fresh.Files) != 1 {
		t.Errorf("fresh: %+v %v", fresh, err)
	}
	changed, _ := s.Get(ctx, "changed")
	if changed.Source != "import" || changed.Provenance != "https://example.com/pack" {
		t.Errorf("changed: source %q provenance %q", changed.Source, changed.Provenance)
	}
	if vs, _ := s.Versions(ctx, "same"); len(vs) != 1 {
		t.Errorf("unchanged skill got a version: %+v", vs)
	}
	// Importing again changes nothing.
	before = snapshot(t, s)
	res, err = s.Import(ctx, items[:2])
	if err != nil || res[0].Action != store.ActionUnchanged || res[1].Action != store.ActionUnchanged || res[1].Version != 1 {
		t.Errorf("re-import: %+v %v", res, err)
	}
	sameState(t, "an unchanged import", before, snapshot(t, s))
	if res, err := s.Import(ctx, nil); err != nil || len(res) != 0 {
		t.Errorf("empty import: %v %v", res, err)
	}
}

var errInjected = errors.New("injected failure")

// faultLoop runs op with the n-th statement failing, for n = 1, 2, … until
// op runs without reaching a failure, and checks that every failed run left
// the store exactly as it was. It returns how many runs failed.
func faultLoop(t *testing.T, s store.Store, op func() error) int {
	t.Helper()
	fi, ok := s.(FaultInjector)
	if !ok {
		t.Fatalf("%T does not implement storetest.FaultInjector", s)
	}
	for n := 1; ; n++ {
		before := snapshot(t, s)
		var mu sync.Mutex
		count := 0
		fi.SetFault(func(string) error {
			mu.Lock()
			defer mu.Unlock()
			count++
			if count == n {
				return errInjected
			}
			return nil
		})
		err := op()
		fi.SetFault(nil)
		if count < n {
			if err != nil {
				t.Fatalf("without a failure: %v", err)
			}
			return n - 1
		}
		if err == nil {
			t.Fatalf("statement %d failed, but the operation succeeded", n)
		}
		if !errors.Is(err, errInjected) || store.ErrorCode(err) != store.Internal {
			t.Fatalf("statement %d: got %v (code %s), want the injected failure as internal", n, err, store.ErrorCode(err))
		}
		sameState(t, fmt.Sprintf("a failure at statement %d", n), before, snapshot(t, s))
		if n > 500 {
			t.Fatal("the operation never completes")
		}
	}
}

func testImportRollback(t *testing.T, s store.Store) {
	put(t, s, bundle("keep", file("a.md", "A")), 0)
	put(t, s, bundle("update", file("a.md", "A"), file("b.bin", "\x00")), 0)
	if err := s.SetOverride(ctx, "plugin:x/y", false); err != nil {
		t.Fatal(err)
	}
	items := []store.ImportItem{
		{Bundle: bundle("update", file("a.md", "A2"), file("c.md", "C"))},
		{Bundle: bundle("keep", file("a.md", "A"))},
		{Bundle: bundle("new-one", file("x.md", "X"), skill.BundleFile{Path: "run.sh", Data: []byte("#!/bin/sh\n"), Executable: true})},
		{Bundle: bundle("new-two")},
	}
	failures := faultLoop(t, s, func() error {
		fresh := make([]store.ImportItem, len(items))
		for i, it := range items {
			fresh[i] = store.ImportItem{Bundle: clone(it.Bundle)}
		}
		_, err := s.Import(ctx, fresh)
		return err
	})
	if failures < 10 {
		t.Errorf("only %d statements: the import did not get far", failures)
	}
	t.Logf("a failure at each of %d statements rolled the import back", failures)
	list, _ := s.List(ctx)
	if len(list) != 4 {
		t.Errorf("after the import: %d skills", len(list))
	}
}

func testWriteRollback(t *testing.T, s store.Store) {
	put(t, s, bundle("notes", file("a.md", "A"), file("b.md", "B")), 0)
	faultLoop(t, s, func() error {
		_, err := s.Put(ctx, bundle("notes", file("a.md", "A2"), file("c.md", "C")), store.PutOptions{IfVersion: -1})
		return err
	})
	faultLoop(t, s, func() error {
		_, err := s.PutFile(ctx, "notes", "d.md", []byte("D"), false, -1)
		return err
	})
	faultLoop(t, s, func() error {
		_, err := s.Restore(ctx, "notes", 1, -1)
		return err
	})
	faultLoop(t, s, func() error {
		_, err := s.Put(ctx, bundle("other", file("o.md", "O")), store.PutOptions{IfVersion: 0})
		return err
	})
	if vs, _ := s.Versions(ctx, "notes"); len(vs) != 4 {
		t.Errorf("versions: %+v", vs)
	}
}

func testConcurrentUpdates(t *testing.T, s store.Store) {
	put(t, s, bundle("shared", file("a.md", "start")), 0)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, errs[i] = s.Put(ctx, bundle("shared", file("a.md", fmt.Sprintf("writer %d", i))), store.PutOptions{IfVersion: 1})
			} else {
				_, errs[i] = s.PutFile(ctx, "shared", "a.md", []byte(fmt.Sprintf("writer %d", i)), false, 1)
			}
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch store.ErrorCode(err) {
		case "":
			if winner >= 0 {
				t.Errorf("writers %d and %d both won", winner, i)
			}
			winner = i
		case store.Conflict:
			if e := err.(*store.Error); e.Current != 2 {
				t.Errorf("writer %d: Current = %d, want 2", i, e.Current)
			}
		default:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	rec, _ := s.Get(ctx, "shared")
	data, _ := s.ReadFile(ctx, "shared", 0, "a.md")
	if rec.Version != 2 || string(data) != fmt.Sprintf("writer %d", winner) {
		t.Errorf("after the race: version %d, a.md %q, winner %d", rec.Version, data, winner)
	}
	if vs, _ := s.Versions(ctx, "shared"); len(vs) != 2 {
		t.Errorf("versions: %+v", vs)
	}
}

func testConcurrentCreates(t *testing.T, s store.Store) {
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Put(ctx, bundle("born", file("who.md", fmt.Sprint(i))), store.PutOptions{IfVersion: 0})
		}()
	}
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch store.ErrorCode(err) {
		case "":
			wins++
		case store.Conflict:
		default:
			t.Errorf("creator %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creators won, want 1", wins)
	}
	if vs, err := s.Versions(ctx, "born"); err != nil || len(vs) != 1 {
		t.Errorf("versions: %+v %v", vs, err)
	}
}

func testSkills(t *testing.T, s store.Store) {
	b := &skill.Bundle{Content: md("deploy", "Deploy safely.", "tags: [ops]"),
		Files: []skill.BundleFile{file("references/env.md", "# Envs v1\n"), {Path: "scripts/go.sh", Data: []byte("#!/bin/sh\n"), Executable: true}}}
	if _, err := s.Put(ctx, clone(b), store.PutOptions{IfVersion: 0, Source: "import", Provenance: "deploy.zip"}); err != nil {
		t.Fatal(err)
	}
	put(t, s, bundle("hidden"), 0)
	if err := s.SetEnabled(ctx, "hidden", false); err != nil {
		t.Fatal(err)
	}
	skills, diags, err := store.Skills(ctx, s)
	if err != nil || len(diags) != 0 {
		t.Fatalf("Skills: %v %v", err, diags)
	}
	if len(skills) != 1 {
		t.Fatalf("Skills: %d, want only the enabled one", len(skills))
	}
	sk := skills[0]
	if sk.Name != "deploy" || sk.Description != "Deploy safely." || !sk.Virtual || sk.Dir != "store://deploy" ||
		sk.Location != "store://deploy/SKILL.md" || sk.Entry != "SKILL.md" {
		t.Errorf("skill: %+v", sk)
	}
	if d := cmp.Diff(skill.Origin{Kind: "store", Version: 1, Provenance: "import: deploy.zip"}, sk.OriginValue()); d != "" {
		t.Errorf("origin: %s", d)
	}
	if len(sk.Meta.Tags) != 1 || len(sk.Files) != 2 || !sk.Files[1].Script || !sk.Files[1].Executable {
		t.Errorf("meta/files: %+v %+v", sk.Meta, sk.Files)
	}
	if body, err := sk.Body(); err != nil || !strings.Contains(body, "Do the deploy thing.") || strings.Contains(body, "name:") {
		t.Errorf("body: %q %v", body, err)
	}
	read := func(p string) string {
		t.Helper()
		data, err := sk.ReadFile(p)
		if err != nil {
			t.Fatalf("ReadFile(%s): %v", p, err)
		}
		return string(data)
	}
	if got := read("references/env.md"); got != "# Envs v1\n" {
		t.Errorf("read %q", got)
	}
	d1, err := sk.Digest("references/env.md")
	if err != nil || d1 != skill.DigestBytes([]byte("# Envs v1\n")) {
		t.Errorf("digest %s %v", d1, err)
	}
	if _, err := sk.ReadFile("references/none.md"); !errors.Is(err, skill.ErrNotListed) {
		t.Errorf("unlisted: %v", err)
	}

	// A later update does not change what this snapshot serves.
	if _, err := s.PutFile(ctx, "deploy", "references/env.md", []byte("# Envs v2\n"), false, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFile(ctx, "deploy", "SKILL.md", md("deploy", "Deploy, v2."), false, 2); err != nil {
		t.Fatal(err)
	}
	if got := read("references/env.md"); got != "# Envs v1\n" {
		t.Errorf("after an update the old snapshot reads %q", got)
	}
	if got := read("SKILL.md"); !bytes.Equal([]byte(got), b.Content) {
		t.Errorf("after an update the old snapshot's SKILL.md is %q", got)
	}
	if d, _ := sk.Digest("references/env.md"); d != d1 {
		t.Error("digest changed")
	}
	// A new snapshot sees the new version.
	skills, _, _ = store.Skills(ctx, s)
	if skills[0].Origin.Version != 3 || skills[0].Description != "Deploy, v2." {
		t.Errorf("new snapshot: %+v", skills[0])
	}
	if data, _ := skills[0].ReadFile("references/env.md"); string(data) != "# Envs v2\n" {
		t.Errorf("new snapshot reads %q", data)
	}
}

// State is every stored skill's versions with their digests and bytes, to
// compare a store before and after an operation that must leave it as it
// was (a refused import, a failed update).
func State(t testing.TB, st store.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	recs, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		vs, err := st.Versions(ctx, r.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			b, _, err := st.Bundle(ctx, r.Name, v.Version)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, f := range b.Files {
				files = append(files, f.Path+"="+string(f.Data))
			}
			out[fmt.Sprintf("%s v%d", r.Name, v.Version)] = fmt.Sprintf("digest %s current %d content %q files %q", v.Digest, r.Version, b.Content, files)
		}
	}
	return out
}
