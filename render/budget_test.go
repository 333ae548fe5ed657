package render

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func names(es []Entry) []string {
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name)
	}
	return ns
}

// minimalOf is the listing with every description cut to the ellipsis: the
// smallest listing that still names every skill.
func minimalOf(es []Entry) []Entry {
	out := slices.Clone(es)
	for i := range out {
		if out[i].Description != "" {
			out[i].Description = Ellipsis
		}
	}
	return out
}

func chars(es []Entry, format string) int {
	_, rep := Prompt(es, nil, Options{Format: format, Budget: -1})
	return rep.Chars
}

func TestPiMatchesPiBytes(t *testing.T) {
	// The listing as Pi's formatSkillsForPrompt writes it (reference/loaders.md).
	want := "\n\nThe following skills provide specialized instructions for specific tasks.\n" +
		"Use the read tool to load a skill's file when the task matches its description.\n" +
		"When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n" +
		"\n" +
		"<available_skills>\n" +
		"  <skill>\n" +
		"    <name>lists</name>\n" +
		"    <description>Lists &amp; &lt;items&gt; with &quot;tags&quot; &apos;n&apos; fields.</description>\n" +
		"    <location>/abs/path/to/lists/SKILL.md</location>\n" +
		"  </skill>\n" +
		"</available_skills>"
	got, rep := Prompt([]Entry{{
		Name:        "lists",
		Description: `Lists & <items> with "tags" 'n' fields.`,
		Location:    "/abs/path/to/lists/SKILL.md",
		Dir:         "/abs/path/to/lists",
	}}, nil, Options{})
	if got != want {
		t.Errorf("pi listing:\n%q\nwant\n%q", got, want)
	}
	if rep.Chars != utf8.RuneCountInString(want) || rep.Total != rep.Chars || rep.Listed != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestEmpty(t *testing.T) {
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		got, rep := Prompt(nil, []Entry{}, Options{Format: f})
		if got != "" || rep.Chars != 0 || rep.Total != 0 || rep.Format != f {
			t.Errorf("%s: %q %+v", f, got, rep)
		}
	}
}

func TestOptionDefaults(t *testing.T) {
	_, rep := Prompt([]Entry{pdf}, nil, Options{Format: "nonsense"})
	if rep.Format != FormatPi || rep.Budget != DefaultBudget {
		t.Errorf("defaults: %+v", rep)
	}
	_, rep = Prompt([]Entry{pdf}, nil, Options{Budget: -5})
	if rep.Budget != -1 {
		t.Errorf("unlimited budget reported as %d", rep.Budget)
	}
	if !ValidFormat("") || !ValidFormat("catalog") || ValidFormat("xml") {
		t.Error("ValidFormat")
	}
	got, _ := Prompt(many(3), []Entry{stored}, Options{Format: FormatCatalog, LoadTool: "fetch_skill", ReadTool: "cat_skill"})
	if !strings.Contains(got, "`fetch_skill`") || !strings.Contains(got, "`cat_skill`") || strings.Contains(got, DefaultLoadTool) {
		t.Errorf("tool names not used:\n%s", got)
	}
}

func TestProgressiveSorts(t *testing.T) {
	in := []Entry{pdf, gitReview, stored}
	got, rep := Prompt(in, nil, Options{Format: FormatProgressive})
	if strings.Index(got, "<id>git-review") > strings.Index(got, "<id>pdf") ||
		strings.Index(got, "<id>pdf") > strings.Index(got, "<id>release-notes") {
		t.Errorf("not sorted:\n%s", got)
	}
	if rep.Listed != 3 {
		t.Errorf("Listed %d", rep.Listed)
	}
	if !slices.Equal([]string{"pdf", "git-review", "release-notes"}, names(in)) {
		t.Errorf("input was reordered: %v", names(in))
	}
}

