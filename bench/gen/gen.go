// Package gen writes deterministic trees of Agent Skills for benchmarks.
//
// A tree of n skills looks like a large real collection:
//
//	DIR/<category>/<skill-name>/SKILL.md
//	DIR/<category>/<group>/<skill-name>/SKILL.md      (about one skill in six)
//
// and every skill folder holds three supporting files:
//
//	references/guide.md   (about 2 KB of Markdown)
//	scripts/run.sh        (a small shell script, mode 0755)
//	assets/data.json      (a few hundred bytes of JSON)
//
// Each SKILL.md is about 3 KB: valid frontmatter whose name equals its
// folder, a description of 50 to 900 characters written in one of several
// YAML styles (plain, double-quoted, folded block), optional extension fields
// (version, tags, category, requires-tools, metadata, license,
// allowed-tools), then a Markdown body. Every skill is valid in lenient
// mode and for Pi's loader: no skill in a generated tree should produce an
// error diagnostic, and every name is unique.
//
// The same (n, seed) always gives byte-identical trees.
//
// With Options.Findings, a share of the skills carries one warning each, as
// real collections do (and `loadout check` and the server must report
// them): even-numbered such skills a compatibility field that is a list
// (field-type, found when the skill loads), odd ones a link to a file the
// skill does not have (quality-broken-link, found by the safety pass).
package gen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Stats says what Tree wrote.
type Stats struct {
	Skills int   // skill folders
	Files  int   // regular files, SKILL.md included
	Dirs   int   // folders, the root excluded
	Bytes  int64 // total size of all files
	// SkillBytes is the total size of the SKILL.md files alone.
	SkillBytes int64
}

// Options choose what a generated tree holds beyond n.
type Options struct {
	// Seed selects the content; the same seed always gives the same tree.
	Seed int64
	// Findings is the share of skills (0 to 1) that carry one warning
	// each: skill i does when i%100 < Findings*100.
	Findings float64
}

// hasFinding says whether skill i carries a warning.
func (o Options) hasFinding(i int) bool { return float64(i%100) < o.Findings*100 }

// Tree writes n skills under dir, which must be missing or empty. seed
// selects the content; the same seed always gives the same tree.
func Tree(dir string, n int, seed int64) error {
	_, err := TreeStats(dir, n, seed)
	return err
}

// TreeStats is Tree, and reports what it wrote.
func TreeStats(dir string, n int, seed int64) (Stats, error) {
	return TreeWith(dir, n, Options{Seed: seed})
}

// TreeWith is TreeStats with Options.
func TreeWith(dir string, n int, o Options) (Stats, error) {
	seed := o.Seed
	var st Stats
	if n < 0 {
		return st, fmt.Errorf("gen: negative skill count %d", n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return st, err
	}
	if len(ents) > 0 {
		return st, fmt.Errorf("%w: %s (refusing to mix trees)", ErrNotEmpty, dir)
	}

	// Plan first (serially, so the layout depends only on n and seed), then
	// write in parallel: each skill's content depends only on its index.
	plans := layout(n, seed)
	dirsSeen := map[string]bool{}
	for i := range plans {
		p := &plans[i]
		for d := filepath.Dir(p.rel); d != "."; d = filepath.Dir(d) {
			if dirsSeen[d] {
				break
			}
			dirsSeen[d] = true
			st.Dirs++
		}
	}
	st.Dirs += n * 4 // the skill folder and its three subfolders

	workers := min(runtime.GOMAXPROCS(0)*2, 16)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int, workers)
	)
	for range workers {
		wg.Go(func() {
			var local Stats
			for i := range next {
				if err := writeSkill(dir, &plans[i], o, i, &local); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
			mu.Lock()
			st.Skills += local.Skills
			st.Files += local.Files
			st.Bytes += local.Bytes
			st.SkillBytes += local.SkillBytes
			mu.Unlock()
		})
	}
	for i := range plans {
		next <- i
	}
	close(next)
	wg.Wait()
	return st, firstErr
}

// layout plans n skills: their categories, names and folders. It is
// serial, so the layout depends only on n and seed.
func layout(n int, seed int64) []plan {
	plans := make([]plan, n)
	lay := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	for i := range plans {
		p := &plans[i]
		cat := Categories[lay.IntN(len(Categories))]
		p.category = cat.Name
		rel := cat.Name
		if lay.IntN(6) == 0 {
			rel = filepath.Join(rel, groups[lay.IntN(len(groups))])
		}
		p.name = skillName(lay, cat, i)
		p.rel = filepath.Join(rel, p.name)
	}
	return plans
}

