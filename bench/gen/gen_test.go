package gen_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// TestTreeIsValid checks that every generated skill parses with no
// diagnostics at all, that names match folders and are unique, and that
// descriptions and files have the sizes the package promises.
func TestTreeIsValid(t *testing.T) {
	const n = 500
	dir := t.TempDir()
	st, err := gen.TreeStats(dir, n, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st.Skills != n || st.Files != 4*n {
		t.Fatalf("stats = %+v, want %d skills and %d files", st, n, 4*n)
	}
	names := map[string]bool{}
	minDesc, maxDesc := 1<<30, 0
	var withMeta, withTags, folded int
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "SKILL.md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(data) < 2500 || len(data) > 3600 {
			t.Errorf("%s: %d bytes, want about 3 KB", path, len(data))
		}
		folder := filepath.Base(filepath.Dir(path))
		doc, diags, ok := skill.Parse(data, path, folder)
		if !ok || len(diags) > 0 {
			t.Errorf("%s: ok=%v diags=%v", path, ok, diags)
			return nil
		}
		if doc.Name != folder {
			t.Errorf("%s: name %q, folder %q", path, doc.Name, folder)
		}
		if names[doc.Name] {
			t.Errorf("duplicate name %q", doc.Name)
		}
		names[doc.Name] = true
		l := len([]rune(doc.Description))
		minDesc, maxDesc = min(minDesc, l), max(maxDesc, l)
		if l < 50 || l > 900 {
			t.Errorf("%s: description of %d chars", path, l)
		}
		if len(doc.Metadata) > 0 {
			withMeta++
		}
		if len(doc.Tags) > 0 {
			withTags++
		}
		if bytes.Contains(data, []byte("\ndescription: >-\n")) {
			folded++
		}
		sk := filepath.Dir(path)
		fi, err := os.Stat(filepath.Join(sk, "scripts", "run.sh"))
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("%s: run.sh not executable", sk)
		}
		for _, f := range []string{"references/guide.md", "assets/data.json"} {
			if _, err := os.Stat(filepath.Join(sk, f)); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != n {
		t.Fatalf("found %d skills, want %d", len(names), n)
	}
	if maxDesc-minDesc < 500 || withMeta == 0 || withTags == 0 || folded == 0 {
		t.Errorf("too little variety: descriptions %d-%d chars, %d with metadata, %d with tags, %d folded", minDesc, maxDesc, withMeta, withTags, folded)
	}
	t.Logf("descriptions %d-%d chars; %d with metadata, %d with tags, %d folded", minDesc, maxDesc, withMeta, withTags, folded)
}

func TestTreeRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	testutil.Must(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	if err := gen.Tree(dir, 1, 1); !errors.Is(err, gen.ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
}

// Skills hands over the very bytes Tree writes, folder for folder.
func TestSkillsAreTree(t *testing.T) {
	const n, seed = 60, 7
	dir := t.TempDir()
	if err := gen.Tree(dir, n, seed); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := gen.Skills(n, seed, func(i int, s gen.Skill) error {
		seen++
		if path.Base(s.Folder) != s.Name || len(s.Files) != 4 || s.Files[0].Path != "SKILL.md" {
			t.Errorf("skill %d: %s in %s with %d files", i, s.Name, s.Folder, len(s.Files))
		}
		for _, f := range s.Files {
			p := filepath.Join(dir, filepath.FromSlash(s.Folder), filepath.FromSlash(f.Path))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, f.Data) || (st.Mode()&0o111 != 0) != f.Executable {
				t.Errorf("%s: not the bytes or mode Tree wrote", p)
			}
		}
		return nil
	})
	if err != nil || seen != n {
		t.Errorf("Skills: %d skills, %v", seen, err)
	}
}

// TestFindings: with Options.Findings each chosen skill has exactly one
// warning of the kind its index gives, the others none, and the share is
// the one asked for.
func TestFindings(t *testing.T) {
	for _, share := range []float64{0, 0.25, 1} {
		want := map[string]int{}
		err := gen.SkillsWith(200, gen.Options{Seed: 3, Findings: share}, func(i int, s gen.Skill) error {
			doc, diags, ok := skill.Parse(s.Files[0].Data, s.Folder+"/SKILL.md", s.Name)
			if !ok {
				t.Fatalf("%s: does not parse: %v", s.Name, diags)
			}
			has := float64(i%100) < share*100
			switch {
			case has && i%2 == 0:
				if len(diags) != 1 || diags[0].Code != skill.CodeFieldType || diags[0].Field != "compatibility" {
					t.Errorf("%s: diags %v, want one field-type on compatibility", s.Name, diags)
				}
				want["field-type"]++
			case has:
				if len(diags) != 0 || !bytes.Contains([]byte(doc.Body), []byte("(references/notes.md)")) {
					t.Errorf("%s: diags %v; want none and a link to a missing file", s.Name, diags)
				}
				for _, f := range s.Files {
					if f.Path == "references/notes.md" {
						t.Errorf("%s: has the file its link should miss", s.Name)
					}
				}
				want["link"]++
			default:
				if len(diags) != 0 || bytes.Contains([]byte(doc.Body), []byte("notes.md")) {
					t.Errorf("%s: diags %v, want a skill without findings", s.Name, diags)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := want["field-type"] + want["link"]; n != int(share*200) {
			t.Errorf("share %v: %d skills with a finding, want %d", share, n, int(share*200))
		}
	}
}
