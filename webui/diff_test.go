package webui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

// lcs is the length of the longest common subsequence, by the table.
func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// TestLineDiffIsMinimalAndExact: on random inputs the diff rebuilds both
// sides, numbers their lines, and has the fewest edits.
func TestLineDiffIsMinimalAndExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		out := make([]string, r.IntN(30))
		for i := range out {
			out[i] = string(rune('a' + r.IntN(4)))
		}
		return out
	}
	for i := range 2000 {
		a, b := gen(), gen()
		d, ok := lineDiff(a, b)
		if !ok {
			t.Fatalf("case %d: refused", i)
		}
		var ra, rb []string
		edits := 0
		for _, l := range d {
			if l.Op != '+' {
				ra = append(ra, l.Text)
				if l.Old != len(ra) {
					t.Fatalf("case %d: old line number %d at %d", i, l.Old, len(ra))
				}
			}
			if l.Op != '-' {
				rb = append(rb, l.Text)
				if l.New != len(rb) {
					t.Fatalf("case %d: new line number %d at %d", i, l.New, len(rb))
				}
			}
			if l.Op != ' ' {
				edits++
			}
		}
		if !slices.Equal(ra, a) || !slices.Equal(rb, b) {
			t.Fatalf("case %d: the diff does not rebuild the sides\na=%v b=%v\n%v", i, a, b, d)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("case %d: %d edits, the fewest is %d", i, edits, want)
		}
	}
}

// TestLineDiffBounds: past MaxDiffEdits the diff is refused, not slow.
func TestLineDiffBounds(t *testing.T) {
	var a, b []string
	for i := range 3000 {
		a = append(a, fmt.Sprint("a", i))
		b = append(b, fmt.Sprint("b", i))
	}
	if _, ok := lineDiff(a, b); ok {
		t.Error("a diff of 6,000 edits was not refused")
	}
	big := strings.Split(strings.Repeat("x\n", MaxDiffLines+10), "\n")
	if _, ok := lineDiff(big, append([]string{"y"}, big...)); !ok {
		t.Error("a long file with one change was refused (the common end is set aside first)")
	}
}

func TestHunks(t *testing.T) {
	a := splitLines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n")
	b := slices.Clone(a)
	b[1] = "two"
	b[12] = "thirteen"
	d, _ := lineDiff(a, b)
	hs := hunks(d)
	if len(hs) != 2 {
		t.Fatalf("%d hunks, want 2: %v", len(hs), hs)
	}
	if f := hs[0].Lines[0]; f.Old != 1 || len(hs[0].Lines) != 6 { // 1, -2, +two, 3, 4, 5
		t.Errorf("first hunk: %v", hs[0].Lines)
	}
	if l := hs[1].Lines[len(hs[1].Lines)-1]; l.Old != 15 {
		t.Errorf("second hunk ends at %v", l)
	}
}

// TestDiffBundlesBudget: past MaxDiffTotalLines the files are still listed
// as changed, without a line diff; a file over MaxDiffFileBytes too.
func TestDiffBundlesBudget(t *testing.T) {
	lines := strings.Repeat("same line\n", MaxDiffTotalLines/4)
	a, b := &skill.Bundle{Content: []byte("x\n")}, &skill.Bundle{Content: []byte("y\n")}
	for i := range 4 {
		p := fmt.Sprintf("f%d.txt", i)
		a.Files = append(a.Files, skill.BundleFile{Path: p, Data: []byte(lines + "old\n")})
		b.Files = append(b.Files, skill.BundleFile{Path: p, Data: []byte(lines + "new\n")})
	}
	big := []byte(strings.Repeat("z", MaxDiffFileBytes+1))
	a.Files = append(a.Files, skill.BundleFile{Path: "zbig.txt", Data: big})
	b.Files = append(b.Files, skill.BundleFile{Path: "zbig.txt", Data: append(big, 'q')})
	ds := diffBundles(a, b)
	if len(ds) != 6 {
		t.Fatalf("%d files differ, want 6: %+v", len(ds), ds)
	}
	if ds[0].Path != "SKILL.md" || len(ds[0].Hunks) != 1 {
		t.Errorf("SKILL.md: %+v", ds[0])
	}
	var lined, budget int
	for _, d := range ds[1:5] {
		if len(d.Hunks) > 0 {
			lined++
		}
		if strings.Contains(d.Note, "compared its") {
			budget++
		}
	}
	if lined != 1 || budget != 3 { // a file takes half the budget (both sides): one fits after SKILL.md
		t.Errorf("%d files line-diffed and %d past the budget: %+v", lined, budget, ds[1:5])
	}
	if !strings.Contains(ds[5].Note, "no line diff") {
		t.Errorf("the big file: %+v", ds[5])
	}
}

// BenchmarkLineDiffWorst is a diff near its bounds: two files of
// MaxDiffLines lines with changes spread through them, just under
// MaxDiffEdits.
//
//	go test ./webui -run '^$' -bench LineDiffWorst -benchtime 5x
func BenchmarkLineDiffWorst(b *testing.B) {
	var x, y []string
	for i := range MaxDiffLines {
		x = append(x, fmt.Sprint("line ", i))
		if i%41 == 20 {
			y = append(y, fmt.Sprint("changed ", i))
		} else {
			y = append(y, fmt.Sprint("line ", i))
		}
	}
	for b.Loop() {
		if _, ok := lineDiff(x, y); !ok {
			b.Fatal("refused")
		}
	}
}