// File is one file of a generated skill: its slash-separated path inside
// the skill folder ("SKILL.md", "scripts/run.sh"), its bytes, and whether
// it is executable.
type File struct {
	Path       string
	Data       []byte
	Executable bool
}

// Skill is one generated skill held in memory: what Tree writes into the
// skill's folder, for writers that are not a file system (a store).
type Skill struct {
	Name     string
	Category string
	// Folder is the skill's folder relative to a tree's root, slash-separated.
	Folder string
	// Files are SKILL.md first, then the supporting files.
	Files []File
}

// Skills calls fn with the skills of Tree(dir, n, seed), byte for byte,
// in index order, without writing anything; it stops at fn's first error.
func Skills(n int, seed int64, fn func(i int, s Skill) error) error {
	return SkillsWith(n, Options{Seed: seed}, fn)
}

// SkillsWith is Skills with Options: the skills of TreeWith.
func SkillsWith(n int, o Options, fn func(i int, s Skill) error) error {
	seed := o.Seed
	if n < 0 {
		return fmt.Errorf("gen: negative skill count %d", n)
	}
	for i, p := range layout(n, seed) {
		s := Skill{Name: p.name, Category: p.category, Folder: filepath.ToSlash(p.rel)}
		for _, f := range skillFiles(&p, o, i) {
			s.Files = append(s.Files, File{Path: f.rel, Data: []byte(f.data), Executable: f.mode&0o111 != 0})
		}
		if err := fn(i, s); err != nil {
			return err
		}
	}
	return nil
}

type genFile struct {
	rel  string
	data string
	mode os.FileMode
}

// skillFiles is the content of skill i: SKILL.md, then its supporting
// files. It depends only on the plan, the options and i.
func skillFiles(p *plan, o Options, i int) []genFile {
	r := rand.New(rand.NewPCG(uint64(o.Seed), uint64(i)+1))
	md := skillMD(r, p)
	if o.hasFinding(i) {
		md = withFinding(md, i)
	}
	return []genFile{
		{"SKILL.md", md, 0o644},
		{"references/guide.md", guideMD(r, p), 0o644},
		{"scripts/run.sh", runSH(r, p), 0o755},
		{"assets/data.json", dataJSON(r, p, i), 0o644},
	}
}

type plan struct {
	category string
	name     string
	rel      string // folder relative to the root
}

// Category is a kind of skill: its name and the nouns its skills' names
// start with. Categories and Verbs make realistic names
// ("pdf-extract"), here and in bench/cmd/listing.
type Category struct {
	Name  string
	Nouns []string
}

// Categories are the kinds of generated skills.
var Categories = []Category{
	{"documents", []string{"pdf", "docx", "xlsx", "pptx", "markdown", "latex", "invoice", "contract", "report", "memo"}},
	{"data", []string{"csv", "parquet", "sql", "etl", "dashboard", "pivot", "schema", "dataset", "chart", "forecast"}},
	{"engineering", []string{"api", "refactor", "review", "migration", "benchmark", "profiler", "linter", "release", "changelog", "monorepo"}},
	{"testing", []string{"unit-test", "fuzz", "snapshot", "e2e", "coverage", "mock", "flaky-test", "load-test", "contract-test", "property"}},
	{"devops", []string{"docker", "kubernetes", "terraform", "helm", "ci", "deploy", "rollback", "alerting", "oncall", "incident"}},
	{"security", []string{"secrets", "sbom", "cve", "threat-model", "audit", "pentest", "oauth", "tls", "sandbox", "policy"}},
	{"frontend", []string{"react", "svelte", "css", "a11y", "storybook", "webpack", "vite", "tailwind", "i18n", "design-token"}},
	{"backend", []string{"grpc", "graphql", "postgres", "redis", "queue", "cache", "webhook", "rate-limit", "cron", "auth"}},
	{"writing", []string{"blog", "newsletter", "press-release", "style-guide", "copyedit", "summary", "outline", "translation", "tone", "headline"}},
	{"research", []string{"literature", "citation", "survey", "interview", "experiment", "hypothesis", "paper", "abstract", "dataset-card", "review-notes"}},
	{"design", []string{"figma", "icon", "palette", "typography", "wireframe", "mockup", "brand", "layout", "illustration", "motion"}},
	{"product", []string{"prd", "roadmap", "user-story", "okr", "pricing", "launch", "feedback", "persona", "competitor", "metrics"}},
	{"ops", []string{"expense", "onboarding", "hiring", "meeting", "calendar", "travel", "procurement", "vendor", "budget", "payroll"}},
	{"mobile", []string{"swiftui", "kotlin", "flutter", "app-store", "push", "deeplink", "crash", "offline", "gesture", "widget"}},
	{"ml", []string{"finetune", "eval", "prompt", "embedding", "tokenizer", "notebook", "feature", "label", "inference", "quantize"}},
	{"support", []string{"ticket", "faq", "macro", "escalation", "refund", "triage", "sla", "knowledge-base", "survey-reply", "chatbot"}},
}

