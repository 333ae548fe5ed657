package findability

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/loadout/loadout/skill"
)

// minRequests is the least number of lines requests.tsv must hold.
const minRequests = 200

// copyRun is the shortest run of consecutive words a request may not share
// with its expected skill's description or name.
const copyRun = 4

// collections are the folders, under the corpus root, that the requests
// were written from.
var collections = []string{"anthropics+skills", "openai+skills", "github+awesome-copilot"}

type request struct {
	line     int
	text     string
	expected []string
}

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// readRequests reads requests.tsv, failing the test on any line that is not
// REQUEST<TAB>EXPECTED with both fields non-empty.
func readRequests(t *testing.T) []request {
	t.Helper()
	f, err := os.Open("requests.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []request
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		fields := strings.Split(line, "\t")
		if len(fields) != 2 {
			t.Errorf("requests.tsv:%d: %d tab-separated fields, want 2: %q", n, len(fields), line)
			continue
		}
		text, exp := fields[0], fields[1]
		if strings.TrimSpace(text) == "" || strings.TrimSpace(exp) == "" {
			t.Errorf("requests.tsv:%d: empty field: %q", n, line)
			continue
		}
		if strings.TrimSpace(text) != text || strings.TrimSpace(exp) != exp {
			t.Errorf("requests.tsv:%d: leading or trailing space in a field: %q", n, line)
		}
		r := request{line: n, text: text}
		seen := map[string]bool{}
		for _, name := range strings.Split(exp, ",") {
			if !nameRE.MatchString(name) {
				t.Errorf("requests.tsv:%d: expected name %q is not a skill name (lowercase words joined by '-', names separated by ',' without spaces)", n, name)
			}
			if seen[name] {
				t.Errorf("requests.tsv:%d: %q expected twice", n, name)
			}
			seen[name] = true
			r.expected = append(r.expected, name)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// words splits s into lowercase words: runs of letters and digits, so that
// case, punctuation and hyphens do not count.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// runs returns every run of n consecutive words of s, each joined by a space.
func runs(s string, n int) []string {
	w := words(s)
	var out []string
	for i := 0; i+n <= len(w); i++ {
		out = append(out, strings.Join(w[i:i+n], " "))
	}
	return out
}

func TestRequestsFormat(t *testing.T) {
	reqs := readRequests(t)
	if len(reqs) < minRequests {
		t.Errorf("requests.tsv has %d requests, want at least %d", len(reqs), minRequests)
	}
	first := map[string]int{}
	for _, r := range reqs {
		key := strings.Join(words(r.text), " ")
		if prev, ok := first[key]; ok {
			t.Errorf("requests.tsv:%d: same request as line %d: %q", r.line, prev, r.text)
			continue
		}
		first[key] = r.line
	}
}

// corpusRoot is the folder holding the public collections, one folder per
// repository: $LOADOUT_SKILL_CORPUS, or /tmp/safety-corpus.
func corpusRoot() string {
	if d := os.Getenv("LOADOUT_SKILL_CORPUS"); d != "" {
		return d
	}
	return "/tmp/safety-corpus"
}

// loadCorpus maps every skill name in the collections to its descriptions
// (a name can be in more than one collection). It skips the test when the
// collections are not there.
func loadCorpus(t *testing.T) map[string][]string {
	t.Helper()
	root := corpusRoot()
	for _, c := range collections {
		if _, err := os.Stat(filepath.Join(root, c)); err != nil {
			// The collections are other people's work, fetched by
			// scripts/safety-corpus.sh where the network reaches them
			// (never under CI); only the format checks run without them.
			t.Skipf("%v: the public skill collections are not here (set LOADOUT_SKILL_CORPUS, or fetch them with scripts/safety-corpus.sh DIR); the format checks still ran", err)
		}
	}
	descs := map[string][]string{}
	for _, c := range collections {
		err := filepath.WalkDir(filepath.Join(root, c), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.IsDir() || d.Name() != "SKILL.md" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dir := filepath.Base(filepath.Dir(p))
			doc, _, ok := skill.ParseHeader(data, p, dir)
			if !ok || doc == nil {
				t.Logf("%s: does not parse; counted under its folder name %q with no description", p, dir)
				descs[dir] = append(descs[dir], "")
				return nil
			}
			descs[doc.Name] = append(descs[doc.Name], doc.Description)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(descs) == 0 {
		t.Fatalf("%s: no SKILL.md in %v", root, collections)
	}
	return descs
}

func TestRequestsExpectedExist(t *testing.T) {
	reqs := readRequests(t)
	descs := loadCorpus(t)
	for _, r := range reqs {
		for _, name := range r.expected {
			if _, ok := descs[name]; !ok {
				t.Errorf("requests.tsv:%d: expected skill %q is in none of %v under %s", r.line, name, collections, corpusRoot())
			}
		}
	}
}

// TestRequestsNoCopy checks that no request shares a run of copyRun or more
// consecutive words with the description of a skill it expects, or with
// that skill's name read as words: the requests are paraphrases in a
// user's words, not the skill's own.
func TestRequestsNoCopy(t *testing.T) {
	reqs := readRequests(t)
	descs := loadCorpus(t)
	for _, r := range reqs {
		mine := runs(r.text, copyRun)
		for _, name := range r.expected {
			texts := append([]string{strings.ReplaceAll(name, "-", " ")}, descs[name]...)
			for _, text := range texts {
				theirs := map[string]bool{}
				for _, run := range runs(text, copyRun) {
					theirs[run] = true
				}
				for _, run := range mine {
					if theirs[run] {
						t.Errorf("requests.tsv:%d: %q shares %q with %s's description or name", r.line, r.text, run, name)
						break
					}
				}
			}
		}
	}
}
