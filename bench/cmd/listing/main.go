// Command listing measures how useful a skills listing is at every catalog
// size: for catalogs of 50 to 10,000 skills, each prompt format and each
// budget, it renders loadout's listing (render.Prompt, whatever the
// branch it is built from does) and, beside it, the listings of two peers
// modelled as they are (peers.go has the citations, file and line):
//
//   - claude: Claude Code, from its documentation. Every skill's name is
//     always listed, whatever the budget; each description is capped at
//     1,536 characters; while the listing is over the budget, whole
//     descriptions are dropped, the least-used skills' first. When the
//     names alone do not fit, the listing is over the budget: its row says
//     so, and it never counts as the better peer.
//   - codex: Codex, from codex-rs/core-skills/src/render.rs. Skills in
//     scope-then-name order (usage plays no part), one "- name: description
//     (file: path)" line each. All whole when they fit; else, when every
//     bare line fits, what is left is shared among the descriptions one
//     character at a time, round robin; else no description at all, and
//     bare lines in order while they fit, the rest left out (the user gets
//     a warning, the model nothing). When that cuts anything it also tries
//     short "r0/..." paths under a roots table charged to the budget, and
//     keeps whichever lists more. Its warning is printed under its row.
//
// Every strategy gets the same catalog, the same usage counts (a Zipf
// distribution over the skills: a few skills are used often, most rarely or
// never; about 178 skills are used at every size from 200 up) and the same
// budget.
//
// Figures per row: skills named in the text (percent; a name counts when
// it appears as a whole word), skills whose description appears with at
// least the floor's length (the first -floor characters, or the first
// sentence or whole description when shorter; white space runs count as
// one space), the used skills described so (count of those with a usage
// count, and the share of all uses that fall on a described skill: what
// the model can pick from a description when the user asks for what is
// used), characters used of the budget (a peer's by its own rule) and the
// mean render time. After the tables, a summary per size at one budget
// (-summary, 8,000 characters by default) as a Markdown table.
//
// Budgets: the peers' budgets count only their skill lines, not their
// fixed instructions, while loadout's budget includes its fixed text
// (heading, rules, closing). So each format has two loadout rows: "loadout
// FORMAT" with budget B (loadout's rule; the target of every skill named at
// 500 skills and 8,000 characters is checked there) and "loadout FORMAT
// +frame" with budget B plus the format's fixed text, shown in the "fixed"
// column (the comparison with the peers is checked there: "at least as many
// named and described as the better peer", where a peer over its own
// budget, as Claude Code is when its names alone do not fit, never counts).
//
// Catalogs: the example skills first, then either
//
//   - with -corpus DIR[,DIR...]: a seeded random sample of the real skills
//     found there (every SKILL.md, .git and node_modules skipped, parsed
//     leniently as discovery does; skills without name or description,
//     and hidden ones, left out; the first of a name wins, in the order
//     the folders are given and lexical order inside each). A size larger
//     than the pool is skipped, with a message on stderr; or
//   - without it, generated skills whose lengths are fitted to real public
//     collections (anthropics/skills at 9d2f1ae, openai/skills f6b8344,
//     github/awesome-copilot ab7544d, gabrielmoreira/agent-skills-mirror
//     4e7649a and tomevault-io/skills-registry afeda99: 40,297 unique
//     names among 77,627 SKILL.md files, measured with -corpus). Real names are
//     18.2 characters on average (p10 9, p50 17, p90 28); real
//     descriptions 242 (p10 93, p50 209, p90 431, longest 2,559, over the
//     spec's 1,024). Generated names are a noun, noun-verb or noun-verb
//     with qualifiers, nearest a length drawn from a log-normal of median
//     16 and sigma 0.39 (which, with the suffixes that keep names unique,
//     gives mean 18.2, p10 11, p50 17, p90 27 at 10,000 skills);
//     descriptions are whole sentences of a length drawn from a
//     log-normal of median 210 and sigma 0.6, between 20 and 1,024
//     characters (p10 92, p50 204, p90 452, mean 246 at 10,000).
//
// Each size's heading gives its length percentiles and the least any
// listing naming every skill needs (each name and ", "): when that is over
// the budget less the fixed text, every skill named is out of reach, and
// the missed target says so.
//
// The repository ships no real descriptions: give -corpus folders of
// collections checked out elsewhere.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/bench/internal/corpus"
	"github.com/loadout/loadout/examples"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

