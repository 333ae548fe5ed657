package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadCorpus(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	write(t, filepath.Join(first, "a", "pdf-fill", "SKILL.md"),
		"---\nname: pdf-fill\ndescription: Fill PDF forms.\nmetadata:\n  category: documents\n---\nBody.\n")
	write(t, filepath.Join(first, "b", "csv-clean", "SKILL.md"),
		"---\nname: csv-clean\ndescription: >-\n  Clean CSV\n  files.\ncategory: data\n---\n")
	// The same name later in the walk: the first one wins.
	write(t, filepath.Join(first, "c", "pdf-fill", "SKILL.md"),
		"---\nname: pdf-fill\ndescription: A later copy.\n---\n")
	// No description: skipped.
	write(t, filepath.Join(first, "d", "empty", "SKILL.md"), "---\nname: empty\n---\nBody.\n")
	// Not a skill file, and folders never entered.
	write(t, filepath.Join(first, "d", "notes", "README.md"), "---\nname: notes\ndescription: Not a skill.\n---\n")
	write(t, filepath.Join(first, "node_modules", "pkg", "SKILL.md"), "---\nname: from-modules\ndescription: Vendored.\n---\n")
	write(t, filepath.Join(first, ".git", "x", "SKILL.md"), "---\nname: from-git\ndescription: In .git.\n---\n")
	// The second folder comes after the first, even though "a" < "b".
	write(t, filepath.Join(second, "a", "csv-clean", "SKILL.md"), "---\nname: csv-clean\ndescription: Second copy.\n---\n")
	write(t, filepath.Join(second, "z", "chart-draw", "SKILL.md"), "---\nname: chart-draw\ndescription: Draw charts.\n---\n")

	pool, st, err := readCorpus([]string{first, second})
	if err != nil {
		t.Fatal(err)
	}
	want := []corpusSkill{
		{"pdf-fill", "Fill PDF forms.", "documents"},
		{"csv-clean", "Clean CSV files.", "data"},
		{"chart-draw", "Draw charts.", ""},
	}
	if !reflect.DeepEqual(pool, want) {
		t.Errorf("pool:\n got %+v\nwant %+v", pool, want)
	}
	if wantSt := (corpusStats{Files: 6, Skipped: 1, Duplicate: 2}); st != wantSt {
		t.Errorf("stats: got %+v, want %+v", st, wantSt)
	}

	if _, _, err := readCorpus([]string{filepath.Join(first, "missing")}); err == nil {
		t.Error("a missing folder: no error")
	}
	if _, _, err := readCorpus([]string{filepath.Join(first, "a", "pdf-fill", "SKILL.md")}); err == nil {
		t.Error("a file instead of a folder: no error")
	}
}

func testPool(n int) []corpusSkill {
	pool := make([]corpusSkill, n)
	for i := range pool {
		pool[i] = corpusSkill{Name: fmt.Sprintf("skill-%04d", i), Description: fmt.Sprintf("Does thing %d. It does it well.", i)}
	}
	return pool
}

func TestSampleDeterministic(t *testing.T) {
	pool := testPool(1000)
	taken := map[string]bool{"skill-0001": true, "skill-0002": true}
	a := sample(pool, taken, 100, 1)
	b := sample(pool, taken, 100, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two samples with the same seed differ")
	}
	if len(a) != 100 {
		t.Fatalf("got %d skills, want 100", len(a))
	}
	seen := map[string]bool{}
	for _, s := range a {
		if taken[s.Name] || seen[s.Name] {
			t.Errorf("%s: taken or repeated", s.Name)
		}
		seen[s.Name] = true
	}
	if reflect.DeepEqual(a, sample(pool, taken, 100, 2)) {
		t.Error("another seed gives the same sample")
	}
	if got := sample(pool[:10], taken, 100, 1); len(got) != 8 {
		t.Errorf("a pool of 10, 2 taken: got %d skills, want the other 8", len(got))
	}
}

func TestCatalogFromPool(t *testing.T) {
	pool := testPool(300)
	a, err := catalog(200, 1, pool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := catalog(200, 1, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two catalogs with the same seed differ")
	}
	if len(a.entries) != 200 {
		t.Fatalf("got %d skills, want 200", len(a.entries))
	}
	// The example skills come first, the rest is real (pool) skills only.
	fromPool := 0
	for _, e := range a.entries {
		if len(e.Name) == len("skill-0000") && e.Name[:6] == "skill-" {
			fromPool++
		}
	}
	if examples := 200 - fromPool; examples < 1 || examples > 10 {
		t.Errorf("%d skills not from the pool, want only the example skills", examples)
	}
	// Too small a pool: an error, no made-up skills.
	if _, err := catalog(1000, 1, pool); err == nil {
		t.Error("a pool of 300 for 1000 skills: no error")
	}
}

func TestFloorPrefix(t *testing.T) {
	for _, c := range []struct{ d, want string }{
		{"Short one.", "Short one."},
		{"Fill forms. Then more text follows here.", "Fill forms."},
		{"Does it? Yes.", "Does it?"},
		{"A long description without any sentence end before the floor is reached, surely", "A long description without any sentence end before the floor"},
		{"v1.2 is a version, not the end of a sentence, and this goes on past the floor", "v1.2 is a version, not the end of a sentence, and this goes "},
		// Code points, not bytes: the first sentence is 37 code points
		// (more than 60 bytes), so it is the floor.
		{"저장소를 분석해 Codex용 instruction 구조를 초기화합니다. 루트 AGENTS.md, 필요 시 하위 파일을 생성할 때 사용합니다.", "저장소를 분석해 Codex용 instruction 구조를 초기화합니다."},
	} {
		if got := floorPrefix(c.d, 60); got != c.want {
			t.Errorf("floorPrefix(%q):\n got %q\nwant %q", c.d, got, c.want)
		}
	}
}
