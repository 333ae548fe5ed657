// Command findability measures whether search_skills finds the right skill
// for realistic requests (issue 25): for each request of a request set
// (bench/findability/requests.tsv: REQUEST<TAB>EXPECTED[,EXPECTED...]) it
// runs the catalog's search (catalog.Loadout.Search, what search_skills
// and GET /v1/agents/{id}/search answer) and counts the requests whose
// expected skill is first, and in the first three hits.
//
// Catalogs: every real skill of the -corpus folders (the public
// collections, checked out elsewhere: the repository ships none), each
// written to a folder of its own as it is (SKILL.md only), then, for the
// larger sizes, filler made from them, seeded:
//
//   - clones (a third of the filler): a real skill copied whole under
//     another name (NAME-copy-K), as collections that vendor each other's
//     skills hold them. A clone of an expected skill is as right as the
//     skill (the same text); clones of a wrong one crowd the hits.
//   - neighbours (the rest): a name of two real names' words and a
//     description of the first sentence of one real skill and a later
//     one of another, so the filler shares the real skills' words.
//
// Figures per size: first (the first hit is right), top 3 (a right skill
// among the first three hits, as returned), top 3 distinct (the same,
// counting clones of one skill once: what the search would give if it
// folded them), and the median and largest CPU time of one search.
//
//	go run ./bench/cmd/findability -corpus /tmp/safety-corpus
//	go run ./bench/cmd/findability -corpus DIR -sizes 445,2000,10000 -v
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/bench/internal/corpus"
	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
)

type request struct {
	text     string
	expected []string
}

func main() {
	dirs := flag.String("corpus", os.Getenv("LOADOUT_SKILL_CORPUS"), "comma-separated folders of real SKILL.md files (the public collections)")
	reqs := flag.String("requests", "bench/findability/requests.tsv", "the request set: REQUEST<TAB>EXPECTED[,EXPECTED...] a line")
	sizes := flag.String("sizes", "0,2000,10000", "catalog sizes; 0 is the real skills alone")
	seed := flag.Uint64("seed", 1, "seed of the filler")
	verbose := flag.Bool("v", false, "print each request the search gets wrong (top 3), with its hits")
	flag.Parse()
	if *dirs == "" {
		fail(fmt.Errorf("give -corpus (or $LOADOUT_SKILL_CORPUS): folders of the public collections, fetched with scripts/safety-corpus.sh DIR"))
	}
	var folders []string
	for _, d := range strings.Split(*dirs, ",") {
		folders = append(folders, d)
	}
	pool, st, err := corpus.Read(folders)
	if err != nil {
		fail(err)
	}
	rs, err := readRequests(*reqs)
	if err != nil {
		fail(err)
	}
	known := map[string]bool{}
	for _, s := range pool {
		known[s.Name] = true
	}
	for _, r := range rs {
		for _, e := range r.expected {
			if !known[e] {
				fail(fmt.Errorf("%s: %q expects %q, which the corpus does not hold", *reqs, r.text, e))
			}
		}
	}
	fmt.Printf("# %d real skills (%d SKILL.md, %d duplicate names, first kept), %d requests, seed %d\n", len(pool), st.Files, st.Duplicate, len(rs), *seed)
	fmt.Printf("%-8s %7s %7s %9s %10s %10s\n", "skills", "first", "top 3", "top 3 dst", "cpu p50", "cpu max")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail(fmt.Errorf("-sizes: %v", err))
		}
		if err := measure(pool, rs, n, *seed, *verbose); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "findability:", err)
	os.Exit(1)
}

func readRequests(path string) ([]request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []request
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text, exp, ok := strings.Cut(sc.Text(), "\t")
		if !ok || text == "" || exp == "" {
			return nil, fmt.Errorf("%s:%d: want REQUEST<TAB>EXPECTED", path, line)
		}
		out = append(out, request{text: text, expected: strings.Split(exp, ",")})
	}
	return out, sc.Err()
}