func main() {
	sizes := flag.String("sizes", "50,200,427,2000,10000", "catalog sizes")
	budgets := flag.String("budgets", "4000,8000,16000", "budgets in characters")
	formats := flag.String("formats", "pi,catalog,progressive", "loadout's formats")
	floor := flag.Int("floor", 60, "the description floor in characters (render's DescriptionFloor)")
	minTime := flag.Duration("mintime", 30*time.Millisecond, "time each render is repeated for, at least")
	seed := flag.Uint64("seed", 1, "catalog seed")
	corpusDirs := flag.String("corpus", "", "comma-separated folders of real SKILL.md files to build the catalogs from (default: generated descriptions)")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	summaryBudget := flag.Int("summary", 8000, "the budget of the closing summary table (one of -budgets)")
	prefix := flag.Bool("prefix", false, "also print how much of the listing a change keeps as its byte prefix (prompt caching)")
	trials := flag.Int("trials", 5, "with -prefix: changes tried per cell")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if !slices.Contains(ints(*budgets), *summaryBudget) {
		fmt.Fprintf(os.Stderr, "listing: -summary %d is not one of -budgets %s: no summary table\n", *summaryBudget, *budgets)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "listing: %v\n", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "listing: %v\n", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	var missed []string

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var pool []corpus.Skill
	if *corpusDirs != "" {
		start := time.Now()
		var st corpus.Stats
		var err error
		pool, st, err = corpus.Read(strings.Split(*corpusDirs, ","))
		if err != nil {
			fmt.Fprintln(os.Stderr, "listing:", err)
			os.Exit(2)
		}
		names := make([]string, len(pool))
		descs := make([]string, len(pool))
		for i, s := range pool {
			names[i], descs[i] = s.Name, s.Description
		}
		fmt.Fprintf(w, "# corpus: %d unique skills from %d SKILL.md files (%d skipped: no name or description or unparsable; %d hidden; %d duplicate names, first kept), read in %s\n# corpus: %s\n",
			len(pool), st.Files, st.Skipped, st.Hidden, st.Duplicate, time.Since(start).Round(time.Millisecond), lengthStats(names, descs))
	} else {
		fmt.Fprintln(w, "# generated descriptions (no -corpus): lengths fitted to real public collections, see bench/cmd/listing")
	}
	fmt.Fprintln(w, "# loadout FORMAT: budget B, its fixed text counted in B (loadout's rule); loadout FORMAT +frame: budget B plus the format's fixed text (the \"fixed\" column), as the peers' budgets count only their entries")
	fixed := map[string]int{}
	for _, f := range strings.Split(*formats, ",") {
		fixed[f] = frameChars(f)
	}
	// Every catalog first, then the pool can go: a large heap left live
	// would slow the timed renders (the collector scans it).
	cats := map[int]*cat{}
	for _, n := range ints(*sizes) {
		c, err := catalog(n, *seed, pool)
		if err != nil {
			w.Flush()
			fmt.Fprintf(os.Stderr, "listing: %d skills: %v; size skipped\n", n, err)
			continue
		}
		cats[n] = c
	}
	pool = nil
	runtime.GC()
	var summary []sumRow
	for _, n := range ints(*sizes) {
		cat := cats[n]
		if cat == nil {
			continue
		}
		// The least any listing that names every skill needs: each name
		// and a one-character separator, no description, no frame.
		bare := 0
		for _, e := range cat.entries {
			bare += utf8.RuneCountInString(e.Name) + 1
		}
		fmt.Fprintf(w, "\n# %d skills: %s; %d skills used; naming them all takes at least %d characters (each name and a space)\n", n, entryStats(cat.entries), len(cat.priority), bare)
		if n >= codexDirsPerRoot {
			fmt.Fprintf(w, "# codex: its discovery visits at most %d folders per root, so with these skills in one root it would load fewer than %d of them (which ones depends on the file system's order); not modelled, it gets the whole catalog as the others do\n", codexDirsPerRoot, codexDirsPerRoot)
		}
		fmt.Fprintf(w, "%6s %6s %-26s %5s %7s %10s %15s %14s %10s\n", "skills", "budget", "strategy", "fixed", "named", "described", "used described", "chars", "render")
		for _, b := range ints(*budgets) {
			var peer peerListing
			d := timeIt(*minTime, func() { peer = claude(cat, b) })
			cl := row(w, n, b, b, "claude", -1, cat, peer.text, peer.chars, d, *floor)
			note(w, "claude", peer.note)
			d = timeIt(*minTime, func() { peer = codex(cat, b) })
			cx := row(w, n, b, b, "codex", -1, cat, peer.text, peer.chars, d, *floor)
			note(w, "codex", peer.note)
			if b == *summaryBudget {
				summary = append(summary, sumRow{n, b, "Claude Code (docs)", cl}, sumRow{n, b, "Codex (render.rs)", cx})
			}
			best := betterPeer(b, cl, cx)
			var text string
			for _, f := range strings.Split(*formats, ",") {
				for _, plus := range []bool{false, true} {
					name, budget := "loadout "+f, b
					if plus {
						name, budget = name+" +frame", b+fixed[f]
					}
					var rep render.Report
					d := timeIt(*minTime, func() {
						text, rep = render.Prompt(cat.entries, nil, render.Options{Format: f, Budget: budget, Priority: cat.priority, DescriptionFloor: *floor, Stable: true, Domains: cat.domains})
					})
					lo := row(w, n, b, budget, name, fixed[f], cat, text, rep.Chars, d, *floor)
					if b == *summaryBudget {
						summary = append(summary, sumRow{n, budget, name, lo})
					}
					// The targets, checked on every row.
					if lo.chars > budget {
						missed = append(missed, fmt.Sprintf("%d skills, %s, budget %d: %d characters, over the budget", n, name, budget, lo.chars))
					}
					// The peers' budgets do not count their fixed text:
					// compare with them on the +frame rows.
					if plus && (lo.named < best.named || lo.described < best.described) {
						missed = append(missed, fmt.Sprintf("%d skills, %s, budget %d: %d named and %d described, fewer than the better peer within its budget (%d, %d)",
							n, name, b, lo.named, lo.described, best.named, best.described))
					}
					if !plus && n == 500 && b == 8000 && f != "pi" && lo.named < n {
						why := ""
						if bare > budget-fixed[f] {
							why = fmt.Sprintf(" (out of reach: the names alone take %d characters, %d are left after the fixed text)", bare, budget-fixed[f])
						}
						missed = append(missed, fmt.Sprintf("500 skills, %s, budget 8000: %d named, not all%s", name, lo.named, why))
					}
					if n == 10000 && d > 5*time.Millisecond {
						missed = append(missed, fmt.Sprintf("10000 skills, %s, budget %d: render took %s, over 5ms", name, budget, d.Round(time.Microsecond)))
					}
				}
			}
		}
	}
	printSummary(w, summary, cats, *summaryBudget)
	if *prefix {
		missed = append(missed, prefixTable(w, cats, ints(*sizes), ints(*budgets), strings.Split(*formats, ","), *floor, *trials, *seed)...)
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

// frameChars is the characters of format's fixed text (heading, rules and
// closing, with no entry): a listing of one entry less the cost of one
// entry, measured as the difference between listings of two and one.
func frameChars(format string) int {
	one := []render.Entry{{Name: "x", Description: "d", Dir: "/s/x", Location: "/s/x/SKILL.md"}}
	two := append(one[:1:1], render.Entry{Name: "y", Description: "d", Dir: "/s/y", Location: "/s/y/SKILL.md"})
	_, r1 := render.Prompt(one, nil, render.Options{Format: format, Budget: -1})
	_, r2 := render.Prompt(two, nil, render.Options{Format: format, Budget: -1})
	return 2*r1.Chars - r2.Chars
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

// figures are one row's counts. usedDescribed counts the described skills
// with a usage count; usesDescribed sums their counts.
type figures struct{ named, described, usedDescribed, usesDescribed, chars int }

// row prints one strategy's figures. size is the row's budget column,
// budget what the strategy was given; fixed is the format's fixed text in
// characters, -1 for the peers (their budgets count only their entries).
func row(w *bufio.Writer, n, size, budget int, name string, fixed int, c *cat, text string, chars int, d time.Duration, floor int) figures {
	f := measure(c, text, floor)
	f.chars = chars
	over := ""
	if chars > budget {
		over = " OVER BUDGET"
	}
	fx := "-"
	if fixed >= 0 {
		fx = strconv.Itoa(fixed)
	}
	fmt.Fprintf(w, "%6d %6d %-26s %5s %6.1f%% %9.1f%% %7s %6.1f%% %6d/%-7d %10s%s\n", n, size, name, fx,
		100*float64(f.named)/float64(n), 100*float64(f.described)/float64(n),
		fmt.Sprintf("%d/%d", f.usedDescribed, len(c.priority)), c.usesShare(f.usesDescribed),
		chars, budget, d.Round(time.Microsecond), over)
	return f
}

// betterPeer is the most named and the most described among the peers
// within budget: a listing over its budget (Claude Code's, when the names
// alone do not fit) is not a like-for-like answer, so it never counts.
func betterPeer(budget int, peers ...figures) figures {
	var best figures
	for _, p := range peers {
		if p.chars <= budget {
			best.named = max(best.named, p.named)
			best.described = max(best.described, p.described)
		}
	}
	return best
}

// note prints what a peer tells the user under its row.
func note(w *bufio.Writer, who, text string) {
	if text != "" {
		fmt.Fprintf(w, "%6s %6s   %s to the user: %s\n", "", "", who, text)
	}
}

// usesShare is uses as a percent of all the catalog's uses.
func (c *cat) usesShare(uses int) float64 {
	total := 0
	for _, u := range c.usage {
		total += u
	}
	return 100 * float64(uses) / float64(max(total, 1))
}

// measure counts the skills named in text (as a whole word) and those whose
// description appears there with at least the floor's length, and of
// those the used ones and their uses. Runs of white space count as one
// space on both sides, since a format may put a description on one line.
func measure(c *cat, text string, floor int) figures {
	var f figures
	text = html.UnescapeString(text) // pi and progressive are XML
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !plainRune(r) }) {
		words[w] = true
	}
	flat := oneLine(text)
	for _, e := range c.entries {
		if words[e.Name] || !plainName(e.Name) && hasWord(text, e.Name) {
			f.named++
		}
		if strings.Contains(flat, floorPrefix(oneLine(e.Description), floor)) {
			f.described++
			if u := c.usage[e.Name]; u > 0 {
				f.usedDescribed++
				f.usesDescribed += u
			}
		}
	}
	return f
}

// sumRow is one line of the closing summary.
type sumRow struct {
	n, budget int
	strategy  string
	f         figures
}

// printSummary prints, per size, each strategy's figures at the summary
// budget as a Markdown table, for the README.
func printSummary(w *bufio.Writer, rows []sumRow, cats map[int]*cat, budget int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n# Summary at %d characters (loadout FORMAT: fixed text in the budget; +frame: budget plus fixed text, as the peers count only their skill lines)\n\n", budget)
	fmt.Fprintln(w, "| skills | strategy | named | described | used skills described | uses on a described skill | chars / budget |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		c := cats[r.n]
		over := ""
		if r.f.chars > r.budget {
			over = " **over**"
		}
		fmt.Fprintf(w, "| %d | %s | %.1f%% | %.1f%% | %d of %d (%.0f%%) | %.1f%% | %d / %d%s |\n", r.n, r.strategy,
			100*float64(r.f.named)/float64(r.n), 100*float64(r.f.described)/float64(r.n),
			r.f.usedDescribed, len(c.priority), 100*float64(r.f.usedDescribed)/float64(max(len(c.priority), 1)),
			c.usesShare(r.f.usesDescribed), r.f.chars, r.budget, over)
	}
}

func plainRune(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' }

// plainName is a name of the spec's alphabet, which measure finds by word.
func plainName(s string) bool {
	for _, r := range s {
		if !plainRune(r) {
			return false
		}
	}
	return s != ""
}

// hasWord reports whether name occurs in text with no letter, digit, '-'
// or '_' on either side (real names are not all of the spec's alphabet).
func hasWord(text, name string) bool {
	wordy := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' }
	for off := 0; ; {
		i := strings.Index(text[off:], name)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(name):])
		if (i == 0 || !wordy(before)) && (i+len(name) == len(text) || !wordy(after)) {
			return true
		}
		off = i + 1
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// floorPrefix is the part of a description a listing must keep for it to
// count as described: the first floor characters, or the first sentence
// (up to a '.', '!' or '?' followed by white space) or the whole
// description when that is shorter. Lengths are in code points.
func floorPrefix(d string, floor int) string {
	rs := []rune(d)
	n := min(floor, len(rs))
	for i := 1; i < n; i++ {
		if unicode.IsSpace(rs[i]) && strings.ContainsRune(".!?", rs[i-1]) {
			n = i
			break
		}
	}
	return string(rs[:n])
}

type cat struct {
	entries  []render.Entry // by name
	usage    map[string]int
	ranked   []string // every skill, most used first, then by name
	priority []string // the used ones of ranked: catalog.Loadout.Priority's rule (no pins)
	// domains of the entries, made once as catalog.Loadout keeps them
	// (render.NewDomains): the renders timed are the server's.
	domains *render.Domains
}

// root is where the catalogs' skills live: DIR/<name>/SKILL.md for real
// ones, DIR/<area>/<name>/SKILL.md for generated ones.
const root = "/home/user/.agents/skills"

// catalog builds n skills: the example skills first, then, with a pool of
// real skills, a random sample of it (seeded: the same pool, seed and n
// give the same catalog), else generated skills (see the package comment);
// then Zipf usage counts. It fails when the pool is too small for n.
func catalog(n int, seed uint64, pool []corpus.Skill) (*cat, error) {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	c := &cat{usage: map[string]int{}}
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
		c.entries = append(c.entries, render.Entry{Name: s.Name, Description: s.Description, Dir: dir, Location: dir + "/SKILL.md", Category: s.Category})
		return nil
	})
	taken := map[string]int{}
	for _, e := range c.entries {
		taken[e.Name] = 1
	}
	if pool != nil {
		have := map[string]bool{}
		for name := range taken {
			have[name] = true
		}
		need := n - len(c.entries)
		got := sample(pool, have, need, seed)
		if len(got) < need {
			return nil, fmt.Errorf("the corpus has %d usable skills besides the %d example skills, fewer than the %d needed", len(got), len(c.entries), need)
		}
		for _, s := range got {
			dir := root + "/" + s.Name
			c.entries = append(c.entries, render.Entry{Name: s.Name, Description: s.Description, Dir: dir, Location: dir + "/SKILL.md", Category: s.Category})
		}
	}
	for i := len(c.entries); i < n; i++ {
		area := gen.Categories[r.IntN(len(gen.Categories))]
		name := genName(r, area)
		if taken[name]++; taken[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, taken[name])
		}
		dir := root + "/" + area.Name + "/" + name
		c.entries = append(c.entries, render.Entry{Name: name, Description: description(r, name), Dir: dir, Location: dir + "/SKILL.md"})
	}
	slices.SortFunc(c.entries, func(a, b render.Entry) int { return strings.Compare(a.Name, b.Name) })
	// Zipf usage over a random order of the skills: rank k gets
	// 300/k^1.1 loads, rounded down, so 178 skills are used (all of them
	// below that size) and the others never.
	order := r.Perm(n)
	for k, i := range order {
		if u := int(300 / math.Pow(float64(k+1), 1.1)); u > 0 {
			c.usage[c.entries[i].Name] = u
		}
	}
	c.rank()
	c.domains = render.NewDomains(c.entries)
	return c, nil
}

