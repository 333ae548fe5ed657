package render

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name.txt, or rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./render -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run go test ./render -update after checking)\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

var (
	pdf = Entry{
		Name:        "pdf",
		Description: "Extract text and tables from PDF files and fill PDF forms. Use when the user works with PDFs.",
		Location:    "/home/ann/skills/pdf/SKILL.md",
		Dir:         "/home/ann/skills/pdf",
		Body:        "\n# PDF\n\nTo extract text, run `scripts/extract.py FILE`.\nFor forms, read `references/forms.md` first.\n\n",
		Origin:      &skill.Origin{Kind: "folder", Root: "/home/ann/skills"},
	}
	gitReview = Entry{
		Name:        "git-review",
		Description: "Review a branch before merging: diff, tests, commit messages.",
		Location:    "/work/repo/.agents/skills/git-review/SKILL.md",
		Dir:         "/work/repo/.agents/skills/git-review",
		Body:        "# Review\n\n1. Read `checklist.md`.\n2. Run the tests.",
		Origin:      &skill.Origin{Kind: "folder", Root: "/work/repo/.agents/skills"},
	}
	stored = Entry{
		Name:        "release-notes",
		Description: "Write release notes from merged pull requests.",
		Location:    "store://release-notes/SKILL.md",
		Dir:         "store://release-notes",
		Body:        "# Release notes\n\nUse the template in `templates/notes.md`.",
		Virtual:     true,
		Origin:      &skill.Origin{Kind: "store", Version: 3},
	}
	escEntry = Entry{
		Name:        "q&a",
		Description: `Answers "why" & "how" questions about <html> tags; it's quick > slow.` + "\nSecond line.",
		Location:    "/srv/skills/Tom & Jerry's/q&a/SKILL.md",
		Dir:         "/srv/skills/Tom & Jerry's/q&a",
		Body:        "Use <b>bold</b> & keep \"quotes\".",
		Origin:      &skill.Origin{Kind: "plugin", Plugin: "acme <tools>", Trust: "untrusted", Provenance: "acme & co 1.0"},
	}
)

// many makes n plain skills with descriptions of different lengths.
func many(n int) []Entry {
	words := strings.Fields("convert resize crop annotate compress merge split sign verify archive index search translate summarise draft")
	es := make([]Entry, n)
	for i := range es {
		name := "tool-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		var d []string
		for j := 0; j <= (i*7)%23+3; j++ {
			d = append(d, words[(i+j)%len(words)])
		}
		es[i] = Entry{
			Name:        name,
			Description: "Use to " + strings.Join(d, ", ") + ".",
			Location:    "/opt/skills/" + name + "/SKILL.md",
			Dir:         "/opt/skills/" + name,
			Body:        "# " + name,
		}
	}
	return es
}

type promptCase struct {
	name            string
	listing, inline []Entry
	opt             Options
	// budgets overrides opt.Budget per format, whose frames differ in size
	budgets map[string]int
	// which tiers the budget must have used, so a golden cannot turn
	// trivial: shortened descriptions, names only, groups, the note only
	shortened, nameOnly, grouped, omitted bool
}

var (
	shortBudgets   = map[string]int{FormatPi: 1540, FormatCatalog: 1450, FormatProgressive: 1100}
	namesBudgets   = map[string]int{FormatPi: 1500, FormatCatalog: 1250, FormatProgressive: 1800}
	groupBudgets   = map[string]int{FormatPi: 845, FormatCatalog: 1145, FormatProgressive: 600}
	groupNSBudgets = map[string]int{FormatPi: 765, FormatCatalog: 1065, FormatProgressive: 520}
)

func promptCases() []promptCase {
	return []promptCase{
		{name: "listing", listing: []Entry{pdf, gitReview}},
		{name: "inline", inline: []Entry{pdf, gitReview}},
		{name: "both", listing: []Entry{pdf, gitReview, stored}, inline: []Entry{pdf}},
		{name: "empty"},
		{name: "virtual", listing: []Entry{stored, pdf}, inline: []Entry{stored}},
		{name: "escape", listing: []Entry{escEntry}, inline: []Entry{escEntry}},
		{name: "shortened", listing: many(6), budgets: shortBudgets, shortened: true},
		// Tier 3: the skills that keep no description are named in the
		// compact form (pi: under their folder).
		{name: "names", listing: many(30), budgets: namesBudgets, shortened: true, nameOnly: true},
		// Tier 4: the skills that cannot be named are counted in groups
		// (category, else name prefix) that the search tool finds.
		{name: "grouped", listing: categorised(60), budgets: groupBudgets, nameOnly: true, grouped: true},
		{name: "grouped_nosearch", listing: categorised(60), opt: Options{SearchTool: NoSearchTool}, budgets: groupNSBudgets, nameOnly: true, grouped: true},
		// Priority decides who keeps a description, not the order.
		{name: "priority", listing: many(30), opt: Options{Priority: []string{"tool-z", "tool-q"}}, budgets: namesBudgets, shortened: true, nameOnly: true},
		// A budget too small for the frame: no entry, but the line that
		// says how to find the skills stays (Report.TooSmall).
		{name: "toosmall", listing: many(3), inline: []Entry{gitReview}, opt: Options{Budget: 10}, omitted: true},
	}
}

