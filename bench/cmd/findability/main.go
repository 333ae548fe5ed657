// Command findability measures whether search_skills finds the right skill
// for realistic requests: for each request of a request set
// (bench/findability/requests.tsv: REQUEST<TAB>EXPECTED[,EXPECTED...]) it
// runs the catalog's search (catalog.Loadout.Search, what search_skills
// and GET /v1/agents/{id}/search answer) and counts the requests whose
// right skill is first, and among the first three hits.
//
// Catalogs: every real skill of the -corpus folders (the collections the
// requests were written from), each written to a folder of its own as it
// is, then, up to each size, filler, seeded:
//
//   - real (the default): a sample of the real skills of the
//     -filler-corpus folders (large public collections, fetched by
//     scripts/skill-corpus.sh), whole SKILL.md files as they are, so the
//     filler is what a large catalog holds: other people's skills on the
//     same subjects, near-duplicates, vendored copies. A filler skill
//     whose name a skill already has is renamed OWNER-NAME (its
//     collection's owner), as a catalog vendoring it would have to.
//   - stitched (a stress mode, not what the figures report): a name of
//     two real names' words and a description of the first sentence of
//     one real skill and a later one of another.
//
// Either way a share (-clones) of the filler is exact clones: a skill
// some request expects, copied whole under another name (NAME-copy-K), as
// collections that vendor each other's skills hold them; clones of one
// skill must not crowd the others out of the top 3.
//
// A hit is right when it is an expected skill, has the description of one
// (white space runs counted as one space: a clone), or had its name
// before it was renamed.
//
// Figures per size: the skills the catalog holds, first (the first hit is
// right), top 3 (a right hit among the first three), and the median and
// largest CPU time of one search. With -v, each request whose first hit
// is wrong, with the first hits.
//
//	scripts/safety-corpus.sh /tmp/safety-corpus
//	scripts/skill-corpus.sh /tmp/filler-corpus
//	go run ./bench/cmd/findability -corpus /tmp/safety-corpus/anthropics+skills,/tmp/safety-corpus/openai+skills,/tmp/safety-corpus/github+awesome-copilot \
//	    -filler-corpus /tmp/filler-corpus/gabrielmoreira+agent-skills-mirror,/tmp/filler-corpus/tomevault-io+skills-registry -v
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
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
	dirs := flag.String("corpus", os.Getenv("LOADOUT_SKILL_CORPUS"), "comma-separated folders of the collections the requests were written from")
	fillerDirs := flag.String("filler-corpus", os.Getenv("LOADOUT_FILLER_CORPUS"), "comma-separated folders of large collections to fill the catalogs with (-filler real)")
	mode := flag.String("filler", "real", "filler: real (skills of -filler-corpus) or stitched (sentences of the -corpus skills joined: a stress mode)")
	clones := flag.Float64("clones", 0.1, "share of the filler that is exact clones of expected skills")
	reqs := flag.String("requests", "bench/findability/requests.tsv", "the request set: REQUEST<TAB>EXPECTED[,EXPECTED...] a line")
	sizes := flag.String("sizes", "0,2000,10000", "catalog sizes; 0 is the -corpus skills alone")
	seed := flag.Uint64("seed", 1, "seed of the filler")
	verbose := flag.Bool("v", false, "print each request whose first hit is wrong, with its hits")
	listing := flag.String("listing", "", "also measure the listing and the search end to end at these budgets (comma-separated characters, e.g. 4000,8000,16000), in every format")
	usage := flag.String("usage", "none", "usage counts the search weighs: none, or zipf (seeded, over the catalog's skills in random order, unrelated to the requests: what a prior that knows nothing of them costs)")
	flag.Parse()
	if *dirs == "" {
		fail(fmt.Errorf("give -corpus (or $LOADOUT_SKILL_CORPUS): folders of the public collections, fetched with scripts/safety-corpus.sh DIR"))
	}
	if *mode != "real" && *mode != "stitched" {
		fail(fmt.Errorf("-filler %q: want real or stitched", *mode))
	}
	if *usage != "none" && *usage != "zipf" {
		fail(fmt.Errorf("-usage %q: want none or zipf", *usage))
	}
	if *clones < 0 || *clones > 1 {
		fail(fmt.Errorf("-clones %v: want a share between 0 and 1", *clones))
	}
	pool, st, err := corpus.Read(strings.Split(*dirs, ","))
	if err != nil {
		fail(err)
	}
	var filler []corpus.Skill
	if *mode == "real" {
		if *fillerDirs == "" {
			fail(fmt.Errorf("give -filler-corpus (or $LOADOUT_FILLER_CORPUS): folders of large collections, fetched with scripts/skill-corpus.sh DIR; or -filler stitched"))
		}
		var fst corpus.Stats
		filler, fst, err = corpus.Read(strings.Split(*fillerDirs, ","))
		if err != nil {
			fail(err)
		}
		fmt.Printf("# filler: %d skills of distinct names (%d SKILL.md, %d skipped, %d duplicate names)\n", len(filler), fst.Files, fst.Skipped, fst.Duplicate)
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
	fmt.Printf("# %d real skills (%d SKILL.md, %d duplicate names, first kept), %d requests, filler %s, clones %.0f%%, usage %s, seed %d\n", len(pool), st.Files, st.Duplicate, len(rs), *mode, 100**clones, *usage, *seed)
	fmt.Printf("%-8s %7s %7s %10s %10s\n", "skills", "first", "top 3", "cpu p50", "cpu max")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail(fmt.Errorf("-sizes: %v", err))
		}
		if err := measure(pool, filler, rs, n, *seed, *clones, *usage == "zipf", *verbose, budgets(*listing)); err != nil {
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

// norm is a description with its runs of white space as one space.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// measure builds a catalog of n skills (the real ones, then filler) and
// runs every request against it.
func measure(pool, filler []corpus.Skill, rs []request, n int, seed uint64, clones float64, zipf, verbose bool, listing []int) error {
	dir, err := os.MkdirTemp("", "findability")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var expected []string
	for _, r := range rs {
		for _, e := range r.expected {
			if !slices.Contains(expected, e) {
				expected = append(expected, e)
			}
		}
	}
	origin, err := writeTree(dir, pool, filler, expected, n, seed, clones)
	if err != nil {
		return err
	}
	c, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		return err
	}
	l, _ := c.Agent("a")
	descs := map[string]string{} // a skill's description, normalised
	for _, e := range l.Entries() {
		descs[e.Skill.Name] = norm(e.Skill.Description)
	}
	for _, s := range pool {
		if _, ok := descs[s.Name]; !ok {
			return fmt.Errorf("the catalog does not hold the real skill %s (%s)", s.Name, s.Path)
		}
	}
	var opt catalog.SearchOptions
	if zipf {
		// The k-th of the skills in a seeded random order was loaded
		// 1000/k times (none past the 1000th), as a few skills are used
		// often and most rarely or never.
		r := rand.New(rand.NewPCG(seed, 7))
		opt.Usage = map[string]int{}
		es := l.Entries()
		for k, i := range r.Perm(len(es))[:min(1000, len(es))] {
			opt.Usage[es[i].Skill.Name] = 1000 / (k + 1)
		}
	}
	l.Search("warm the index", 1)
	first, top3 := 0, 0
	found3 := make([]bool, len(rs))
	rights := make([]func(string) bool, len(rs))
	var cpu []time.Duration
	for i, r := range rs {
		rightDesc := map[string]bool{}
		for _, e := range r.expected {
			rightDesc[descs[e]] = true
		}
		right := func(name string) bool {
			return slices.Contains(r.expected, name) || slices.Contains(r.expected, origin[name]) || rightDesc[descs[name]]
		}
		t0 := testutil.CPUTime()
		hits := l.SearchWith(r.text, 10, opt)
		cpu = append(cpu, testutil.CPUTime()-t0)
		ok1 := len(hits) > 0 && right(hits[0].Name)
		ok3 := slices.ContainsFunc(hits[:min(3, len(hits))], func(h catalog.Hit) bool { return right(h.Name) })
		if ok1 {
			first++
		}
		if ok3 {
			top3++
		}
		found3[i], rights[i] = ok3, right
		if verbose && !ok1 {
			var names []string
			for _, h := range hits[:min(5, len(hits))] {
				names = append(names, h.Name)
			}
			what := "miss"
			if ok3 {
				what = "top3"
			}
			fmt.Printf("  %s %q want %s got %s\n", what, r.text, strings.Join(r.expected, ","), strings.Join(names, " "))
		}
	}
	slices.Sort(cpu)
	pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(len(rs))) }
	fmt.Printf("%-8d %7s %7s %10s %10s\n", len(l.Entries()), pct(first), pct(top3), cpu[len(cpu)/2].Round(time.Microsecond), cpu[len(cpu)-1].Round(time.Microsecond))
	if len(listing) > 0 {
		endToEnd(l, rs, func(i int, name string) bool { return rights[i](name) }, found3, []string{"pi", "catalog", "progressive"}, listing, opt.Usage)
	}
	return nil
}

