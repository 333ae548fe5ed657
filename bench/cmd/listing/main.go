// Command listing measures how useful a skills listing is at every catalog
// size: for catalogs of 100 to 10,000 skills, each prompt format and each
// budget, it renders loadout's listing (render.Prompt, whatever the
// branch it is built from does) and, beside it, the listings of two peers'
// documented strategies on the same catalog:
//
//   - claude: Claude Code keeps every skill's name and drops the
//     descriptions of the least-used skills when the list is over its
//     character budget (a "- name: description" line per skill; a
//     description is kept whole or dropped, most used kept first).
//   - codex: Codex lists a "- name (file: PATH)" line for every skill and
//     shares what is left of the budget among the descriptions, round
//     robin (each gets an equal share, cut at that length; shares a short
//     description does not need go to the others).
//
// Both peers name skills until even the bare lines do not fit; then the
// least-used ones are left out. Every strategy gets the same catalog, the
// same usage counts (a Zipf distribution over the skills: a few skills
// are used often, most rarely or never) and the same budget.
//
// Figures per row: skills named in the text (percent; a name counts when
// it appears as a whole word), skills whose description appears with at
// least the floor's length (the first -floor characters, or the first
// sentence or whole description when shorter), characters used of the
// budget, and the mean render time.
//
// The descriptions are generated, not real: the example skills' six real
// descriptions (119 to 159 characters) plus descriptions whose lengths
// follow a log-normal distribution (median 150 characters, 10th percentile
// about 75, 90th about 300, at most 1,024 as the format allows) made of
// whole sentences, which is the shape of public skill collections. The
// repository ships no corpus of real public descriptions.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"github.com/loadout/loadout/bench/gen"
	"html"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/examples"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

func main() {
	sizes := flag.String("sizes", "100,500,2000,10000", "catalog sizes")
	budgets := flag.String("budgets", "4000,8000,16000", "budgets in characters")
	formats := flag.String("formats", "pi,catalog,progressive", "loadout's formats")
	floor := flag.Int("floor", 60, "the description floor in characters (render's DescriptionFloor)")
	minTime := flag.Duration("mintime", 30*time.Millisecond, "time each render is repeated for, at least")
	seed := flag.Uint64("seed", 1, "catalog seed")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	flag.Parse()
	var missed []string

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, n := range ints(*sizes) {
		cat := catalog(n, *seed)
		lens := make([]int, 0, n)
		for _, e := range cat.entries {
			lens = append(lens, utf8.RuneCountInString(e.Description))
		}
		slices.Sort(lens)
		fmt.Fprintf(w, "# %d skills: names %.1f characters on average; descriptions median %d, 10th percentile %d, 90th %d, longest %d; %d skills used\n",
			n, cat.meanName, lens[n/2], lens[n/10], lens[n*9/10], lens[n-1], len(cat.priority))
		fmt.Fprintf(w, "%6s %6s %-22s %7s %10s %14s %10s\n", "skills", "budget", "strategy", "named", "described", "chars", "render")
		for _, b := range ints(*budgets) {
			var text string
			d := timeIt(*minTime, func() { text = claude(cat, b) })
			cl := row(w, n, b, "claude", cat, text, utf8.RuneCountInString(text), d, *floor)
			d = timeIt(*minTime, func() { text = codex(cat, b) })
			cx := row(w, n, b, "codex", cat, text, utf8.RuneCountInString(text), d, *floor)
			for _, f := range strings.Split(*formats, ",") {
				var rep render.Report
				d := timeIt(*minTime, func() {
					text, rep = render.Prompt(cat.entries, nil, render.Options{Format: f, Budget: b, Priority: cat.priority})
				})
				lo := row(w, n, b, "loadout "+f, cat, text, rep.Chars, d, *floor)
				// The targets, checked on every row.
				if lo.chars > b {
					missed = append(missed, fmt.Sprintf("%d skills, %s, budget %d: %d characters, over the budget", n, f, b, lo.chars))
				}
				if lo.named < max(cl.named, cx.named) || lo.described < max(cl.described, cx.described) {
					missed = append(missed, fmt.Sprintf("%d skills, %s, budget %d: %d named and %d described, fewer than the better peer (%d, %d)",
						n, f, b, lo.named, lo.described, max(cl.named, cx.named), max(cl.described, cx.described)))
				}
				if n == 500 && b == 8000 && f != "pi" && lo.named < n {
					missed = append(missed, fmt.Sprintf("500 skills, %s, budget 8000: %d named, not all", f, lo.named))
				}
				if n == 10000 && d > 5*time.Millisecond {
					missed = append(missed, fmt.Sprintf("10000 skills, %s, budget %d: render took %s, over 5ms", f, b, d.Round(time.Microsecond)))
				}
			}
		}
	}
	if len(missed) > 0 {
		fmt.Fprintf(w, "\n%d targets missed:\n", len(missed))
		for _, m := range missed {
			fmt.Fprintln(w, "  "+m)
		}
		if *strict {
			w.Flush()
			os.Exit(1)
		}
	}
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "listing: %q is not a number\n", f)
			os.Exit(2)
		}
		out = append(out, v)
	}
	return out
}

