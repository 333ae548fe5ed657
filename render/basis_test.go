package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// basisCatalog is n skills with descriptions of 60 to 300 characters.
func basisCatalog(n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		name := fmt.Sprintf("skill-%04d", i)
		d := strings.Repeat(fmt.Sprintf("Handles part %d of the work. ", i), 2+i%10)
		es[i] = Entry{Name: name, Description: strings.TrimSpace(d), Location: "/s/" + name + "/SKILL.md", Dir: "/s/" + name}
	}
	return es
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

var formats = []string{FormatPi, FormatCatalog, FormatProgressive}

// TestBasisKeepsText: on its Basis an unchanged listing is the same bytes,
// whatever the usage counts say; a stable plan leaves the reserve unused.
func TestBasisKeepsText(t *testing.T) {
	es := basisCatalog(300)
	for _, f := range formats {
		opt := Options{Format: f, Budget: 8000, Stable: true, Priority: []string{"skill-0001"}}
		first, r1 := Prompt(es, nil, opt)
		if r1.Replan != "no basis" || r1.Basis == nil {
			t.Fatalf("%s: first render: replan %q, basis %v", f, r1.Replan, r1.Basis)
		}
		if max := 8000 - 8000/ReserveShare; r1.Chars > max {
			t.Errorf("%s: a stable plan of %d characters, over %d", f, r1.Chars, max)
		}
		unstable, ru := Prompt(es, nil, Options{Format: f, Budget: 8000})
		if ru.Basis != nil {
			t.Errorf("%s: a plan made for a caller that keeps none", f)
		}
		if first == unstable {
			t.Errorf("%s: the stable plan is the same as the unstable one", f)
		}
		opt.Basis = r1.Basis
		opt.Priority = []string{"skill-0299", "skill-0150"} // a usage refresh
		again, r2 := Prompt(es, nil, opt)
		if again != first || r2.Replan != "" || r2.Basis != r1.Basis || len(r2.Changed)+len(r2.Removed) != 0 {
			t.Errorf("%s: unchanged catalog on its basis: same %v, replan %q", f, again == first, r2.Replan)
		}
		if !slices.Equal(r1.Tiers, r2.Tiers) || r1.Listed != r2.Listed {
			t.Errorf("%s: tiers differ on the basis", f)
		}
		fresh, _ := Prompt(es, nil, Options{Format: f, Budget: 8000, Stable: true, Priority: opt.Priority})
		if fresh == first {
			t.Errorf("%s: the new priority changes nothing on a fresh plan: the test shows nothing", f)
		}
	}
}

// TestBasisChanges: an added, an edited and a removed skill are written
// after the basis's text, which stays the prefix; the report names them.
func TestBasisChanges(t *testing.T) {
	es := basisCatalog(300)
	for _, f := range formats {
		opt := Options{Format: f, Budget: 8000, Stable: true}
		first, r1 := Prompt(es, nil, opt)
		opt.Basis = r1.Basis
		described := ""
		for i, tier := range r1.Tiers {
			if tier == TierFull {
				described = r1.Names[i]
				break
			}
		}
		var named string
		for i, tier := range r1.Tiers {
			if tier == TierName {
				named = r1.Names[i]
				break
			}
		}
		if described == "" || named == "" {
			t.Fatalf("%s: no full or name-only skill in %v", f, r1.Tiers)
		}
		next := slices.Clone(es)
		next = append(next, Entry{Name: "zz-new", Description: "Brand new skill that converts invoices.", Location: "/s/zz-new/SKILL.md"})
		for i := range next {
			if next[i].Name == described {
				next[i].Description = "Edited: now it reviews pull requests."
			}
		}
		next = slices.DeleteFunc(next, func(e Entry) bool { return e.Name == named })
		text, r := Prompt(next, nil, opt)
		if r.Replan != "" {
			t.Fatalf("%s: replanned: %s", f, r.Replan)
		}
		if !strings.HasPrefix(text, first) {
			t.Errorf("%s: the basis's text is not the prefix", f)
		}
		tail := text[len(first):]
		for _, want := range []string{"zz-new", "converts invoices", described, "now it reviews pull requests", "No longer available, do not load: " + named + "."} {
			if !strings.Contains(tail, want) {
				t.Errorf("%s: the changes lack %q:\n%s", f, want, tail)
			}
		}
		if got := fmt.Sprint(r.Changed, r.Removed); got != fmt.Sprintf("[%s zz-new] [%s]", described, named) {
			t.Errorf("%s: changed, removed = %s", f, got)
		}
		if r.Tier("zz-new") != TierFull || r.Tier(described) != TierFull || r.Chars > 8000 {
			t.Errorf("%s: zz-new %s, %s %s, %d characters", f, r.Tier("zz-new"), described, r.Tier(described), r.Chars)
		}
		if r.Chars != utf8.RuneCountInString(text) {
			t.Errorf("%s: Chars %d of %d", f, r.Chars, utf8.RuneCountInString(text))
		}
	}
}