// rank sets ranked and priority from the entries (in name order) and usage.
func (c *cat) rank() {
	c.ranked, c.priority = nil, nil
	for _, e := range c.entries {
		c.ranked = append(c.ranked, e.Name)
	}
	slices.SortStableFunc(c.ranked, func(a, b string) int { return c.usage[b] - c.usage[a] })
	for _, name := range c.ranked {
		if c.usage[name] > 0 {
			c.priority = append(c.priority, name)
		}
	}
}

// Fitted to the real collections (see the package comment).
const (
	nameMedian = 16   // characters
	nameSigma  = 0.39 // of the log-normal; with the suffixes that keep names unique: p10 11, p50 17, p90 27, mean 18.2 at 10,000
	descMedian = 210  // characters
	descSigma  = 0.6  // at 10,000: p10 92, p50 204, p90 452, mean 246
	descMax    = 1024 // the format's limit
)

// qualifiers lengthen generated names the way real ones are long
// ("pdf-fill-best-practices").
var qualifiers = strings.Fields(`helper guide workflow expert toolkit patterns
best-practices automation assistant generator analyzer builder manager setup
advanced basics pro cli api skill tools checklist`)

// genName is a noun, or noun-verb as most real names go (pdf-fill,
// docker-review), with qualifiers added: whichever is nearest a length
// drawn from the fitted log-normal distribution.
func genName(r *rand.Rand, area gen.Category) string {
	want := max(3, min(int(math.Round(nameMedian*math.Exp(nameSigma*r.NormFloat64()))), 64))
	noun := area.Nouns[r.IntN(len(area.Nouns))]
	name := noun + "-" + gen.Verbs[r.IntN(len(gen.Verbs))]
	if len(name)-want > want-len(noun) {
		return noun
	}
	for len(name) < want {
		longer := name + "-" + qualifiers[r.IntN(len(qualifiers))]
		if len(longer)-want > want-len(name) {
			break
		}
		name = longer
	}
	return name
}

// description is whole sentences, its length drawn from the fitted
// log-normal distribution, between 20 and descMax characters.
func description(r *rand.Rand, name string) string {
	n := int(descMedian * math.Exp(descSigma*r.NormFloat64()))
	n = max(20, min(n, descMax))
	noun, _, _ := strings.Cut(name, "-")
	var b strings.Builder
	b.WriteString(gen.Sentence(r, strings.ToUpper(gen.Verbs[r.IntN(len(gen.Verbs))][:1])+gen.Verbs[r.IntN(len(gen.Verbs))][1:]+" "+noun, 4+r.IntN(8)))
	for b.Len() < n {
		b.WriteByte(' ')
		b.WriteString(gen.Sentence(r, "", 5+r.IntN(10)))
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