func timeIt(min time.Duration, fn func()) time.Duration {
	start := time.Now()
	n := 0
	for n < 3 || time.Since(start) < min {
		fn()
		n++
	}
	return time.Since(start) / time.Duration(n)
}

type figures struct{ named, described, chars int }

func row(w *bufio.Writer, n, budget int, name string, c *cat, text string, chars int, d time.Duration, floor int) figures {
	named, described := measure(c, text, floor)
	over := ""
	if chars > budget {
		over = " OVER BUDGET"
	}
	fmt.Fprintf(w, "%6d %6d %-22s %6.1f%% %9.1f%% %6d/%-7d %10s%s\n", n, budget, name,
		100*float64(named)/float64(n), 100*float64(described)/float64(n), chars, budget, d.Round(time.Microsecond), over)
	return figures{named, described, chars}
}

// measure counts the skills named in text (as a whole word) and those whose
// description appears there with at least the floor's length.
func measure(c *cat, text string, floor int) (named, described int) {
	text = html.UnescapeString(text) // pi and progressive are XML
	words := map[string]bool{}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	}) {
		words[f] = true
	}
	for _, e := range c.entries {
		if words[e.Name] {
			named++
		}
		if strings.Contains(text, floorPrefix(e.Description, floor)) {
			described++
		}
	}
	return named, described
}

// floorPrefix is the part of a description a listing must keep for it to
// count as described: the first floor characters, or the first sentence or
// the whole description when that is shorter.
func floorPrefix(d string, floor int) string {
	n := min(floor, utf8.RuneCountInString(d))
	if i := strings.Index(d, ". "); i >= 0 && i+1 < n {
		n = i + 1
	}
	return string([]rune(d)[:n])
}

type cat struct {
	entries  []render.Entry // by name
	usage    map[string]int
	meanName float64  // mean name length in characters
	ranked   []string // every skill, most used first, then by name
	priority []string // the used ones of ranked: catalog.Loadout.Priority's rule (no pins)
}

// catalog builds n skills: the example skills' real descriptions first,
// then generated ones (see the package comment), with Zipf usage counts.
func catalog(n int, seed uint64) *cat {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	c := &cat{usage: map[string]int{}}
	const root = "/home/user/.agents/skills"
	fs.WalkDir(examples.FS(), "skills", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "SKILL.md" || len(c.entries) >= n {
			return nil
		}
		data, _ := fs.ReadFile(examples.FS(), p)
		s, _, ok := skill.Parse(data, p, path.Base(path.Dir(p)))
		if !ok || s.Name == "" || s.Description == "" {
			return nil
		}
		dir := root + "/" + path.Base(path.Dir(p))
		c.entries = append(c.entries, render.Entry{Name: s.Name, Description: s.Description, Dir: dir, Location: dir + "/SKILL.md"})
		return nil
	})
	taken := map[string]int{}
	for _, e := range c.entries {
		taken[e.Name] = 1
	}
	for i := len(c.entries); i < n; i++ {
		// noun-verb, as real names go (pdf-fill, docker-review); a name
		// already taken gets a number (pdf-fill-2).
		area := gen.Categories[r.IntN(len(gen.Categories))]
		name := area.Nouns[r.IntN(len(area.Nouns))] + "-" + gen.Verbs[r.IntN(len(gen.Verbs))]
		if taken[name]++; taken[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, taken[name])
		}
		dir := root + "/" + area.Name + "/" + name
		c.entries = append(c.entries, render.Entry{Name: name, Description: description(r, name), Dir: dir, Location: dir + "/SKILL.md"})
	}
	slices.SortFunc(c.entries, func(a, b render.Entry) int { return strings.Compare(a.Name, b.Name) })
	chars := 0
	for _, e := range c.entries {
		chars += utf8.RuneCountInString(e.Name)
	}
	c.meanName = float64(chars) / float64(max(n, 1))
	// Zipf usage over a random order of the skills: rank k gets
	// 300/k^1.1 loads, rounded down, so about 180 skills are used and the
	// others never.
	order := r.Perm(n)
	for k, i := range order {
		if u := int(300 / math.Pow(float64(k+1), 1.1)); u > 0 {
			c.usage[c.entries[i].Name] = u
		}
	}
	for _, e := range c.entries {
		c.ranked = append(c.ranked, e.Name)
	}
	slices.SortStableFunc(c.ranked, func(a, b string) int { return c.usage[b] - c.usage[a] })
	for _, name := range c.ranked {
		if c.usage[name] > 0 {
			c.priority = append(c.priority, name)
		}
	}
	return c
}

