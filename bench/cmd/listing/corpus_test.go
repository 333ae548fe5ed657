package main

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/loadout/loadout/bench/internal/corpus"
)

func testPool(n int) []corpus.Skill {
	pool := make([]corpus.Skill, n)
	for i := range pool {
		pool[i] = corpus.Skill{Name: fmt.Sprintf("skill-%04d", i), Description: fmt.Sprintf("Does thing %d. It does it well.", i)}
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