// TestBasisReplans: the options it was planned for, a stored skill in a
// listing of files only, a changed pin that cannot be whole, and more than
// MaxChanges skills each plan afresh, saying why.
func TestBasisReplans(t *testing.T) {
	es := basisCatalog(300)
	opt := Options{Format: FormatCatalog, Budget: 16000, Stable: true, Pinned: []string{"skill-0003"}}
	_, r1 := Prompt(es, nil, opt)
	opt.Basis = r1.Basis
	for _, c := range []struct {
		name string
		edit func(o *Options, es []Entry) []Entry
		why  string
	}{
		{"budget", func(o *Options, es []Entry) []Entry { o.Budget = 15999; return es }, "the options changed"},
		{"format", func(o *Options, es []Entry) []Entry { o.Format = FormatProgressive; return es }, "the options changed"},
		{"pins", func(o *Options, es []Entry) []Entry { o.Pinned = nil; return es }, "the options changed"},
		{"preface", func(o *Options, es []Entry) []Entry { o.Preface = "x"; return es }, "the options changed"},
		{"stored", func(o *Options, es []Entry) []Entry {
			return append(es, Entry{Name: "zz", Description: "Stored.", Location: "skill://zz", Virtual: true})
		}, "a stored skill joined a listing that does not say how to read stored skills"},
		{"pin too long", func(o *Options, es []Entry) []Entry {
			es[3].Description = strings.Repeat("Long pinned words. ", 120)
			return es
		}, "a changed pinned skill cannot be described whole in the reserve"},
		{"65 changes", func(o *Options, es []Entry) []Entry {
			for i := range MaxChanges + 1 {
				es = append(es, Entry{Name: fmt.Sprintf("n%02d", i)})
			}
			return es
		}, "more than 64 skills were added, changed or removed"},
		{"64 removed, 1 added", func(o *Options, es []Entry) []Entry {
			return append(es[MaxChanges:], Entry{Name: "zz"})
		}, "more than 64 skills were added, changed or removed"},
		{"63 removed, 1 added", func(o *Options, es []Entry) []Entry {
			return append(es[MaxChanges-1:], Entry{Name: "zz"})
		}, ""},
		{"64 changes", func(o *Options, es []Entry) []Entry {
			for i := range MaxChanges {
				es = append(es, Entry{Name: fmt.Sprintf("n%02d", i)})
			}
			return es
		}, ""},
	} {
		o := opt
		_, r := Prompt(c.edit(&o, slices.Clone(es)), nil, o)
		if r.Replan != c.why {
			t.Errorf("%s: replan %q, want %q", c.name, r.Replan, c.why)
		}
		if c.why != "" && (r.Basis == nil || r.Basis == opt.Basis || len(r.Changed) != 0) {
			t.Errorf("%s: a replan kept the old basis or reported changes", c.name)
		}
	}
}