// budgets reads -listing.
func budgets(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			fail(fmt.Errorf("-listing: %q is not a budget in characters", f))
		}
		out = append(out, n)
	}
	return out
}

// validName is the names the filler keeps (the folder is the name).
var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// writeTree writes the real skills and the filler under dir, a folder a
// skill, and returns each renamed or cloned skill's name before
// (clones: the skill cloned).
func writeTree(dir string, pool, filler []corpus.Skill, expected []string, n int, seed uint64, clones float64) (map[string]string, error) {
	origin := map[string]string{}
	taken := map[string]bool{}
	put := func(name, text string) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		taken[name] = true
		return os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(text), 0o644)
	}
	texts := map[string]string{}
	for _, s := range pool {
		b, err := os.ReadFile(s.Path)
		if err != nil {
			return nil, err
		}
		texts[s.Name] = string(b)
		if err := put(s.Name, texts[s.Name]); err != nil {
			return nil, err
		}
	}
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	left := n - len(taken)
	if left <= 0 {
		return origin, nil
	}
	nClones := int(clones*float64(left) + 0.5)
	for k := 0; k < nClones; k++ {
		e := expected[r.IntN(len(expected))]
		name := fmt.Sprintf("%s-copy-%d", e, k)
		text, ok := rename(texts[e], name)
		if !ok {
			continue // a name written another way (quoted): not cloned
		}
		if err := put(name, text); err != nil {
			return nil, err
		}
		origin[name] = e
	}
	if filler == nil {
		return origin, stitched(r, pool, n, taken, put)
	}
	order := r.Perm(len(filler))
	for _, i := range order {
		if len(taken) >= n {
			break
		}
		s := filler[i]
		if !validName.MatchString(s.Name) || len(s.Name) > 64 {
			continue
		}
		b, err := os.ReadFile(s.Path)
		if err != nil {
			return nil, err
		}
		name, text := s.Name, string(b)
		if taken[name] {
			name = owner(s.Path) + "-" + s.Name
			if !validName.MatchString(name) || taken[name] {
				continue
			}
			var ok bool
			if text, ok = rename(text, name); !ok {
				continue
			}
			origin[name] = s.Name
		}
		if err := put(name, text); err != nil {
			return nil, err
		}
	}
	if len(taken) < n {
		return nil, fmt.Errorf("the filler holds too few skills for %d: %d", n, len(taken))
	}
	return origin, nil
}

