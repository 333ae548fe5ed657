// Command domains prints how render.NewDomains summarises the skills a
// listing leaves unnamed, for catalogs of real skills: the number of
// domains, how many skills the largest 10, 20, 30 and 40 cover, the
// largest domains with their words, and the time it takes.
//
//	go run ./bench/cmd/domains -corpus A,B,C -pool D,E
//
// -corpus are the public collections (every skill is in every catalog);
// -pool are larger collections of real skills that fill the bigger
// catalogs, sampled with -seed.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/bench/internal/corpus"
	"github.com/loadout/loadout/internal/terms"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/render"
)

func main() {
	dirs := flag.String("corpus", os.Getenv("LOADOUT_SKILL_CORPUS"), "comma-separated folders of real SKILL.md files (the public collections)")
	pool := flag.String("pool", "", "comma-separated folders of more real SKILL.md files, sampled to fill the larger catalogs")
	sizes := flag.String("sizes", "0,2000,10000", "catalog sizes; 0 is the -corpus skills alone")
	seed := flag.Uint64("seed", 1, "seed of the sample from -pool")
	top := flag.Int("top", 15, "domains to print for each size")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the NewDomains calls to this file")
	reqs := flag.String("requests", "bench/findability/requests.tsv", "requests (REQUEST<TAB>EXPECTED[,EXPECTED...] a line): how many expect a skill in a large domain; \"\" for none")
	flag.Parse()
	if *dirs == "" {
		fail(fmt.Errorf("give -corpus (or $LOADOUT_SKILL_CORPUS): folders of the public collections, fetched with scripts/safety-corpus.sh DIR"))
	}
	base, st, err := corpus.Read(strings.Split(*dirs, ","))
	if err != nil {
		fail(err)
	}
	fmt.Printf("# -corpus: %d skills (%d SKILL.md, %d duplicate names, first kept)\n", len(base), st.Files, st.Duplicate)
	var extra []corpus.Skill
	if *pool != "" {
		all, st, err := corpus.Read(strings.Split(*pool, ","))
		if err != nil {
			fail(err)
		}
		taken := map[string]bool{}
		for _, s := range base {
			taken[s.Name] = true
		}
		for _, s := range all {
			if !taken[s.Name] {
				extra = append(extra, s)
			}
		}
		r := rand.New(rand.NewPCG(*seed, 0xd0))
		r.Shuffle(len(extra), func(i, j int) { extra[i], extra[j] = extra[j], extra[i] })
		fmt.Printf("# -pool: %d more skills (%d SKILL.md, %d duplicate names), seed %d\n", len(extra), st.Files, st.Duplicate, *seed)
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
	}
	var expected [][]string
	if *reqs != "" {
		data, err := os.ReadFile(*reqs)
		if err != nil {
			fail(err)
		}
		for line := range strings.Lines(string(data)) {
			if _, exp, ok := strings.Cut(strings.TrimRight(line, "\r\n"), "\t"); ok {
				expected = append(expected, strings.Split(exp, ","))
			}
		}
	}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail(fmt.Errorf("-sizes: %v", err))
		}
		skills := base
		if n > len(base) {
			if n-len(base) > len(extra) {
				fail(fmt.Errorf("%d skills: -corpus and -pool hold only %d", n, len(base)+len(extra)))
			}
			skills = append(slices.Clip(base), extra[:n-len(base)]...)
		}
		measure(skills, *top, expected)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "domains:", err)
	os.Exit(1)
}

