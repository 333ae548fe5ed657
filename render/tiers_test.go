package render

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// genCatalog makes n skills the way real collections look: names with
// shared prefixes, some categories, a few roots, and descriptions of one to
// several sentences (about 40 to 1,000 characters, most 100 to 300), with
// the odd escaped character and non-ASCII word.
func genCatalog(r *rand.Rand, n int) []Entry {
	prefixes := []string{"pdf", "git", "data", "deploy", "test", "docs", "k8s", "sql", "img", "web", "aws", "ui"}
	verbs := []string{"Extract", "Review", "Convert", "Deploy", "Summarise", "Validate", "Generate", "Migrate", "Format", "Debug"}
	objects := []string{"tables from PDF files", "pull requests", "CSV & JSON data", "Kubernetes manifests", "release notes",
		"database schemas", "images for the web", "unit tests", "API clients", "Terraform plans", "<svg> icons", "café menus"}
	tails := []string{"Use when the user asks for it.", "Works offline.", "Handles edge cases like empty rows and 'quoted' fields.",
		"Prefer this over ad-hoc scripts.", "Reads the project's config first.", "Asks before overwriting files.",
		"Supports large inputs by streaming them.", "Explains each step it takes."}
	cats := []string{"", "", "", "ops", "docs", "data", "dev"}
	roots := []string{"/home/ann/.agents/skills", "/work/repo/.agents/skills", "/opt/skills"}
	es := make([]Entry, n)
	for i := range es {
		name := prefixes[r.IntN(len(prefixes))] + "-" + strconv.Itoa(i)
		if r.IntN(5) == 0 {
			name = "tool" + strconv.Itoa(i)
		}
		var d strings.Builder
		d.WriteString(verbs[r.IntN(len(verbs))] + " " + objects[r.IntN(len(objects))] + ".")
		for k := int(r.ExpFloat64() * 2.5); k > 0 && d.Len() < 1000; k-- {
			d.WriteString(" " + tails[r.IntN(len(tails))])
		}
		root := roots[r.IntN(len(roots))]
		es[i] = Entry{
			Name:        name,
			Description: d.String(),
			Location:    root + "/" + name + "/SKILL.md",
			Dir:         root + "/" + name,
			Category:    cats[r.IntN(len(cats))],
			Virtual:     r.IntN(50) == 0,
		}
		if es[i].Virtual {
			es[i].Location, es[i].Dir = "store://"+name+"/SKILL.md", "store://"+name
		}
	}
	return es
}

// shown parses a rendered listing back into the names it shows: described
// (in the block or the catalog's bullets) and named only (compact section).
func shown(t *testing.T, format, out string) (described, named []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	inPiNames := false
	for _, l := range lines {
		switch {
		case format == FormatCatalog && strings.HasPrefix(l, "- **"):
			n, _, ok := strings.Cut(l[4:], "**: ")
			if !ok {
				t.Fatalf("bad catalog line %q", l)
			}
			described = append(described, n)
		case format != FormatPi && strings.HasPrefix(l, namesLine):
			named = append(named, splitNames(l[len(namesLine):])...)
		case format == FormatPi && strings.HasPrefix(l, "More skills, by folder"):
			inPiNames = true
		case inPiNames && strings.HasPrefix(l, "- "):
			_, ns, ok := strings.Cut(l[2:], ": ")
			if !ok {
				t.Fatalf("bad pi names line %q", l)
			}
			for _, n := range splitNames(ns) {
				n, _, _ = strings.Cut(n, " (")
				named = append(named, n)
			}
		default:
			inPiNames = false
		}
	}
	if format != FormatCatalog && out != "" {
		for _, x := range parseListing(t, out) {
			described = append(described, x.Name+x.ID)
		}
	}
	return described, named
}