func TestBudgetRules(t *testing.T) {
	// Enough skills that dropping a few pays for the omission note.
	es := many(30)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		full := chars(es, f)
		minimal := chars(minimalOf(es), f)
		order := names(es)
		if f == FormatProgressive {
			order = slices.Sorted(slices.Values(order))
		}
		cases := []struct {
			name        string
			budget      int
			shortened   bool
			omitted     int // -1: all
			listingGone bool
		}{
			{"exact fit", full, false, 0, false},
			{"one short", full - 1, true, 0, false},
			{"unlimited", -1, false, 0, false},
			// Descriptions cut to "…" used to be the last step before
			// leaving skills out; now names alone take less than that.
			{"old minimal fits", minimal, true, 0, false},
			{"old below minimal", minimal - 1, true, 0, false},
			{"names do not fit", MinBudget(len(es), Options{Format: f}) + 40, false, 1, false},
			{"nothing fits", 10, false, -1, false},
		}
		for _, tc := range cases {
			t.Run(f+"/"+tc.name, func(t *testing.T) {
				got, rep := Prompt(es, nil, Options{Format: f, Budget: tc.budget})
				if tc.budget >= 0 && rep.Chars > tc.budget && !rep.TooSmall {
					t.Fatalf("Chars %d > budget %d", rep.Chars, tc.budget)
				}
				if tc.budget >= 0 && rep.TooSmall != (tc.budget < rep.MinBudget) {
					t.Errorf("TooSmall %v with budget %d, MinBudget %d", rep.TooSmall, tc.budget, rep.MinBudget)
				}
				if rep.TooSmall && rep.Chars != rep.MinBudget {
					t.Errorf("too small: Chars %d, want MinBudget %d", rep.Chars, rep.MinBudget)
				}
				if rep.Chars != utf8.RuneCountInString(got) {
					t.Errorf("Chars %d, output has %d", rep.Chars, utf8.RuneCountInString(got))
				}
				if tc.omitted == 0 && (len(rep.Shortened)+len(rep.NameOnly) > 0) != tc.shortened {
					t.Errorf("Shortened = %v, NameOnly = %v", rep.Shortened, rep.NameOnly)
				}
				switch {
				case tc.omitted < 0:
					if !slices.Equal(order, rep.Omitted) {
						t.Errorf("Omitted = %v, want %v", rep.Omitted, order)
					}
				case tc.omitted == 0:
					if len(rep.Omitted) != 0 {
						t.Errorf("Omitted = %v", rep.Omitted)
					}
				default:
					if len(rep.Omitted) < tc.omitted {
						t.Errorf("Omitted = %v", rep.Omitted)
					}
				}
				if tc.listingGone != (got == "") {
					t.Errorf("output %q", got)
				}
				if len(rep.Omitted) > 0 && !tc.listingGone &&
					!strings.Contains(got, fmt.Sprintf("%d more skill", len(rep.Omitted))) {
					t.Errorf("no omission note:\n%s", got)
				}
				if len(rep.Omitted) > 0 && !tc.listingGone && !strings.Contains(got, "`search_skills`") {
					t.Errorf("omission note does not name the search tool:\n%s", got)
				}
			})
		}
	}
}

// TestTiersReplaceWaterFilling: the old water-filling cut every description
// to the same length, down to "U…"; a description with no word boundary
// after the floor now stays whole or goes (the skill keeps its name), and
// the short one is never touched.
func TestTiersReplaceWaterFilling(t *testing.T) {
	short := Entry{Name: "short", Description: "Tiny.", Location: "/s/short/SKILL.md"}
	long1 := Entry{Name: "long-a", Description: strings.Repeat("a", 400), Location: "/s/long-a/SKILL.md"}
	long2 := Entry{Name: "long-b", Description: strings.Repeat("é", 300), Location: "/s/b/SKILL.md"}
	es := []Entry{long1, short, long2}
	budget := chars(es, FormatPi) - 150
	got, rep := Prompt(es, nil, Options{Budget: budget})
	if rep.Chars > budget {
		t.Fatalf("Chars %d > %d", rep.Chars, budget)
	}
	if len(rep.Shortened) != 0 || !slices.Equal([]string{"long-b"}, rep.NameOnly) {
		t.Errorf("Shortened = %v, NameOnly = %v", rep.Shortened, rep.NameOnly)
	}
	if !strings.Contains(got, "<description>Tiny.</description>") || !strings.Contains(got, "\n- at the location given: long-b (/s/b/SKILL.md)") {
		t.Errorf("output:\n%s", got)
	}
	if rep.Tier("long-a") != TierFull || rep.Tier("short") != TierFull || rep.Tier("long-b") != TierName {
		t.Errorf("Tiers = %v", rep.Tiers)
	}
}