var groups = []string{"internal", "community", "experimental", "team-alpha", "team-beta", "legacy", "vendor", "archive"}

// Verbs end generated skill names.
var Verbs = []string{
	"build", "check", "convert", "draft", "extract", "fill", "fix", "format", "generate", "inspect",
	"merge", "migrate", "plan", "publish", "review", "scan", "split", "summarize", "sync", "validate",
}

// skillName is unique per index: the suffix is the index itself.
func skillName(r *rand.Rand, cat Category, i int) string {
	return fmt.Sprintf("%s-%s-%d", cat.Nouns[r.IntN(len(cat.Nouns))], Verbs[r.IntN(len(Verbs))], i)
}

var words = strings.Fields(`the a this skill helps you with when user asks for files
data reports tables pages forms notes tasks steps results changes errors
project repository document template workflow pipeline service team release
quickly safely carefully consistently reliably using standard tools and
scripts to create edit check update compare clean verify export import
structured output format layout sections headings lists examples summary
review before after each every any new existing large small local remote
source target version history config settings options defaults limits`)

// sentence returns words joined by spaces, capitalised, ending in a period.
// It never contains ": ", " #" or quotes, so it is safe in any YAML style.
func sentence(r *rand.Rand, nw int) string { return Sentence(r, "", nw) }

// Sentence is start followed by nw words from the generator's vocabulary
// (the first capitalised when start is empty) and a period; now and then a
// comma. The same r gives the same sentence.
func Sentence(r *rand.Rand, start string, nw int) string {
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

// text returns whole sentences totalling about n characters (at least n,
// trimmed back to at most max).
func text(r *rand.Rand, n, max int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sentence(r, 5+r.IntN(10)))
	}
	s := b.String()
	if len(s) > max {
		s = strings.TrimRight(s[:max], " ,")
	}
	return s
}

func description(r *rand.Rand, p *plan) string {
	// Lengths are skewed towards short, as in real collections, but span
	// the whole 50-900 range.
	var n int
	switch k := r.IntN(10); {
	case k < 5:
		n = 50 + r.IntN(150)
	case k < 8:
		n = 200 + r.IntN(300)
	default:
		n = 500 + r.IntN(400)
	}
	noun, _, _ := strings.Cut(p.name, "-")
	d := fmt.Sprintf("Use when working on %s tasks in the %s area.", noun, p.category)
	if rest := n - len(d) - 1; rest > 0 {
		d += " " + text(r, rest, 900-len(d)-1)
	}
	for len(d) < 50 {
		d += " Covers the common cases."
	}
	return d
}

// withFinding adds one warning to a SKILL.md: a compatibility field that
// is a list, not a string (in the frontmatter, for even i), or a link to
// a missing file (in the body, for odd i).
func withFinding(md string, i int) string {
	if i%2 == 0 {
		return strings.Replace(md, "\n---\n\n", "\ncompatibility: [linux, macos]\n---\n\n", 1)
	}
	return md + "See [the missing notes](references/notes.md) as well.\n"
}