// TestTiersProperty: random catalogs of 0 to 3,000 skills with realistic
// descriptions, random budgets (characters and tokens) and priorities.
func TestTiersProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	iters := 45
	if testing.Short() {
		iters = 9
	}
	for iter := range iters {
		n := []int{0, 1, 5, 40, 300, 1000, 3000}[iter%7]
		if iter%2 == 1 {
			n = r.IntN(n + 1)
		}
		es := genCatalog(r, n)
		f := []string{FormatPi, FormatCatalog, FormatProgressive}[iter%3]
		opt := Options{Format: f, Budget: 1 + r.IntN(40000)}
		if r.IntN(3) == 0 {
			opt.BudgetTokens = 1 + r.IntN(8000)
		}
		if r.IntN(2) == 0 {
			opt.DescriptionFloor = 20 + r.IntN(100)
		}
		for range r.IntN(50) {
			if n > 0 {
				opt.Priority = append(opt.Priority, es[r.IntN(n)].Name)
			}
		}
		opt.Priority = append(opt.Priority, "no-such-skill")
		got, rep := Prompt(es, nil, opt)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("iter %d, %s, %d skills, %+v: %s", iter, f, n, opt, fmt.Sprintf(format, args...))
		}
		again, rep2 := Prompt(slices.Clone(es), nil, opt)
		if again != got || rep2.Chars != rep.Chars || !slices.Equal(rep.Omitted, rep2.Omitted) {
			fail("two renders differ")
		}
		chars := utf8.RuneCountInString(got)
		if chars != rep.Chars || rep.Tokens != ApproxTokens(got) {
			fail("Chars %d Tokens %d, output has %d chars", rep.Chars, rep.Tokens, chars)
		}
		if !rep.TooSmall {
			if chars > opt.Budget {
				fail("%d chars over budget", chars)
			}
			if opt.BudgetTokens > 0 && rep.Tokens > opt.BudgetTokens {
				fail("%d tokens over budget", rep.Tokens)
			}
		} else if rep.Chars != rep.MinBudget || rep.Budget >= rep.MinBudget {
			fail("TooSmall with Chars %d, MinBudget %d, Budget %d", rep.Chars, rep.MinBudget, rep.Budget)
		}
		// Every skill has one tier; every name shown is a real skill, shown
		// once, in the tier reported.
		if len(rep.Tiers) != n || len(rep.Names) != n || rep.Listed+len(rep.Omitted) != n {
			fail("%d tiers, Listed %d, Omitted %d", len(rep.Tiers), rep.Listed, len(rep.Omitted))
		}
		described, named := shown(t, f, got)
		seen := map[string]bool{}
		tiers := rep.TierMap()
		for _, name := range slices.Concat(described, named) {
			if _, ok := tiers[name]; !ok || seen[name] {
				fail("%q shown but not a skill, or shown twice", name)
			}
			seen[name] = true
		}
		for _, name := range described {
			if tr := rep.Tier(name); tr != TierFull && tr != TierShortened {
				fail("%q described but tier %s", name, tr)
			}
		}
		for _, name := range named {
			if rep.Tier(name) != TierName {
				fail("%q named only but tier %s", name, rep.Tier(name))
			}
		}
		if len(seen) != rep.Listed {
			fail("%d names shown, Listed %d", len(seen), rep.Listed)
		}
		// The skills not named are counted: in groups that add up, or in
		// the note.
		if g := len(rep.Grouped); g > 0 {
			if !strings.Contains(got, fmt.Sprintf("%d more skill", g)) {
				fail("no line counts the %d grouped skills", g)
			}
			sum := 0
			for _, m := range groupCountRe(got) {
				if m <= 0 {
					fail("a domain of %d skills on the groups line", m)
				}
				sum += m
			}
			if sum != g {
				fail("groups count %d, %d grouped", sum, g)
			}
		} else if len(rep.Omitted) > 0 && !strings.Contains(got, fmt.Sprintf("%d more skill", len(rep.Omitted))) {
			fail("no line counts the %d omitted skills", len(rep.Omitted))
		}
		// Names go in priority order: a named skill ranks above every
		// skill that is not.
		rank := priorityRank(es, opt.Priority)
		firstOut := false
		for _, i := range rank {
			out := seen[es[i].Name]
			if !out {
				firstOut = true
			} else if firstOut {
				fail("%q named after a skill preferred to it was not", es[i].Name)
			}
		}
		// No description below the floor.
		if f != FormatCatalog && n > 0 {
			floor := opt.DescriptionFloor
			if floor == 0 {
				floor = DefaultDescriptionFloor
			}
			for _, x := range parseListing(t, got) {
				if p, ok := strings.CutSuffix(x.Description, Ellipsis); ok && !aboveFloor(p, floor) {
					fail("%q: %q is below the floor %d", x.Name+x.ID, x.Description, floor)
				}
			}
		}
	}
}

// splitNames splits a names line: by ", " between names shown with their
// locations, else by spaces, a quoted name (one with a space in it) whole.
func splitNames(s string) []string {
	if strings.Contains(s, " (") {
		return strings.Split(s, ", ")
	}
	var out []string
	for s != "" {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				panic("names line: " + s)
			}
			n, _ := strconv.Unquote(q)
			out = append(out, n)
			s = strings.TrimPrefix(s[len(q):], " ")
			continue
		}
		n, rest, _ := strings.Cut(s, " ")
		out = append(out, n)
		s = rest
	}
	return out
}

