package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/internal/textdist"
	"github.com/loadout/loadout/skill"
)

// storeCatalog is a catalog of one agent over a store provider holding
// skills of the given names.
func storeCatalog(t testing.TB, names []string) *Catalog {
	t.Helper()
	skills := make([]*skill.Skill, len(names))
	for i, n := range names {
		skills[i] = storedSkill(t, n, "Skill "+n+".", 1)
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Store: true}}}},
		Options{Store: ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return skills, nil })})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// storedSkill builds a stored skill without the bundle checks, so that
// tests can make names of any length.
func storedSkill(t testing.TB, name, desc string, version int) *skill.Skill {
	t.Helper()
	loc := "store://" + name
	content := "---\nname: " + name + "\ndescription: " + desc + "\n---\nDo " + name + ".\n"
	doc, _, ok := skill.Parse([]byte(content), loc+"/SKILL.md", name)
	if !ok {
		t.Fatalf("%s does not parse", name)
	}
	b := &skill.Bundle{Content: []byte(content)}
	sk := skill.NewVirtual(doc, loc, nil, &skill.Origin{Kind: "store", Version: version}, b.Reader())
	sk.KeepBody(doc.Body)
	return sk
}

// genNames makes n distinct names of about the given length from a small
// alphabet: the worst case for suggestions, every name near every other.
func genNames(n, length int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	const alpha = "abcdefghijklmnopqrstuvwxyz0123456789"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		l := length - r.IntN(4)
		b := make([]byte, l)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		for i := 8; i < l-1; i += 9 {
			b[i] = '-'
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// An unknown name longer than a skill name can be is not found at once:
// a clear message that quotes only its start, no suggestions, and no
// comparison with any name. It used to be compared with every name by a
// full edit-distance table (20-36 s of CPU for 100 KB against a large
// catalog).
func TestUnknownLongName(t *testing.T) {
	names := genNames(300, 20, 1)
	c := storeCatalog(t, names)
	l := agent(t, c, "a")
	long := strings.Repeat("deploy", 20_000) // 120 KB
	var res LoadResult
	bytes := testutil.Allocated(func() { res = l.Load(long) })
	if res.Status != StatusNotFound || len(res.Suggestions) != 0 {
		t.Errorf("load of a 120 KB name: %s %v", res.Status, res.Suggestions)
	}
	want := fmt.Sprintf("(%d characters) is available to this agent: skill names have at most %d characters", len(long), skill.MaxNameLen)
	if !strings.Contains(res.Text, want) || len(res.Text) > 300 || !strings.Contains(res.Text, `…`) {
		t.Errorf("message (%d bytes): %.400s", len(res.Text), res.Text)
	}
	if bytes > 16<<10 {
		t.Errorf("an over-long unknown name allocated %d bytes; want under 16 KB (no comparison at all)", bytes)
	}
	f := l.ReadFile(long, "SKILL.md", ReadOptions{})
	if f.Status != StatusNotFound || !strings.Contains(f.Message, want) || len(f.Message) > 300 {
		t.Errorf("read_skill_file of a 120 KB name: %s %.400s", f.Status, f.Message)
	}
	// 65 code points is already too long; 64 is a name.
	if _, s := l.unknownName(strings.Repeat("é", 65)); s != nil {
		t.Errorf("65 runes got suggestions %v", s)
	}
	if msg, _ := l.unknownName(strings.Repeat("é", 64)); strings.Contains(msg, "at most") {
		t.Errorf("64 runes is a possible name: %s", msg)
	}
	// A skill whose (lenient) name is over the limit still loads by name.
	longName := strings.Repeat("a", 80)
	c = storeCatalog(t, []string{longName, "deploy"})
	if r := agent(t, c, "a").Load(longName); r.Status != StatusOK {
		t.Errorf("an 80-character name in the catalog: %s %s", r.Status, r.Text)
	}
}

// The work of one suggestion search is bounded, whatever the name and the
// catalog: here 10,000 names all within reach of a 64-character query.
func TestSuggestWorkBounded(t *testing.T) {
	names := genNames(10_000, 64, 2)
	q := genNames(1, 64, 99)[0]
	_, cells := closestWork(q, names)
	bound := MaxSuggestCells + (2*MaxSuggestDistance+1)*skill.MaxNameLen
	if cells > bound {
		t.Errorf("one search computed %d cells; the bound is %d", cells, bound)
	}
	// A path as long as CleanPath allows, against many files.
	path := strings.Repeat("references/", 93)
	files := make([]string, 5000)
	for i := range files {
		files[i] = fmt.Sprintf("%s%04d.md", path[:len(path)-20], i)
	}
	if _, cells := closestWork(path, files); cells != 0 {
		t.Errorf("a %d-byte path was compared (%d cells); over %d runes it gets no suggestions", len(path), cells, MaxSuggestRunes)
	}
	path = strings.Repeat("r", 250)
	for i := range files {
		files[i] = strings.Repeat("r", 240+i%20) + fmt.Sprint(i)
	}
	if _, cells := closestWork(path, files); cells > MaxSuggestCells+(2*MaxSuggestDistance+1)*MaxSuggestRunes {
		t.Errorf("a 250-rune path against 5,000 near files: %d cells", cells)
	}
}

// reference is the unbounded search closest replaced: every candidate by
// full edit distance.
func reference(name string, cands []string) []string {
	type scored struct {
		s string
		d int
	}
	var out []scored
	limit := max(2, utf8.RuneCountInString(name)/3)
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		d := textdist.Levenshtein(name, c)
		if strings.Contains(c, name) || strings.Contains(name, c) {
			d = min(d, 1)
		}
		if d <= limit {
			out = append(out, scored{c, d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		return out[i].s < out[j].s
	})
	var names []string
	for i := 0; i < len(out) && i < 3; i++ {
		names = append(names, out[i].s)
	}
	return names
}

// Within its budget, the bounded search finds exactly what the full one
// did.
func TestClosestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := append(genNames(2000, 12, 5), "deploy", "deploy-prod", "pdf", "pdf-extract", "lint", "linter", "技能-一", "技能-二")
	sort.Strings(names)
	queries := []string{"deplyo", "deploy-pro", "pdf-", "dep", "lnt", "技能", "技能-三", "zzzzzzzzzzzz", "a", strings.Repeat("q", 64)}
	for i := 0; i < 300; i++ {
		n := names[r.IntN(len(names))]
		b := []byte(n)
		for e := 0; e < 1+r.IntN(4) && len(b) > 1; e++ {
			switch p := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[p] = 'x'
			case 1:
				b = append(b[:p], b[p+1:]...)
			default:
				b = append(b[:p], append([]byte{'y'}, b[p:]...)...)
			}
		}
		if utf8.Valid(b) {
			queries = append(queries, string(b))
		}
	}
	for _, q := range queries {
		got, cells := closestWork(q, names)
		if cells >= MaxSuggestCells {
			continue // cut short: may differ
		}
		if want := reference(q, names); !cmp.Equal(got, want) {
			t.Errorf("closest(%q) = %v, want %v", q, got, want)
		}
	}
}

// BenchmarkUnknownName64 is the worst case of a not_found answer: an
// unknown 64-character name against 10,000 skills whose names are all
// 61-64 characters of the same alphabet (every one within reach).
func BenchmarkUnknownName64(b *testing.B) {
	c := storeCatalog(b, genNames(10_000, 64, 2))
	l, _ := c.Agent("a")
	q := genNames(1, 64, 99)[0]
	b.ReportAllocs()
	for b.Loop() {
		if r := l.Load(q); r.Status != StatusNotFound {
			b.Fatal(r.Status)
		}
	}
}

// BenchmarkUnknownNameTypo is the common case: a typo of a name among
// 10,000 realistic ones.
func BenchmarkUnknownNameTypo(b *testing.B) {
	words := []string{"deploy", "lint", "pdf", "extract", "review", "cache", "inspect", "report", "sync", "audit", "test", "build"}
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[string]bool{}
	var names []string
	for len(names) < 10_000 {
		n := fmt.Sprintf("%s-%s-%d", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(1000))
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	c := storeCatalog(b, names)
	l, _ := c.Agent("a")
	q := names[1234][:len(names[1234])-1] + "x"
	b.ReportAllocs()
	for b.Loop() {
		l.Load(q)
	}
}

// BenchmarkUnknownName100KB is the request of the issue: a 100 KB name.
func BenchmarkUnknownName100KB(b *testing.B) {
	c := storeCatalog(b, genNames(10_000, 64, 2))
	l, _ := c.Agent("a")
	q := strings.Repeat("x", 100<<10)
	b.ReportAllocs()
	for b.Loop() {
		l.Load(q)
	}
}