// measure builds a catalog of n skills (the real ones, then filler) and
// runs every request against it.
func measure(pool []corpus.Skill, rs []request, n int, seed uint64, verbose bool) error {
	dir, err := os.MkdirTemp("", "findability")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	family, err := writeTree(dir, pool, n, seed)
	if err != nil {
		return err
	}
	c, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		return err
	}
	l, _ := c.Agent("a")
	l.Search("warm the index", 1)
	first, top3, top3d := 0, 0, 0
	var cpu []time.Duration
	for _, r := range rs {
		t0 := testutil.CPUTime()
		hits := l.Search(r.text, 10)
		cpu = append(cpu, testutil.CPUTime()-t0)
		right := func(name string) bool { return slices.Contains(r.expected, family[name]) }
		if len(hits) > 0 && right(hits[0].Name) {
			first++
		}
		ok := false
		for _, h := range hits[:min(3, len(hits))] {
			ok = ok || right(h.Name)
		}
		if ok {
			top3++
		}
		var seen []string
		okd := false
		for _, h := range hits {
			if f := family[h.Name]; !slices.Contains(seen, f) {
				seen = append(seen, f)
				if len(seen) <= 3 && right(h.Name) {
					okd = true
				}
			}
		}
		if okd {
			top3d++
		}
		if verbose && !ok {
			var names []string
			for _, h := range hits[:min(5, len(hits))] {
				names = append(names, h.Name)
			}
			fmt.Printf("  miss %q want %s got %s\n", r.text, strings.Join(r.expected, ","), strings.Join(names, " "))
		}
	}
	slices.Sort(cpu)
	pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(len(rs))) }
	fmt.Printf("%-8d %7s %7s %9s %10s %10s\n", len(family), pct(first), pct(top3), pct(top3d), cpu[len(cpu)/2].Round(time.Microsecond), cpu[len(cpu)-1].Round(time.Microsecond))
	return nil
}

// writeTree writes the real skills and the filler under dir, a folder a
// skill, and returns each skill's family: the real skill it is or was
// cloned from (a neighbour is its own).
func writeTree(dir string, pool []corpus.Skill, n int, seed uint64) (map[string]string, error) {
	family := map[string]string{}
	put := func(name, text string) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(text), 0o644)
	}
	texts := make([]string, len(pool))
	for i, s := range pool {
		b, err := os.ReadFile(s.Path)
		if err != nil {
			return nil, err
		}
		texts[i] = string(b)
		if err := put(s.Name, texts[i]); err != nil {
			return nil, err
		}
		family[s.Name] = s.Name
	}
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	for k := 0; len(family) < n; k++ {
		i := r.IntN(len(pool))
		if k%3 == 0 {
			name := fmt.Sprintf("%s-copy-%d", pool[i].Name, k)
			text := strings.Replace(texts[i], "name: "+pool[i].Name, "name: "+name, 1)
			if !strings.Contains(text, "name: "+name) {
				continue // a name written another way (quoted): take another
			}
			if err := put(name, text); err != nil {
				return nil, err
			}
			family[name] = pool[i].Name
			continue
		}
		j := r.IntN(len(pool))
		a, b := strings.Split(pool[i].Name, "-"), strings.Split(pool[j].Name, "-")
		name := a[r.IntN(len(a))] + "-" + b[r.IntN(len(b))] + "-" + strconv.Itoa(k)
		desc := sentence(pool[i].Description, 0) + " " + sentence(pool[j].Description, 1)
		desc = strings.ReplaceAll(desc, "\n", " ")
		text := "---\nname: " + name + "\ndescription: " + strconv.Quote(desc) + "\n---\n\n# " + name + "\n"
		if err := put(name, text); err != nil {
			return nil, err
		}
		family[name] = name
	}
	return family, nil
}

// sentence is the k-th sentence of d (the last when it has fewer).
func sentence(d string, k int) string {
	parts := strings.SplitAfter(d, ". ")
	return strings.TrimSpace(parts[min(k, len(parts)-1)])
}