func TestGoldenPrompt(t *testing.T) {
	for _, format := range []string{FormatPi, FormatCatalog, FormatProgressive} {
		for _, tc := range promptCases() {
			t.Run(format+"_"+tc.name, func(t *testing.T) {
				opt := tc.opt
				opt.Format = format
				if b, ok := tc.budgets[format]; ok {
					opt.Budget = b
				}
				got, rep := Prompt(tc.listing, tc.inline, opt)
				if rep.Format != format {
					t.Errorf("Report.Format = %q", rep.Format)
				}
				onlyNoted := len(rep.Omitted) - len(rep.Grouped)
				if (len(rep.Shortened) > 0) != tc.shortened || (len(rep.NameOnly) > 0) != tc.nameOnly ||
					(len(rep.Grouped) > 0) != tc.grouped || (onlyNoted > 0) != tc.omitted {
					t.Errorf("shortened %v, names %v, grouped %v, omitted %v; want %v %v %v %v",
						rep.Shortened, rep.NameOnly, rep.Grouped, rep.Omitted, tc.shortened, tc.nameOnly, tc.grouped, tc.omitted)
				}
				if rep.Budget > 0 && rep.Chars > rep.Budget && !rep.TooSmall {
					t.Errorf("Chars %d > Budget %d", rep.Chars, rep.Budget)
				}
				golden(t, format+"_"+tc.name, got)
			})
		}
	}
}

func TestGoldenEnvelope(t *testing.T) {
	files := []skill.File{
		{Path: "assets/logo.png", Size: 5120, ContentType: "image/png", Binary: true},
		{Path: "references/forms.md", Size: 2048, ContentType: "text/markdown"},
		{Path: "scripts/extract.py", Size: 930, ContentType: "text/x-python", Executable: true, Script: true},
		{Path: "scripts/fill \"form\".sh", Size: 77, ContentType: "application/x-sh", Script: true},
		{Path: "templates/a&b.docx", Size: 40000, ContentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", Binary: true},
	}
	var lots []skill.File
	for i := range 250 {
		p := "data/part-" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".json"
		lots = append(lots, skill.File{Path: p, Size: int64(100 + i), ContentType: "application/json"})
	}
	lots = append(lots, skill.File{Path: "scripts/run.sh", Size: 50, ContentType: "application/x-sh", Script: true})

	plugin := escEntry
	gitSkill := pdf
	gitSkill.Dir = "/var/cache/loadout/remote/skills@main/3f2a9c0d5e1b7a8c4d6e2f0a1b3c5d7e9f1a2b4c/skills/pdf"
	gitSkill.Location = gitSkill.Dir + "/SKILL.md"
	gitSkill.Origin = &skill.Origin{Kind: "git", Root: "https://git.example.com/team/skills.git", Ref: "main",
		Revision: "3f2a9c0d5e1b7a8c4d6e2f0a1b3c5d7e9f1a2b4c", Provenance: "skills/pdf"}
	cases := []struct {
		name string
		in   EnvelopeInput
	}{
		{"envelope_scripts", EnvelopeInput{Entry: pdf, Files: files}},
		{"envelope_nofiles", EnvelopeInput{Entry: gitReview}},
		{"envelope_nofiles_virtual", EnvelopeInput{Entry: stored}},
		{"envelope_virtual", EnvelopeInput{Entry: stored, Files: files}},
		{"envelope_plugin_escape", EnvelopeInput{Entry: plugin, Files: files[:2]}},
		{"envelope_capped", EnvelopeInput{Entry: pdf, Files: lots}},
		{"envelope_git", EnvelopeInput{Entry: gitSkill, Files: files[:2]}},
		{"envelope_capped_small", EnvelopeInput{Entry: stored, Files: files, MaxFiles: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Envelope(tc.in)
			// A skill without files was told about an invented
			// scripts/run.sh; the example is always one of its own files.
			if strings.Contains(got, "scripts/run.sh") && !slices.ContainsFunc(tc.in.Files, func(f skill.File) bool { return f.Path == "scripts/run.sh" }) {
				t.Errorf("the envelope names scripts/run.sh, which the skill does not have:\n%s", got)
			}
			golden(t, tc.name, got)
		})
	}
}

// categorised is many(n) with categories on two of every three skills.
func categorised(n int) []Entry {
	es := many(n)
	for i := range es {
		es[i].Category = []string{"media", "docs", ""}[i%3]
	}
	return es
}