func writeSkill(root string, p *plan, o Options, i int, st *Stats) error {
	dir := filepath.Join(root, p.rel)
	for _, sub := range []string{"references", "scripts", "assets"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	for _, f := range skillFiles(p, o, i) {
		path := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.WriteFile(path, []byte(f.data), f.mode); err != nil {
			return err
		}
		if f.mode&0o111 != 0 {
			// WriteFile's mode is filtered by the umask; make the bit sure.
			if err := os.Chmod(path, f.mode); err != nil {
				return err
			}
		}
		st.Files++
		st.Bytes += int64(len(f.data))
		if f.rel == "SKILL.md" {
			st.SkillBytes += int64(len(f.data))
		}
	}
	st.Skills++
	return nil
}

var tools = []string{"bash", "read", "write", "edit", "grep", "python", "node", "git", "curl", "jq"}
var licenses = []string{"MIT", "Apache-2.0", "BSD-3-Clause", "Proprietary. See LICENSE.txt for terms"}

func pick(r *rand.Rand, from []string, k int) []string {
	idx := r.Perm(len(from))[:k]
	out := make([]string, k)
	for j, x := range idx {
		out[j] = from[x]
	}
	return out
}

func skillMD(r *rand.Rand, p *plan) string {
	var b strings.Builder
	b.Grow(3300)
	b.WriteString("---\n")
	fmt.Fprintf(&b, "name: %s\n", p.name)
	desc := description(r, p)
	switch r.IntN(3) {
	case 0:
		fmt.Fprintf(&b, "description: %s\n", desc)
	case 1:
		fmt.Fprintf(&b, "description: \"%s\"\n", desc)
	default:
		// A folded block, wrapped near 80 columns.
		b.WriteString("description: >-\n")
		line := "  "
		for _, w := range strings.Fields(desc) {
			if len(line) > 2 && len(line)+1+len(w) > 80 {
				b.WriteString(line + "\n")
				line = "  "
			}
			if len(line) > 2 {
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	if r.IntN(3) == 0 {
		fmt.Fprintf(&b, "license: %s\n", licenses[r.IntN(len(licenses))])
	}
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "version: %d.%d.%d\n", r.IntN(4), r.IntN(20), r.IntN(10))
	}
	if r.IntN(2) == 0 {
		b.WriteString("tags:\n")
		for _, t := range pick(r, []string{p.category, "automation", "productivity", "docs", "quality", "internal", "beta", "cli"}, 1+r.IntN(4)) {
			fmt.Fprintf(&b, "  - %s\n", t)
		}
	}
	if r.IntN(3) == 0 {
		fmt.Fprintf(&b, "category: %s\n", p.category)
	}
	if r.IntN(4) == 0 {
		b.WriteString("requires-tools:\n")
		for _, t := range pick(r, tools, 1+r.IntN(3)) {
			fmt.Fprintf(&b, "  - %s\n", t)
		}
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, "allowed-tools: %s\n", strings.Join(pick(r, tools, 1+r.IntN(4)), " "))
	}
	if r.IntN(3) == 0 {
		b.WriteString("metadata:\n")
		fmt.Fprintf(&b, "  author: team-%s\n", groups[r.IntN(len(groups))])
		fmt.Fprintf(&b, "  owner: \"%s@example.com\"\n", Verbs[r.IntN(len(Verbs))])
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "  revision: \"%d\"\n", 1+r.IntN(50))
		}
	}
	b.WriteString("---\n\n")

	title := strings.ReplaceAll(p.name, "-", " ")
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", title, text(r, 200, 400))
	b.WriteString("## When to use\n\n")
	for range 3 + r.IntN(3) {
		fmt.Fprintf(&b, "- %s\n", sentence(r, 6+r.IntN(8)))
	}
	b.WriteString("\n## Steps\n\n")
	for k := range 4 + r.IntN(3) {
		fmt.Fprintf(&b, "%d. %s\n", k+1, sentence(r, 8+r.IntN(10)))
	}
	b.WriteString("\n## Running the script\n\n")
	b.WriteString("Run `scripts/run.sh` from the skill directory. It reads `assets/data.json`.\n\n")
	b.WriteString("```bash\nbash scripts/run.sh --input ./in --output ./out\n```\n\n")
	b.WriteString("## Details\n\n")
	b.WriteString("See [the guide](references/guide.md) for edge cases.\n\n")
	// Fill up to about 3 KB in all.
	target := 2700 + r.IntN(600)
	for b.Len() < target-80 {
		fmt.Fprintf(&b, "%s\n\n", text(r, min(300, target-b.Len()), 600))
	}
	return b.String()
}

func guideMD(r *rand.Rand, p *plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s guide\n\n", p.name)
	for k := range 4 {
		fmt.Fprintf(&b, "## Part %d\n\n%s\n\n", k+1, text(r, 400, 600))
	}
	return b.String()
}

func runSH(r *rand.Rand, p *plan) string {
	return fmt.Sprintf(`#!/usr/bin/env bash
# %s: helper script (generated for benchmarks).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$here/../assets/data.json"
echo "%s: processing with $(wc -c < "$data") bytes of settings"
for step in %d %d %d; do
  echo "step $step"
done
`, p.name, p.name, r.IntN(10), r.IntN(10), r.IntN(10))
}

func dataJSON(r *rand.Rand, p *plan, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"skill\": %q,\n  \"index\": %d,\n  \"category\": %q,\n  \"thresholds\": [", p.name, i, p.category)
	for k := range 8 {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", r.IntN(1000))
	}
	b.WriteString("],\n  \"labels\": {\n")
	for k := range 6 {
		sep := ","
		if k == 5 {
			sep = ""
		}
		fmt.Fprintf(&b, "    \"k%d\": %q%s\n", k, words[r.IntN(len(words))], sep)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// ErrNotEmpty is returned when the target folder already has entries.
var ErrNotEmpty = errors.New("gen: directory not empty")