var groupItemRe = regexp.MustCompile(` \((\d+)(?::[^)]*)?\)`)

// groupCountRe reads the counts of the groups line: "name (12), …", and
// the skills in the groups not named ("…, and 40 in other groups.").
func groupCountRe(out string) []int {
	var counts []int
	for _, l := range strings.Split(out, "\n") {
		_, items, ok := strings.Cut(l, "By domain, with words the search matches: ")
		if !ok {
			_, items, ok = strings.Cut(l, "By domain: ")
		}
		if !ok || !strings.Contains(l, "not named here") {
			continue
		}
		items = strings.TrimSuffix(items, ".")
		if head, tail, ok := strings.Cut(items, otherGroups); ok {
			c, err := strconv.Atoi(strings.TrimSuffix(tail, otherGroupsEnd))
			if err != nil {
				panic("groups line: " + l)
			}
			counts = append(counts, c)
			items = head
		}
		// Items are "key (12)" or "key (12: word, word)".
		for _, m := range groupItemRe.FindAllStringSubmatch(items, -1) {
			c, _ := strconv.Atoi(m[1])
			counts = append(counts, c)
		}
	}
	return counts
}

// TestNoTwoCharacterDescriptions is the reported case: 500 skills, the
// default budget. Every skill is named in progressive and catalog, and no
// description is cut below the floor in any format.
func TestNoTwoCharacterDescriptions(t *testing.T) {
	es := genCatalog(rand.New(rand.NewPCG(5, 500)), 500)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		got, rep := Prompt(es, nil, Options{Format: f})
		if rep.Chars > DefaultBudget {
			t.Fatalf("%s: %d chars", f, rep.Chars)
		}
		if f != FormatPi && rep.Listed != 500 {
			t.Errorf("%s: %d of 500 named; grouped %d", f, rep.Listed, len(rep.Grouped))
		}
		if f != FormatCatalog {
			for _, x := range parseListing(t, got) {
				if p, ok := strings.CutSuffix(x.Description, Ellipsis); ok && !aboveFloor(p, DefaultDescriptionFloor) {
					t.Errorf("%s: %q below the floor", f, x.Description)
				}
			}
		}
	}
}

// TestPriorityKeepsDescriptions: the preferred skills keep their
// descriptions, the listing order does not change.
func TestPriorityKeepsDescriptions(t *testing.T) {
	es := many(30)
	opt := Options{Budget: namesBudgets[FormatPi], Priority: []string{"tool-z", "tool-q"}}
	got, rep := Prompt(es, nil, opt)
	described := func(t Tier) bool { return t == TierFull || t == TierShortened }
	if !described(rep.Tier("tool-z")) || !described(rep.Tier("tool-q")) {
		t.Errorf("Tiers: tool-z %s, tool-q %s", rep.Tier("tool-z"), rep.Tier("tool-q"))
	}
	ls := parseListing(t, got)
	var order []string
	for _, x := range ls {
		order = append(order, x.Name)
	}
	if !slices.IsSortedFunc(order, func(a, b string) int {
		return slices.Index(names(es), a) - slices.Index(names(es), b)
	}) {
		t.Errorf("listing order changed: %v", order)
	}
	// Without the priority, those two are not described.
	_, plain := Prompt(es, nil, Options{Budget: opt.Budget})
	if described(plain.Tier("tool-z")) || described(plain.Tier("tool-q")) {
		t.Errorf("tool-z full without priority; the test proves nothing")
	}
}

// TestBudgetTokens: a token budget is a character budget of four times as
// much; the smaller of the two wins, and the report gives both.
func TestBudgetTokens(t *testing.T) {
	es := many(30)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		a, ra := Prompt(es, nil, Options{Format: f, Budget: 100000, BudgetTokens: 300})
		b, rb := Prompt(es, nil, Options{Format: f, Budget: 1200})
		if a != b || ra.Budget != 1200 || ra.BudgetTokens != 300 || ra.Tokens > 300 || ra.Tokens != ApproxTokens(a) {
			t.Errorf("%s: tokens %+v vs chars %+v", f, ra, rb)
		}
		c, rc := Prompt(es, nil, Options{Format: f, Budget: 1000, BudgetTokens: 300})
		if d, _ := Prompt(es, nil, Options{Format: f, Budget: 1000}); c != d || rc.Budget != 1000 {
			t.Errorf("%s: the smaller (character) budget did not win: %+v", f, rc)
		}
		if _, ru := Prompt(es, nil, Options{Format: f, Budget: -1, BudgetTokens: 300}); ru.Budget != 1200 {
			t.Errorf("%s: unlimited characters, 300 tokens: Budget %d", f, ru.Budget)
		}
	}
	if ApproxTokens("") != 0 || ApproxTokens("abcd") != 1 || ApproxTokens("abcde") != 2 || ApproxTokens("日本語") != 1 {
		t.Error("ApproxTokens")
	}
}