// owner is the owner of the repository a filler SKILL.md was vendored
// from, as the large collections spell it in their paths
// (mirrors/repos/OWNER@REPO/... or OWNER--REPO--SKILL/SKILL.md),
// lowercased, else "vendored".
func owner(path string) string {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		o, _, ok := strings.Cut(part, "@")
		if !ok {
			o, _, ok = strings.Cut(part, "--")
		}
		if ok && o != "" {
			o = strings.Trim(strings.ReplaceAll(strings.ToLower(o), "_", "-"), "-")
			if validName.MatchString(o) {
				return o
			}
		}
	}
	return "vendored"
}

// frontName is the name line of a SKILL.md's frontmatter.
var frontName = regexp.MustCompile(`(?m)^name:[^\n]*$`)

// rename gives text (a SKILL.md) the name name: false when its
// frontmatter has no plain name line to change.
func rename(text, name string) (string, bool) {
	if !strings.HasPrefix(text, "---") {
		return "", false
	}
	end := strings.Index(text[3:], "\n---")
	if end < 0 {
		return "", false
	}
	head := text[:3+end]
	loc := frontName.FindStringIndex(head)
	if loc == nil {
		return "", false
	}
	return text[:loc[0]] + "name: " + name + text[loc[1]:], true
}

// stitched fills the tree up to n with skills stitched from the real
// ones (-filler stitched): a stress mode, as no real catalog holds these.
func stitched(r *rand.Rand, pool []corpus.Skill, n int, taken map[string]bool, put func(name, text string) error) error {
	for k := 0; len(taken) < n; k++ {
		i, j := r.IntN(len(pool)), r.IntN(len(pool))
		a, b := strings.Split(pool[i].Name, "-"), strings.Split(pool[j].Name, "-")
		name := a[r.IntN(len(a))] + "-" + b[r.IntN(len(b))] + "-" + strconv.Itoa(k)
		desc := sentence(pool[i].Description, 0) + " " + sentence(pool[j].Description, 1)
		desc = strings.ReplaceAll(desc, "\n", " ")
		text := "---\nname: " + name + "\ndescription: " + strconv.Quote(desc) + "\n---\n\n# " + name + "\n"
		if err := put(name, text); err != nil {
			return err
		}
	}
	return nil
}

// sentence is the k-th sentence of d (the last when it has fewer).
func sentence(d string, k int) string {
	parts := strings.SplitAfter(d, ". ")
	return strings.TrimSpace(parts[min(k, len(parts)-1)])
}