// TestBasisRoom: the changes may take up to the room left (the least of
// the budget's rest and a ninth of the planned text): a change of exactly
// that length is kept, one character more re-plans.
func TestBasisRoom(t *testing.T) {
	es := basisCatalog(300)
	opt := Options{Format: FormatCatalog, Budget: 8000, Stable: true}
	_, r1 := Prompt(es, nil, opt)
	opt.Basis = r1.Basis
	room := min(8000-r1.Basis.Chars(), r1.Basis.Chars()/9)
	frame := utf8.RuneCountInString("\n\n" + catalogLayout{}.tailIntro() + "\n\n" + namesLine)
	for _, extra := range []int{0, 1} {
		name := strings.Repeat("n", room-frame+extra) // no description: named only
		text, r := Prompt(append(slices.Clone(es), Entry{Name: name}), nil, opt)
		if kept := r.Replan == ""; kept != (extra == 0) {
			t.Errorf("room %d, change of %d: replan %q", room, room+extra, r.Replan)
		}
		if r.Chars > 8000 || r.Chars != utf8.RuneCountInString(text) {
			t.Errorf("%d characters", r.Chars)
		}
	}
}

// TestBasisPrefixRatio: along random additions and removals, each
// listing keeps at least 90% of the one before as its byte prefix unless
// it re-planned, and stays within the budget, in every format and budget.
func TestBasisPrefixRatio(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range formats {
		for _, budget := range []int{4000, 8000, 16000} {
			es := basisCatalog(400)
			opt := Options{Format: f, Budget: budget, Stable: true}
			prev, rep := Prompt(es, nil, opt)
			replans := 0
			for step := range 40 {
				if r.IntN(2) == 0 {
					i := r.IntN(len(es))
					es = slices.Delete(es, i, i+1)
				} else {
					name := fmt.Sprintf("added-%02d", step)
					es = append(es, Entry{Name: name, Description: "Added to " + strings.Repeat("do more work ", r.IntN(20)), Location: "/s/" + name + "/SKILL.md"})
				}
				opt.Basis = rep.Basis
				text, next := Prompt(es, nil, opt)
				if next.Chars > budget {
					t.Fatalf("%s %d step %d: %d characters", f, budget, step, next.Chars)
				}
				if next.Replan != "" {
					replans++
				} else if p := commonPrefix(prev, text); p*10 < len(prev)*9 {
					t.Errorf("%s %d step %d: prefix %d of %d bytes", f, budget, step, p, len(prev))
				}
				prev, rep = text, next
			}
			t.Logf("%s %d: %d of 40 changes re-planned", f, budget, replans)
			if replans > 20 {
				t.Errorf("%s %d: %d of 40 changes re-planned", f, budget, replans)
			}
		}
	}
}

// TestReserve: a stable plan leaves 1/ReserveShare of the budget, never
// so much that the fixed text and the note no longer fit, and nothing
// with no budget.
func TestReserve(t *testing.T) {
	for _, c := range []struct{ budget, least, want int }{
		{1200, 100, 100},  // a twelfth
		{1200, 1100, 100}, // a twelfth exactly leaves the least
		{1200, 1101, 99},  // one more: what is left over the least
		{1200, 1200, 0},
		{1200, 1300, 0}, // too small: no reserve
		{0, 0, 0},
		{-1, 0, 0}, // no budget
		{11, 0, 0}, // a twelfth rounds down
		{12, 0, 1},
	} {
		if got := reserve(c.budget, c.least); got != c.want {
			t.Errorf("reserve(%d, %d) = %d, want %d", c.budget, c.least, got, c.want)
		}
	}
}