// description is whole sentences, its length drawn from a log-normal
// distribution (median 150, sigma 0.6), between 20 and 1,024 characters.
func description(r *rand.Rand, name string) string {
	n := int(150 * math.Exp(0.6*r.NormFloat64()))
	n = max(20, min(n, 1024))
	noun, _, _ := strings.Cut(name, "-")
	var b strings.Builder
	b.WriteString(sentence(r, strings.ToUpper(gen.Verbs[r.IntN(len(gen.Verbs))][:1])+gen.Verbs[r.IntN(len(gen.Verbs))][1:]+" "+noun, 4+r.IntN(8)))
	for b.Len() < n {
		b.WriteByte(' ')
		b.WriteString(sentence(r, "", 5+r.IntN(10)))
	}
	s := b.String()
	if len(s) > n {
		s = strings.TrimRight(s[:n], " ,")
		if i := strings.LastIndexByte(s, ' '); i > 20 {
			s = s[:i]
		}
		s = strings.TrimRight(s, " ,") + "."
	}
	return s
}

func sentence(r *rand.Rand, start string, nw int) string {
	var b strings.Builder
	b.WriteString(start)
	for i := range nw {
		w := words[r.IntN(len(words))]
		if b.Len() == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if i > 0 && i < nw-1 && r.IntN(9) == 0 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('.')
	return b.String()
}

var words = strings.Fields(`the a this skill helps you with when user asks for files
data reports tables pages forms notes tasks steps results changes errors
project repository document template workflow pipeline service team release
quickly safely carefully consistently reliably using standard tools and
scripts to create edit check update compare clean verify export import
structured output format layout sections headings lists examples summary
review before after each every any new existing large small local remote
source target version history config settings options defaults limits`)

// byUse is the skills most used first, then by name: the order both peers
// keep things in when the budget runs out.
func (c *cat) byUse() []render.Entry {
	idx := map[string]int{}
	for i, e := range c.entries {
		idx[e.Name] = i
	}
	out := make([]render.Entry, len(c.ranked))
	for i, name := range c.ranked {
		out[i] = c.entries[idx[name]]
	}
	return out
}

// claude is Claude Code's strategy: a "- name: description" line per
// skill, in name order; every name is kept while the bare lines fit (the
// least used go first when they do not), and descriptions are added
// whole, most used first, while they fit.
func claude(c *cat, budget int) string {
	used := 0
	keep := map[string]bool{}
	for _, e := range c.byUse() {
		l := utf8.RuneCountInString(e.Name) + 3 // "- " + name + "\n"
		if used+l > budget {
			break
		}
		used += l
		keep[e.Name] = true
	}
	desc := map[string]bool{}
	for _, e := range c.byUse() {
		if !keep[e.Name] {
			continue
		}
		l := utf8.RuneCountInString(e.Description) + 2 // ": " + description
		if used+l <= budget {
			used += l
			desc[e.Name] = true
		}
	}
	var b strings.Builder
	for _, e := range c.entries {
		if !keep[e.Name] {
			continue
		}
		b.WriteString("- " + e.Name)
		if desc[e.Name] {
			b.WriteString(": " + e.Description)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// codex is Codex's strategy: a "- name (file: PATH)" line for every skill
// that fits (the least used left out first), and what is left of the
// budget shared among the descriptions round robin: each gets an equal
// share, and what a short description does not need goes to the others.
func codex(c *cat, budget int) string {
	used := 0
	keep := map[string]bool{}
	var kept []render.Entry
	for _, e := range c.byUse() {
		l := utf8.RuneCountInString(e.Name) + utf8.RuneCountInString(e.Location) + 12 // "- " + name + " (file: " + path + ")\n"
		if used+l > budget {
			break
		}
		used += l
		keep[e.Name] = true
		kept = append(kept, e)
	}
	// Round robin: every round gives each unfinished description one
	// more equal share of what is left (": " costs 2 once it starts).
	give := map[string]int{}
	left := budget - used
	open := kept
	for left > 0 && len(open) > 0 {
		share := max(left/len(open), 1)
		var next []render.Entry
		for _, e := range open {
			if left <= 0 {
				break
			}
			need := utf8.RuneCountInString(e.Description) - give[e.Name]
			if give[e.Name] == 0 {
				need += 2
			}
			g := min(share, need, left)
			give[e.Name] += g
			left -= g
			if g < need {
				next = append(next, e)
			}
		}
		if share == 1 && len(next) == len(open) && left <= 0 {
			break
		}
		open = next
	}
	var b strings.Builder
	for _, e := range c.entries {
		if !keep[e.Name] {
			continue
		}
		b.WriteString("- " + e.Name)
		if g := give[e.Name]; g > 2 {
			b.WriteString(": " + string([]rune(e.Description)[:g-2]))
		}
		b.WriteString(" (file: " + e.Location + ")\n")
	}
	return b.String()
}