func measure(skills []corpus.Skill, top int, expected [][]string) {
	listing := make([]render.Entry, len(skills))
	cats := 0
	for i, s := range skills {
		listing[i] = render.Entry{Name: s.Name, Description: s.Description, Category: s.Category}
		if s.Category != "" {
			cats++
		}
	}
	// Sorted by name, as the catalog passes them.
	slices.SortFunc(listing, func(a, b render.Entry) int { return strings.Compare(a.Name, b.Name) })
	var times, cpus []time.Duration
	var d *render.Domains
	for range 15 {
		t0, c0 := time.Now(), testutil.CPUTime()
		d = render.NewDomains(listing)
		times = append(times, time.Since(t0))
		cpus = append(cpus, testutil.CPUTime()-c0)
	}
	slices.Sort(times)
	slices.Sort(cpus)

	size := make([]int, len(d.Keys))
	for _, g := range d.Of {
		size[g]++
	}
	order := make([]int, len(d.Keys))
	for g := range order {
		order[g] = g
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[b] - size[a] })
	// How generic a word label is: the share of all skills with its term.
	// And how many skills are in a word domain whose label they do not
	// hold (taken in from a small domain).
	df := map[string]int{}
	var toks []string
	away := 0
	for i, e := range listing {
		toks = terms.Append(e.Name, toks[:0])
		toks = terms.Append(e.Description, toks)
		slices.Sort(toks)
		toks = slices.Compact(toks)
		for _, t := range toks {
			df[t]++
		}
		if k := d.Keys[d.Of[i]]; e.Category == "" && k != render.OtherDomain && !slices.Contains(toks, terms.Term(k)) {
			away++
		}
	}
	n := len(listing)
	pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(max(n, 1))) }
	single, other := 0, 0
	for g, k := range d.Keys {
		if size[g] == 1 {
			single++
		}
		if k == render.OtherDomain {
			other = size[g]
		}
	}
	fmt.Printf("\n## %d skills (%d with a category): %d domains (%d of one skill), %d in %q; NewDomains %v wall, %v CPU with GC (median of 15; least %v CPU)\n",
		n, cats, len(d.Keys), single, other, render.OtherDomain, times[7].Round(10*time.Microsecond), cpus[7].Round(10*time.Microsecond), cpus[0].Round(10*time.Microsecond))
	var cover []string
	for _, k := range []int{10, 20, 30, 40} {
		c := 0
		for _, g := range order[:min(k, len(order))] {
			c += size[g]
		}
		cover = append(cover, fmt.Sprintf("top %d %s", k, pct(c)))
	}
	fmt.Printf("coverage: %s\n", strings.Join(cover, ", "))
	fmt.Printf("before (category, else shared name prefix, else folder): %s\n", oldGroups(skills))
	if len(expected) > 0 {
		// A request whose skills are in the catalog succeeds here when one
		// of them is in a domain the listing shows (one of the largest k):
		// the listing half of the end-to-end measure, the search the other.
		rank := make([]int, len(d.Keys))
		for r, g := range order {
			rank[g] = r
		}
		at := map[string]int{}
		for i, e := range listing {
			at[e.Name] = rank[d.Of[i]]
		}
		var out []string
		for _, k := range []int{10, 20, 30} {
			ok, known := 0, 0
			for _, exp := range expected {
				best := -1
				for _, name := range exp {
					if r, found := at[name]; found && (best < 0 || r < best) {
						best = r
					}
				}
				if best >= 0 {
					known++
					if best < k {
						ok++
					}
				}
			}
			out = append(out, fmt.Sprintf("top %d %d/%d", k, ok, known))
		}
		fmt.Printf("requests whose skill is in a shown domain: %s\n", strings.Join(out, ", "))
	}
	maxShare, maxLabel := 0, ""
	for _, g := range order[:min(40, len(order))] {
		if t := terms.Term(d.Keys[g]); t != "" && df[t] > maxShare && !strings.Contains(d.Keys[g], " ") {
			maxShare, maxLabel = df[t], d.Keys[g]
		}
	}
	fmt.Printf("skills in a domain whose label they do not hold: %d (%s)\n", away, pct(away))
	fmt.Printf("most generic of the top 40 labels: %q, in %s of all skills\n", maxLabel, pct(maxShare))
	fmt.Printf("%4s  %-22s %6s %8s  %s\n", "rank", "label", "skills", "label in", "words")
	for r, g := range order[:min(top, len(order))] {
		in := "-"
		if t := terms.Term(d.Keys[g]); t != "" {
			in = pct(df[t])
		}
		fmt.Printf("%4d  %-22s %6d %8s  %s\n", r+1, d.Keys[g], size[g], in, strings.Join(d.Words[g], ", "))
	}
}

// oldGroups measures the grouping NewDomains replaces (render's groupKeys
// before it): the category; else the name's prefix up to its first '-',
// '_', '.' or ':' when another skill shares it; else the folder that holds
// the skill's folder.
func oldGroups(skills []corpus.Skill) string {
	prefix := func(name string) string {
		if i := strings.IndexAny(name, "-_.:"); i > 0 {
			return name[:i]
		}
		return ""
	}
	shared := map[string]int{}
	for _, s := range skills {
		if s.Category == "" {
			if p := prefix(s.Name); p != "" {
				shared[p]++
			}
		}
	}
	size := map[string]int{}
	for _, s := range skills {
		k := s.Category
		if k == "" {
			k = "folder " + filepath.Dir(filepath.Dir(s.Path))
			if p := prefix(s.Name); p != "" && shared[p] > 1 {
				k = p + "-*"
			}
		}
		size[k]++
	}
	var sizes []int
	for _, n := range size {
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	slices.Reverse(sizes)
	var out []string
	for _, k := range []int{10, 20, 30, 40} {
		c := 0
		for _, n := range sizes[:min(k, len(sizes))] {
			c += n
		}
		out = append(out, fmt.Sprintf("top %d %.1f%%", k, 100*float64(c)/float64(max(len(skills), 1))))
	}
	return fmt.Sprintf("%d groups; %s", len(size), strings.Join(out, ", "))
}