// descOf decodes the i-th description of a pi or progressive listing.
func descOf(t *testing.T, out string, i int) string {
	t.Helper()
	ls := parseListing(t, out)
	return ls[i].Description
}

type xmlSkill struct {
	Name        string `xml:"name"`
	ID          string `xml:"id"`
	Description string `xml:"description"`
	Location    string `xml:"location"`
}

// parseListing decodes the <available_skills> block, which must be
// well-formed XML however the descriptions were cut.
func parseListing(t *testing.T, out string) []xmlSkill {
	t.Helper()
	start := strings.Index(out, "<available_skills>")
	end := strings.Index(out, "</available_skills>")
	if start < 0 || end < 0 {
		t.Fatalf("no block in:\n%s", out)
	}
	var v struct {
		Skills []xmlSkill `xml:"skill"`
	}
	if err := xml.Unmarshal([]byte(out[start:end+len("</available_skills>")]), &v); err != nil {
		t.Fatalf("listing is not well-formed: %v\n%s", err, out)
	}
	return v.Skills
}

func TestTinyBudgetKeepsInline(t *testing.T) {
	got, rep := Prompt(many(5), []Entry{pdf}, Options{Format: FormatCatalog, Budget: 5})
	if rep.Listed != 0 || len(rep.Omitted) != 5 || rep.Inlined != 1 || !rep.TooSmall || rep.Chars != rep.MinBudget {
		t.Errorf("report %+v", rep)
	}
	if !strings.HasPrefix(got, "## Agent Skills\n") || !strings.Contains(got, "#### pdf") {
		t.Errorf("output:\n%s", got)
	}
}

// TestTooSmallBudgetKeepsTheNote: a budget below the frame text used to
// drop the whole listing, the line that says how to find the skills with
// it. The line always survives; Report says the budget is too small and
// what the least budget is, and MinBudget agrees with it.
func TestTooSmallBudgetKeepsTheNote(t *testing.T) {
	es := many(30)
	for _, f := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		for _, opt := range []Options{{Format: f}, {Format: f, SearchTool: NoSearchTool}, {Format: f, SearchTool: "find"}} {
			min := MinBudget(len(es), opt)
			for _, budget := range []int{1, 10, min - 1} {
				opt.Budget = budget
				got, rep := Prompt(es, nil, opt)
				if !strings.Contains(got, "30 more skills are not listed here.") || !strings.Contains(got, "`loadout list`") {
					t.Errorf("%s budget %d: the note is gone:\n%s", f, budget, got)
				}
				if !rep.TooSmall || rep.MinBudget != min || rep.Chars != min || utf8.RuneCountInString(got) != min {
					t.Errorf("%s budget %d: report %+v, MinBudget %d", f, budget, rep, min)
				}
			}
			opt.Budget = min
			got, rep := Prompt(es, nil, opt)
			if rep.TooSmall || rep.Chars > min || !strings.Contains(got, "30 more skills") {
				t.Errorf("%s budget %d (the minimum): report %+v\n%s", f, min, rep, got)
			}
		}
	}
	if MinBudget(0, Options{}) != 0 {
		t.Error("MinBudget of no entries")
	}
}

// randomEntries makes listings with awkward text: escapes, new lines,
// multi-byte runes, virtual skills, empty and very long descriptions.
func randomEntries(r *rand.Rand) []Entry {
	alphabet := []rune("abcdefgh xyz  &<>\"'\nééé日本語🙂-_.,:")
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	n := r.IntN(40)
	es := make([]Entry, n)
	for i := range es {
		name := fmt.Sprintf("s%d-%s", i, text(r.IntN(6)))
		var dl int
		switch r.IntN(4) {
		case 0:
			dl = 0
		case 1:
			dl = r.IntN(10)
		case 2:
			dl = r.IntN(200)
		default:
			dl = r.IntN(1100)
		}
		es[i] = Entry{
			Name:        name,
			Description: text(dl),
			Location:    "/skills/" + text(r.IntN(12)) + "/SKILL.md",
			Virtual:     r.IntN(5) == 0,
		}
	}
	return es
}

