package safety_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// corpusRoot holds public skill collections, one folder per repository,
// as scripts/safety-corpus.sh fetches them (pinned commits) into
// .cache/safety-corpus; set LOADOUT_SAFETY_CORPUS to use another folder.
// Where it is missing the test is skipped, saying why (see below).
func corpusRoot() string {
	if d := os.Getenv("LOADOUT_SAFETY_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", ".cache", "safety-corpus")
}

// loadCorpus reads every skill under dir (a folder with a SKILL.md) as an
// Input: SKILL.md and every other file below it, up to the next skill.
func loadCorpus(t testing.TB, dir string) []safety.Input {
	var out []safety.Input
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "SKILL.md" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		root := filepath.Dir(p)
		doc, _, ok := skill.Parse(data, p, filepath.Base(root))
		in := safety.Input{Content: data, Name: filepath.Base(root)}
		if ok {
			in.Name, in.Description = doc.Name, doc.Description
		}
		err = filepath.WalkDir(root, func(q string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if _, err := os.Stat(filepath.Join(q, "SKILL.md")); q != root && err == nil {
					return filepath.SkipDir // another skill
				}
				return nil
			}
			if q == p || !e.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(q)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, q)
			in.Files = append(in.Files, skill.BundleFile{Path: filepath.ToSlash(rel), Data: b})
			return nil
		})
		out = append(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPublicCorpora runs Check and Similar over real public collections
// (every file of every skill) and logs the findings per code (run with -v
// to see them). The target: no error-severity finding on any of them.
func TestPublicCorpora(t *testing.T) {
	for _, repo := range []struct {
		name     string
		noErrors bool
	}{{"anthropics+skills", true}, {"openai+skills", true}, {"github+awesome-copilot", true}} {
		t.Run(repo.name, func(t *testing.T) {
			dir := filepath.Join(corpusRoot(), repo.name)
			if _, err := os.Stat(dir); err != nil {
				// Not needed under CI, where nothing may be downloaded and
				// these collections (other people's work, about 10 MB) are
				// not shipped: TestEvasionCorpus's ordinary texts check
				// false positives there. Where the network reaches them,
				// scripts/safety-corpus.sh fetches them, and this runs.
				t.Skipf("%s: %v: the public collections are a check to run where they can be fetched (scripts/safety-corpus.sh); not needed under CI, where TestEvasionCorpus's ordinary texts stand in", dir, err)
			}
			ins := loadCorpus(t, dir)
			counts := map[string]int{}
			var lines []string
			for _, in := range ins {
				for _, d := range safety.Check(in, nil) {
					counts[string(d.Severity)+" "+d.Code]++
					if d.Code != safety.CodeNoWhenToUse {
						lines = append(lines, in.Name+": "+d.String())
					}
					if repo.noErrors && d.Severity == skill.Error {
						t.Errorf("error on %s: %s", in.Name, d)
					}
				}
			}
			for _, d := range safety.Similar(ins, nil) {
				counts[string(d.Severity)+" "+d.Code]++
				lines = append(lines, d.String())
			}
			keys := make([]string, 0, len(counts))
			for k := range counts {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			fmt.Fprintf(&b, "%d skills\n", len(ins))
			for _, k := range keys {
				fmt.Fprintf(&b, "  %-45s %d\n", k, counts[k])
			}
			t.Log(b.String())
			if os.Getenv("LOADOUT_SAFETY_CORPUS_VERBOSE") != "" {
				t.Log(strings.Join(lines, "\n"))
			}
		})
	}
}

// FuzzHidden checks the Unicode scanner: it never panics, its offsets,
// lines and columns agree with the text, counts add up, and a tag
// character inserted anywhere is found.
func FuzzHidden(f *testing.F) {
	f.Add("plain text\nsecond line", 3)
	f.Add("ig\u200Bnore \u202Eabc\u202C", 0)
	f.Add("\uFEFFflag \U0001F3F4\U000E0067\U000E0062\U000E007F", 5)
	f.Add("\xff\xfe broken \xe2\x80", 2)
	f.Fuzz(func(t *testing.T, s string, at int) {
		check := func(s string) []safety.Hidden {
			hs := safety.ScanHidden(s)
			for _, h := range hs {
				if h.Offset < 0 || h.Offset >= len(s) || h.Count < 1 {
					t.Fatalf("bad %+v in %q", h, s)
				}
				r, _ := utf8.DecodeRuneInString(s[h.Offset:])
				if r != h.Rune {
					t.Fatalf("rune %U at %d, want %U", r, h.Offset, h.Rune)
				}
				line := strings.Count(s[:h.Offset], "\n") + 1
				col := utf8.RuneCountInString(s[strings.LastIndexByte(s[:h.Offset], '\n')+1:h.Offset]) + 1
				if h.Line != line || h.Column != col {
					t.Fatalf("%+v: want line %d column %d", h, line, col)
				}
			}
			return hs
		}
		check(s)
		// Insert a tag character at a rune boundary.
		if at < 0 {
			at = -at
		}
		if len(s) > 0 {
			at %= len(s) + 1
		} else {
			at = 0
		}
		for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
			at--
		}
		// A flag sequence may legitimately absorb tags after U+1F3F4; put
		// a space first so the inserted tag stands alone.
		ins := s[:at] + " \U000E0041" + s[at:]
		found := false
		for _, h := range check(ins) {
			if h.Code == safety.CodeHiddenTag {
				found = true
			}
		}
		if !found {
			t.Fatalf("inserted tag not found in %q", ins)
		}
	})
}

// BenchmarkCheck checks generated skills (bench/gen: 3 KB SKILL.md and
// three supporting files each, like a large real collection), the work
// `loadout check` would add per skill. It reports ns/skill; multiply by
// 10,000 for the figure compared with a cold `loadout check` of a
// 10,000-skill tree. cpu-ns/skill is the CPU time (user and system, the
// garbage collector included), steadier than wall time on a busy machine.
// skill-md-only checks SKILL.md alone (what `loadout check` reads today).
func BenchmarkCheck(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	if err := gen.Tree(dir, n, 1); err != nil {
		b.Fatal(err)
	}
	var ins []safety.Input
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "SKILL.md" {
			return err
		}
		root := filepath.Dir(p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, _, _ := skill.Parse(data, p, filepath.Base(root))
		in := safety.Input{Name: doc.Name, Description: doc.Description, Content: data}
		for _, f := range []string{"references/guide.md", "scripts/run.sh", "assets/data.json"} {
			fd, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				return err
			}
			in.Files = append(in.Files, skill.BundleFile{Path: f, Data: fd})
		}
		ins = append(ins, in)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	mdOnly := make([]safety.Input, len(ins))
	for i, in := range ins {
		mdOnly[i] = safety.Input{Name: in.Name, Description: in.Description, Content: in.Content, FilesUnknown: true}
	}
	// with-files-cached checks every file from a warm cache (Cache): what
	// a skill whose files were checked before costs, a reload of an
	// unchanged skill or a file shared by many skills.
	warm := safety.NewCache()
	for _, in := range ins {
		safety.CheckCached(in, nil, warm)
	}
	for _, bc := range []struct {
		name  string
		ins   []safety.Input
		cache *safety.Cache
	}{{"with-files", ins, nil}, {"skill-md-only", mdOnly, nil}, {"with-files-cached", ins, warm}} {
		b.Run(bc.name, func(b *testing.B) {
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, in := range bc.ins {
					safety.CheckCached(in, nil, bc.cache)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.ins)), "ns/skill")
			if c := testutil.CPUTime() - cpu; c > 0 {
				b.ReportMetric(float64(c.Nanoseconds())/float64(b.N*len(bc.ins)), "cpu-ns/skill")
			}
		})
	}
}

// BenchmarkSimilar runs the pairwise description check over a loadout of
// 500 generated descriptions.
func BenchmarkSimilar(b *testing.B) {
	var ins []safety.Input
	words := strings.Fields("extract fill merge split convert render review audit deploy test lint format search index parse validate summarize translate schedule monitor")
	objs := strings.Fields("pdf forms slides spreadsheets images logs tickets invoices contracts emails pull-requests databases charts diagrams videos")
	for i := 0; i < 500; i++ {
		d := fmt.Sprintf("%s and %s %s for %s teams. Use when the user asks to %s %s or %s.", words[i%len(words)], words[(i/3)%len(words)],
			objs[i%len(objs)], objs[(i/7)%len(objs)], words[(i/11)%len(words)], objs[(i/5)%len(objs)], words[(i/13)%len(words)])
		ins = append(ins, safety.Input{Name: fmt.Sprintf("s%d", i), Description: d})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		safety.Similar(ins, nil)
	}
}