// TestBasisChangedTiers: an edit to a skill the plan named (described or
// by name) is written after the text; an edit to one it only counted
// changes nothing; a removed skill is named as gone only if it was
// named; Removed lists them all.
func TestBasisChangedTiers(t *testing.T) {
	es := basisCatalog(2000)
	opt := Options{Format: FormatCatalog, Budget: 8000, Stable: true, Priority: []string{"skill-0500"}}
	first, r1 := Prompt(es, nil, opt)
	opt.Basis = r1.Basis
	var full, name, grouped string
	for i, tier := range r1.Tiers {
		switch {
		case (tier == TierFull || tier == TierShortened) && full == "":
			full = r1.Names[i]
		case tier == TierName && name == "":
			name = r1.Names[i]
		case tier == TierGrouped && grouped == "":
			grouped = r1.Names[i]
		}
	}
	if full == "" || name == "" || grouped == "" {
		t.Fatalf("tiers: full %q, name %q, grouped %q", full, name, grouped)
	}
	edit := func(target string) []Entry {
		next := slices.Clone(es)
		for i := range next {
			if next[i].Name == target {
				next[i].Description = "Edited description of " + target + "."
			}
		}
		return next
	}
	for _, target := range []string{full, name} {
		text, r := Prompt(edit(target), nil, opt)
		if r.Replan != "" || fmt.Sprint(r.Changed) != "["+target+"]" || !strings.Contains(text[len(first):], "Edited description of "+target) {
			t.Errorf("edit of %s (named): replan %q, changed %v", target, r.Replan, r.Changed)
		}
	}
	text, r := Prompt(edit(grouped), nil, opt)
	if r.Replan != "" || len(r.Changed) != 0 || text != first || r.Tier(grouped) != TierGrouped {
		t.Errorf("edit of %s (grouped): replan %q, changed %v, same text %v", grouped, r.Replan, r.Changed, text == first)
	}
	drop := func(names ...string) []Entry {
		return slices.DeleteFunc(slices.Clone(es), func(e Entry) bool { return slices.Contains(names, e.Name) })
	}
	text, r = Prompt(drop(grouped), nil, opt)
	if r.Replan != "" || text != first || fmt.Sprint(r.Removed) != "["+grouped+"]" {
		t.Errorf("removal of %s (grouped): replan %q, removed %v, same text %v", grouped, r.Replan, r.Removed, text == first)
	}
	text, r = Prompt(drop(grouped, name), nil, opt)
	if r.Replan != "" || !strings.HasSuffix(text, "No longer available, do not load: "+name+".") || len(r.Removed) != 2 {
		t.Errorf("removal of %s (named): replan %q, removed %v:\n%s", name, r.Replan, r.Removed, text[len(first):])
	}
	// The same name twice: the second is a change of its own.
	dup := append(slices.Clone(es), Entry{Name: full, Description: "A second skill of that name."})
	if _, r := Prompt(dup, nil, opt); r.Replan != "" || fmt.Sprint(r.Changed) != "["+full+"]" {
		t.Errorf("a name twice: replan %q, changed %v", r.Replan, r.Changed)
	}
}

// TestBasisTailTiers: the reserve goes to the added skills in priority
// order; a skill whose whole description fits exactly is whole, one
// character more and it is cut at the floor; no names section when every
// change is described; with no budget the room is a ninth of the text.
func TestBasisTailTiers(t *testing.T) {
	es := basisCatalog(300)
	opt := Options{Format: FormatCatalog, Budget: 8000, Stable: true}
	_, r1 := Prompt(es, nil, opt)
	opt.Basis = r1.Basis
	room := min(8000-r1.Basis.Chars(), r1.Basis.Chars()/9)
	frame := utf8.RuneCountInString("\n\n" + catalogLayout{}.tailIntro() + "\n\n" + "- **zz**: \n")
	long := func(n int) string { // n characters of words, a boundary every 5
		return strings.TrimSpace(strings.Repeat("word ", n/5+1))[:n]
	}
	for _, extra := range []int{0, 1} {
		d := long(room - frame + 1 + extra) // +1: the entry's newline is trimmed at the end
		text, r := Prompt(append(slices.Clone(es), Entry{Name: "zz", Description: d}), nil, opt)
		want := TierFull
		if extra > 0 {
			want = TierShortened
		}
		if r.Replan != "" || r.Tier("zz") != want || r.Chars > 8000 {
			t.Errorf("a description %d over the room: replan %q, %s, %d characters", extra, r.Replan, r.Tier("zz"), r.Chars)
		}
		if tail := text[strings.Index(text, catalogLayout{}.tailIntro()):]; strings.Contains(tail, namesLine) || strings.Contains(tail, "No longer available") {
			t.Errorf("a names section or a removals line for a described addition:\n%s", tail)
		}
	}
	// Two added, room for one description: the priority decides.
	big := long(room / 2)
	two := append(slices.Clone(es), Entry{Name: "za", Description: big + " a"}, Entry{Name: "zb", Description: big + " b"})
	for _, first := range []string{"za", "zb"} {
		o := opt
		o.Priority = []string{first}
		_, r := Prompt(two, nil, o)
		other := map[string]string{"za": "zb", "zb": "za"}[first]
		if r.Replan != "" || r.Tier(first) != TierFull || r.Tier(other) == TierFull {
			t.Errorf("priority %s: %s %s, %s %s (%q)", first, first, r.Tier(first), other, r.Tier(other), r.Replan)
		}
	}
	// No budget, or one far above the listing: the room is a ninth of
	// the planned text.
	for _, budget := range []int{-1, 1_000_000} {
		ninthRoom(t, es, budget, frame, long)
	}
}

