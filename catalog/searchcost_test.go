package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// worstQueries are queries built against l's own index to cost the most:
// the commonest terms, the prefixes that expand to the commonest terms,
// and each of them repeated to far past the query cap.
func worstQueries(l *Loadout) map[string]string {
	ix := l.index()
	type tc struct {
		t    string
		cost int
	}
	var common, prefixes []tc
	for t, ps := range ix.terms {
		common = append(common, tc{t, len(ps)})
	}
	seen := map[string]bool{}
	for _, t := range ix.sorted {
		for n := 4; n <= len(t); n++ {
			p := t[:n]
			if seen[p] {
				continue
			}
			seen[p] = true
			cost := len(ix.terms[p])
			i, k := slices.Index(ix.sorted, p), 0
			if i < 0 {
				i = 0
				for i < len(ix.sorted) && ix.sorted[i] < p {
					i++
				}
			}
			for ; i < len(ix.sorted) && k < 32 && strings.HasPrefix(ix.sorted[i], p); i++ {
				cost += len(ix.terms[ix.sorted[i]])
				k++
			}
			prefixes = append(prefixes, tc{p, cost})
		}
	}
	byCost := func(a, b tc) int { return cmp.Or(cmp.Compare(b.cost, a.cost), strings.Compare(a.t, b.t)) }
	slices.SortFunc(common, byCost)
	slices.SortFunc(prefixes, byCost)
	join := func(ts []tc, n int) string {
		var s []string
		for _, t := range ts[:min(n, len(ts))] {
			s = append(s, t.t)
		}
		return strings.Join(s, " ")
	}
	return map[string]string{
		"common-1MB": strings.Repeat(common[0].t+" ", 1<<20/(len(common[0].t)+1)),
		"common-32":  join(common, 32),
		"common-200": join(common, 200),
		"prefix-32":  join(prefixes, 32),
		"prefix-200": join(prefixes, 200),
		"prefix-1MB": strings.Repeat(join(prefixes, 40)+" ", 1<<20/(len(join(prefixes, 40))+1)),
		"mixed-1KiB": join(prefixes, 16) + " " + join(common, 16),
	}
}

// BenchmarkSearchWorst20k: the dearest queries one can build against
// 20,000 generated skills (the commonest terms and prefixes, many of
// them, and one word repeated to a megabyte). Each must cost well under
// 10 ms (a 1 MB query cost 39 CPU-seconds before terms were
// de-duplicated and capped).
func BenchmarkSearchWorst20k(b *testing.B) {
	l, _ := searchGenTree(b, 20000)
	qs := worstQueries(l)
	names := make([]string, 0, len(qs))
	for k := range qs {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		b.Run(k, func(b *testing.B) {
			for b.Loop() {
				l.Search(qs[k], 10)
			}
		})
	}
}

// TestQueryCaps: a repeated word counts once; only the first
// MaxQueryTerms distinct words and MaxQueryBytes bytes are searched; and
// CheckQuery refuses one byte or one word past either cap, naming it.
func TestQueryCaps(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"deploy/SKILL.md":   md("deploy", "Deploy the application to production."),
		"rollback/SKILL.md": md("rollback", "Roll a failed release back."),
	})
	c := newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}})
	l := agent(t, c, "a")

	once := l.Search("production", 5)
	if len(once) != 1 {
		t.Fatalf("production: %+v", once)
	}
	if twice := l.Search("production production production", 5); len(twice) != 1 || twice[0].Score != once[0].Score {
		t.Errorf("a repeated word counts more than once: %+v against %+v", twice, once)
	}

	var fill []string
	for i := range MaxQueryTerms - 1 {
		fill = append(fill, fmt.Sprintf("w%d", i))
	}
	at := strings.Join(fill, " ") + " production"           // the 32nd distinct word
	past := strings.Join(fill, " ") + " w99 production"     // the 33rd
	rep := strings.Join(fill, " ") + " w0 w1 w2 production" // repeats do not count
	if hs := l.Search(at, 5); len(hs) != 1 {
		t.Errorf("the %dth distinct word is not searched: %+v", MaxQueryTerms, hs)
	}
	if hs := l.Search(rep, 5); len(hs) != 1 {
		t.Errorf("repeated words count against the cap: %+v", hs)
	}
	if hs := l.Search(past, 5); len(hs) != 0 {
		t.Errorf("the %dth distinct word is searched: %+v", MaxQueryTerms+1, hs)
	}
	if err := CheckQuery(at); err != nil {
		t.Errorf("CheckQuery(%d words): %v", MaxQueryTerms, err)
	}
	if err := CheckQuery(rep); err != nil {
		t.Errorf("CheckQuery(repeats): %v", err)
	}
	if err := CheckQuery(past); err == nil || !strings.Contains(err.Error(), "32") {
		t.Errorf("CheckQuery(%d words) = %v, want a refusal naming the cap", MaxQueryTerms+1, err)
	}

	// Stopwords count as words: 33 distinct words of which some say
	// nothing (the, please) are still over the cap.
	stop := strings.Join(fill[:MaxQueryTerms-3], " ") + " the please w99 production"
	if err := CheckQuery(stop); err == nil {
		t.Errorf("CheckQuery(%d words, stopwords among them) = nil, want a refusal", MaxQueryTerms+1)
	}
	if err := CheckQuery(strings.Join(fill[:MaxQueryTerms-3], " ") + " the please production"); err != nil {
		t.Errorf("CheckQuery(%d words, stopwords among them): %v", MaxQueryTerms, err)
	}

	// Bytes: the word that ends at byte MaxQueryBytes counts, one past does not.
	// ("bac" is too short to match "back" as a prefix.)
	pad := strings.Repeat(" ", MaxQueryBytes-len("back"))
	if hs := l.Search(pad+"back", 5); len(hs) != 1 {
		t.Errorf("a word ending at byte %d is not searched: %+v", MaxQueryBytes, hs)
	}
	if hs := l.Search(" "+pad+"back", 5); len(hs) != 0 {
		t.Errorf("a word past byte %d is searched whole: %+v", MaxQueryBytes, hs)
	}
	if err := CheckQuery(pad + "back"); err != nil {
		t.Errorf("CheckQuery(%d bytes): %v", MaxQueryBytes, err)
	}
	if err := CheckQuery(" " + pad + "back"); err == nil || !strings.Contains(err.Error(), "1024 bytes") {
		t.Errorf("CheckQuery(%d bytes) = %v, want a refusal naming the cap", MaxQueryBytes+1, err)
	}
	// A megabyte of one word: the first cut, at a character.
	if hs := l.Search(strings.Repeat("é", 1<<20), 5); len(hs) != 0 {
		t.Errorf("hits: %+v", hs)
	}
	if got := clipQuery(" " + strings.Repeat("é", 600)); len(got) != MaxQueryBytes-1 || !utf8.ValidString(got) {
		t.Errorf("clipQuery cuts inside a character: %d bytes", len(got))
	}
	// No character starts within the cap (continuation bytes only, as
	// invalid UTF-8 from a client may be): nothing is left, and nothing
	// is read before the query.
	if got := clipQuery(strings.Repeat("\x80", MaxQueryBytes+1)); got != "" {
		t.Errorf("clipQuery of continuation bytes = %d bytes, want none", len(got))
	}
}