// TestFloorCap pins the floor rule.
func TestFloorCap(t *testing.T) {
	long := "Extract text and tables from PDF files and fill PDF forms with data. Use when asked."
	cases := []struct {
		d     string
		floor int
		want  int
	}{
		{"Fills forms. Then more words here, past the floor of sixty characters and more.", 60, 69}, // a first sentence under the floor is no cut
		{"Skill number 1. More words.", 60, 27},                                                     // no boundary past the floor: whole
		{long, 60, 62},                                                                              // the word boundary at or after 60: "… forms with"
		{long, 20, 23},                                                                              // "Extract text and tables"
		{strings.Repeat("x", 100), 60, 100},                                                         // no boundary: whole
		{"A short description.", 60, 20},                                                            // all of it
		{"v1.2 is not a sentence end and this runs past the floor", 10, 11},                         // "v1.2 is not"
	}
	for _, c := range cases {
		if got := floorCap(c.d, c.floor); got != c.want {
			t.Errorf("floorCap(%q, %d) = %d, want %d", c.d, c.floor, got, c.want)
		}
	}
}

// TestEntryCost: the computed cost of an entry with no description is what
// entry writes, for awkward names and locations.
func TestEntryCost(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		for _, e := range randomEntries(r) {
			for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
				lay := layoutFor(f)
				var b strings.Builder
				lay.entry(&b, e, "", false)
				if got, want := lay.entryCost(e), utf8.RuneCountInString(b.String()); got != want {
					t.Fatalf("%s: entryCost(%+v) = %d, want %d", f, e, got, want)
				}
			}
		}
	}
}

// TestPriorityRankSortedShortcut: the shortcut for listings sorted by name
// ranks as the general sort does.
func TestPriorityRankSortedShortcut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for range 50 {
		es := sortedByName(genCatalog(r, r.IntN(200)))
		if len(es) > 3 {
			es[1].Name = es[2].Name // duplicate names keep their order too
		}
		var pr []string
		for range r.IntN(20) {
			if len(es) > 0 {
				pr = append(pr, es[r.IntN(len(es))].Name)
			}
		}
		pr = append(pr, "zz-missing")
		got := priorityRank(es, pr)
		shuffled := slices.Clone(es)
		shuffled = append(shuffled, Entry{Name: "0-unsorted"}) // sorts first, so the listing is not sorted: forces the sort
		want := priorityRank(shuffled, pr)
		want = slices.DeleteFunc(want, func(i int) bool { return i == len(es) })
		if !slices.Equal(got, want) {
			t.Fatalf("shortcut %v, sort %v", got, want)
		}
	}
}

// TestNameCosts: the computed length of a names-and-groups listing is what
// the full computation gives, for every k.
func TestNameCosts(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for iter := range 60 {
		es := genCatalog(r, 1+r.IntN(120))
		if iter%2 == 0 {
			es = slices.Concat(es, randomEntries(r))
		}
		f := []string{FormatPi, FormatCatalog, FormatProgressive}[iter%3]
		s := Options{Format: f, Budget: 300 + r.IntN(9000)}.settings()
		lay := layoutFor(f)
		if lay.sorted() {
			es = sortedByName(es)
		}
		m := newModel(lay, es, frameCtx{s: s})
		rank := priorityRank(es, nil)
		nc := m.nameCosts(rank)
		for k := 0; k <= len(es); k++ {
			for _, rest := range []Tier{TierGrouped, TierOmitted} {
				st := m.named(rank, k, rest)
				// Past the budget, cost only has to say so.
				if got, want := nc.cost(k, rest), m.total(st); got != want && (want <= s.budget || got <= s.budget) {
					t.Fatalf("%s, %d skills, k %d, %s: cost %d, want %d", f, len(es), k, rest, got, want)
				}
				// and the model's length is the rendered one
				var b strings.Builder
				writeListing(&b, lay, es, frameCtx{s: s}, plan{tiers: st.tiers, caps: st.caps, virt: st.virt, groups: m.groups})
				if got := utf8.RuneCountInString(b.String()); got != m.total(st) {
					t.Fatalf("%s, %d skills, k %d, %s: rendered %d, model %d\n%s", f, len(es), k, rest, got, m.total(st), b.String())
				}
			}
		}
	}
}