func ninthRoom(t *testing.T, es []Entry, budget, frame int, long func(int) string) {
	t.Helper()
	un := Options{Format: FormatCatalog, Budget: budget, Stable: true}
	_, ru := Prompt(es, nil, un)
	un.Basis = ru.Basis
	ninth := ru.Basis.Chars() / 9
	for _, extra := range []int{0, 1} {
		d := long(ninth - frame + 1 + extra)
		_, r := Prompt(append(slices.Clone(es), Entry{Name: "zz", Description: d}), nil, un)
		want := map[int]Tier{0: TierFull, 1: TierShortened}[extra]
		if r.Replan != "" || r.Tier("zz") != want {
			t.Errorf("budget %d, a change of %d over a ninth: replan %q, %s, want %s", budget, extra, r.Replan, r.Tier("zz"), want)
		}
	}
}

// TestBasisBytes: what a plan holds, as the service counts it against
// its bound: the text, and each skill's name, description, location and
// a fixed 80 bytes.
func TestBasisBytes(t *testing.T) {
	es := basisCatalog(3)
	text, rep := Prompt(es, nil, Options{Format: FormatCatalog, Budget: -1, Stable: true})
	want := len(text)
	for _, e := range es {
		want += 80 + len(e.Name) + len(e.Description) + len(e.Location)
	}
	if got := rep.Basis.Bytes(); got != want {
		t.Errorf("Bytes() = %d, want %d", got, want)
	}
}

// TestBasisEdges: a stored skill joining a plan that already tells how to
// read stored skills is kept; a skill that only turns stored (or back) is
// a change; a name given twice and a removal are both seen; a pinned
// skill edited to have no description is a change, not a re-plan.
func TestBasisEdges(t *testing.T) {
	es := basisCatalog(300)
	es[5].Virtual, es[5].Location = true, "skill://skill-0005"
	opt := Options{Format: FormatPi, Budget: 8000, Stable: true, Pinned: []string{"skill-0007"}}
	_, r1 := Prompt(es, nil, opt)
	if r1.Tier("skill-0005") == TierGrouped || r1.Tier("skill-0005") == TierOmitted {
		t.Fatalf("the stored skill is not named: %s", r1.Tier("skill-0005"))
	}
	opt.Basis = r1.Basis
	added := append(slices.Clone(es), Entry{Name: "zz-stored", Description: "Stored too.", Location: "skill://zz-stored", Virtual: true})
	if _, r := Prompt(added, nil, opt); r.Replan != "" || fmt.Sprint(r.Changed) != "[zz-stored]" {
		t.Errorf("a stored skill added to a plan that has one: replan %q, changed %v", r.Replan, r.Changed)
	}
	flipped := slices.Clone(es)
	flipped[5].Virtual = false
	if _, r := Prompt(flipped, nil, opt); r.Replan != "" || fmt.Sprint(r.Changed) != "[skill-0005]" {
		t.Errorf("a skill no longer stored: replan %q, changed %v", r.Replan, r.Changed)
	}
	twice := append(slices.Clone(es[:299]), Entry{Name: "skill-0001", Description: "Again."})
	if _, r := Prompt(twice, nil, opt); r.Replan != "" || fmt.Sprint(r.Removed) != "[skill-0299]" || fmt.Sprint(r.Changed) != "[skill-0001]" {
		t.Errorf("a name twice and a removal: replan %q, changed %v, removed %v", r.Replan, r.Changed, r.Removed)
	}
	empty := slices.Clone(es)
	empty[7].Description = ""
	if _, r := Prompt(empty, nil, opt); r.Replan != "" || fmt.Sprint(r.Changed) != "[skill-0007]" || r.Tier("skill-0007") != TierName {
		t.Errorf("a pinned skill with no description: replan %q, changed %v, %s", r.Replan, r.Changed, r.Tier("skill-0007"))
	}
}