func TestBudgetNeverExceeded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 1500 {
		es := randomEntries(r)
		f := []string{FormatPi, FormatCatalog, FormatProgressive}[iter%3]
		full := chars(es, f)
		var budget int
		switch r.IntN(4) {
		case 0:
			budget = 1 + r.IntN(600)
		case 1:
			budget = 1 + r.IntN(full+50)
		case 2:
			budget = max(1, full-r.IntN(40))
		default:
			budget = max(1, chars(minimalOf(es), f)-r.IntN(40))
		}
		opt := Options{Format: f, Budget: budget}
		got, rep := Prompt(es, nil, opt)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("iter %d, %s, budget %d: %s\n%s", iter, f, budget, fmt.Sprintf(format, args...), got)
		}
		n := utf8.RuneCountInString(got)
		if n > budget && !(rep.TooSmall && n == rep.MinBudget && budget < rep.MinBudget) {
			fail("%d chars", n)
		}
		if n != rep.Chars {
			fail("Report.Chars %d, output %d", rep.Chars, n)
		}
		if !utf8.ValidString(got) {
			fail("invalid UTF-8")
		}
		order := names(es)
		if f == FormatProgressive {
			order = names(sortedByName(es))
		}
		if rep.Listed+len(rep.Omitted) != len(es) {
			fail("Listed %d + Omitted %d != %d", rep.Listed, len(rep.Omitted), len(es))
		}
		if len(rep.Omitted) == 0 && len(rep.Shortened) == 0 && len(rep.NameOnly) == 0 {
			if want, _ := Prompt(es, nil, Options{Format: f, Budget: -1}); got != want {
				fail("nothing cut, yet output differs from the unlimited one")
			}
		}
		// Inline skills are not budgeted (they may change the listing's
		// frame text, so not necessarily its plan).
		withInline, repIn := Prompt(es, []Entry{pdf, stored}, opt)
		if (repIn.Chars > budget && !repIn.TooSmall) || repIn.Listed+len(repIn.Omitted) != len(es) ||
			repIn.Total != utf8.RuneCountInString(withInline) || repIn.Total <= repIn.Chars {
			fail("with inline: %+v vs %+v", repIn, rep)
		}
		if f == FormatCatalog || got == "" || len(es) == 0 {
			continue
		}
		// The block stays well-formed and shows, in listing order, the
		// described skills, each description whole or as a prefix of at
		// least the floor plus the ellipsis.
		var described []string
		for _, name := range order {
			if t := rep.Tier(name); t == TierFull || t == TierShortened {
				described = append(described, name)
			}
		}
		ls := parseListing(t, got)
		if len(ls) != len(described) {
			fail("%d skills in block, %d described", len(ls), len(described))
		}
		byName := map[string]Entry{}
		for _, e := range es {
			byName[e.Name] = e
		}
		for i, x := range ls {
			name := x.Name + x.ID
			if name != described[i] {
				fail("entry %d is %q, want %q", i, name, described[i])
			}
			orig := byName[name].Description
			if x.Description == orig {
				if rep.Tier(name) != TierFull {
					fail("%q reported %s but whole", name, rep.Tier(name))
				}
				continue
			}
			prefix, ok := strings.CutSuffix(x.Description, Ellipsis)
			if !ok || !strings.HasPrefix(orig, prefix) || rep.Tier(name) != TierShortened {
				fail("%q: description %q is not a reported cut of %q", name, x.Description, orig)
			}
			if !aboveFloor(prefix, DefaultDescriptionFloor) {
				fail("%q: description %q is below the floor", name, x.Description)
			}
		}
	}
}

// aboveFloor: a shortened description keeps at least floor code points.
func aboveFloor(prefix string, floor int) bool {
	return utf8.RuneCountInString(prefix) >= floor
}

func TestPromptIsPure(t *testing.T) {
	es := many(20)
	before := slices.Clone(es)
	a, ra := Prompt(es, []Entry{pdf}, Options{Format: FormatProgressive, Budget: 900})
	b, rb := Prompt(es, []Entry{pdf}, Options{Format: FormatProgressive, Budget: 900})
	if a != b || !reflect.DeepEqual(ra, rb) {
		t.Error("same input, different output")
	}
	if !reflect.DeepEqual(before, es) {
		t.Error("input modified")
	}
}
