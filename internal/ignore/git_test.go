package ignore

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// gitScenario is a tree of files and directories plus the .gitignore files
// placed in it.
type gitScenario struct {
	name    string
	ignores map[string]string // dir -> .gitignore content
	paths   []string          // files; a trailing "/" makes an (empty) directory
}

var gitScenarios = []gitScenario{
	{
		name: "nested",
		ignores: map[string]string{
			"": "# root\n*.log\n!keep.log\nbuild/\n/top.txt\ndoc/*.txt\n**/cache/**\na/**/z\n\\#hash\nspace\\ \n" +
				"trail   \n[Tt]humbs.db\n?.tmp\n[!a-c]x\n[[:digit:]]*.num\n/only-root/\nfoo/*\n!foo/keep\n",
			"skills":         "!*.log\n/local\n*.bak\ndeep/\n",
			"skills/pdf":     "!x.bak\nSKILL.md.orig\n/scripts/*.pyc\n",
			"skills/pdf/sub": "**\n!keepme\n",
			"a":              "b/\n!b/c\n",
		},
		paths: []string{
			"x.log", "keep.log", "skills/x.log", "skills/pdf/x.log", "build/out", "src/build/out",
			"top.txt", "skills/top.txt", "doc/a.txt", "doc/x/a.txt", "x/doc/a.txt", "cache/x", "p/cache/q/r",
			"a/z", "a/b/z", "a/q/r/z", "a/q/zz", "#hash", "hash", "space ", "space", "trail", "trail   ",
			"thumbs.db", "Thumbs.db", "x/Thumbs.db", "a.tmp", "ab.tmp", "dx", "ax", "cx", "1.num", "x/2a.num", "a.num",
			"only-root/f", "x/only-root/f", "foo/a", "foo/keep", "foo/dir/keep",
			"skills/local", "skills/x/local", "skills/a.bak", "skills/pdf/x.bak", "skills/pdf/y.bak",
			"skills/deep/f", "skills/pdf/deep/", "skills/pdf/SKILL.md", "skills/pdf/SKILL.md.orig",
			"skills/pdf/scripts/a.pyc", "skills/pdf/scripts/x/a.pyc", "skills/pdf/sub/a", "skills/pdf/sub/keepme",
			"skills/pdf/sub/d/keepme", "a/b/c", "a/b/d", "a/x/b/c", "empty/",
		},
	},
	{
		name: "reinclude",
		ignores: map[string]string{
			"":    "/*\n!/foo\n/foo/*\n!/foo/bar\n",
			"foo": "bar/x\n!baz\n",
		},
		paths: []string{"foo/bar/x", "foo/bar/y", "foo/baz", "foo/qux", "otherfile", "other/foo/bar", "foo/bar/z/x"},
	},
	{
		name: "quirks",
		ignores: map[string]string{
			"": "foo**/bar\nx/a**\n[z-a]\n[]]\n[!]]q\n[a-]r\n[[:alpha:]-]s\n[[:nope:]]\nunterminated[\ntrailing\\\n" +
				"\\!bang\n!\n/\nq\\*\nw[\\]]\nabc/**\n**/deep\n**\n!**/\n!*.keep\n",
		},
		paths: []string{
			"foo/bar", "fooX/y/bar", "foobar", "x/abz", "x/ab/c", "x/a", "z", "m", "]", "aq", "]q", "ar", "-r", "br",
			"as", "-s", "1s", "unterminated[", "trailing\\", "trailing", "!bang", "q*", "qx", "w]", "abc/d/e",
			"d/deep", "e/deep/e", "n/o/p", "f.keep", "d/e/f.keep",
		},
	},
}

// randomScenario builds a scenario with generated patterns, to catch
// differences nobody thought of.
func randomScenario(seed uint64) gitScenario {
	rng := rand.New(rand.NewPCG(seed, 1))
	frags := []string{"a", "b", "ab", "*", "**", "?", "[ab]", "[!a]", "[a-b]", "/", "x", ".c", "\\*", "*a"}
	pat := func() string {
		var s strings.Builder
		if rng.IntN(5) == 0 {
			s.WriteString("!")
		}
		if rng.IntN(4) == 0 {
			s.WriteString("/")
		}
		for n := 1 + rng.IntN(4); n > 0; n-- {
			s.WriteString(frags[rng.IntN(len(frags))])
		}
		if rng.IntN(4) == 0 {
			s.WriteString("/")
		}
		return s.String()
	}
	names := []string{"a", "b", "ab", "ba", "x", "a.c", "xa", "*", "aab", "b.c"}
	sc := gitScenario{name: fmt.Sprintf("random-%d", seed), ignores: map[string]string{}}
	seen := map[string]bool{}
	var add func(prefix string, depth int)
	add = func(prefix string, depth int) {
		for i := 0; i < 3; i++ {
			p := prefix + names[rng.IntN(len(names))]
			if seen[p] {
				continue
			}
			seen[p] = true
			if depth < 3 && rng.IntN(2) == 0 {
				add(p+"/", depth+1)
			} else {
				sc.paths = append(sc.paths, p)
			}
		}
	}
	add("", 0)
	dirs := map[string]bool{"": true}
	for _, p := range sc.paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		if d != "" && rng.IntN(3) != 0 {
			continue
		}
		var lines []string
		for n := 1 + rng.IntN(6); n > 0; n-- {
			lines = append(lines, pat())
		}
		sc.ignores[d] = strings.Join(lines, "\n") + "\n"
	}
	return sc
}

// TestAgainstGit compares Explain with `git check-ignore --no-index -v` on
// real repositories.
func TestAgainstGit(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		testutil.Unavailable(t, "git not found: this test compares the ignore rules with git check-ignore")
	}
	scenarios := append([]gitScenario(nil), gitScenarios...)
	n := 60
	if testing.Short() {
		n = 5
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		scenarios = append(scenarios, randomScenario(seed))
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			compareWithGit(t, gitPath, sc)
		})
	}
}

func compareWithGit(t *testing.T, gitPath string, sc gitScenario) {
	root := t.TempDir()
	home := t.TempDir()
	env := append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"LC_ALL=C",
	)
	run := func(stdin []byte, args ...string) []byte {
		cmd := exec.Command(gitPath, args...)
		cmd.Dir = root
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			// check-ignore exits 1 when nothing is ignored.
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
			}
		}
		return out.Bytes()
	}
	run(nil, "init", "-q", ".")

	for _, p := range sc.paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, content := range sc.ignores {
		full := filepath.Join(root, filepath.FromSlash(dir))
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(full, ".gitignore"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Every file and directory in the tree, with whether it is a directory.
	isDir := map[string]bool{}
	var all []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		all = append(all, rel)
		isDir[rel] = de.IsDir()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(all)

	out := run([]byte(strings.Join(all, "\x00")+"\x00"), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	fields := strings.Split(string(out), "\x00")
	type gitResult struct {
		source, pattern string
		line            int
	}
	got := map[string]gitResult{}
	for i := 0; i+3 < len(fields); i += 4 {
		line, _ := strconv.Atoi(fields[i+1])
		got[fields[i+3]] = gitResult{source: fields[i], line: line, pattern: fields[i+2]}
	}
	if len(got) != len(all) {
		t.Fatalf("git answered for %d paths, asked %d", len(got), len(all))
	}

	// Rules for every directory, built the way a walker does.
	rulesFor := map[string]*Rules{}
	var rulesOf func(dir string) *Rules
	rulesOf = func(dir string) *Rules {
		if r, ok := rulesFor[dir]; ok {
			return r
		}
		var parent *Rules
		if dir != "" {
			pd := path.Dir(dir)
			if pd == "." {
				pd = ""
			}
			parent = rulesOf(pd)
		}
		r, err := parent.AddFS(os.DirFS(root), dir, ".gitignore")
		if err != nil {
			t.Fatal(err)
		}
		rulesFor[dir] = r
		return r
	}

	mismatches := 0
	for _, p := range all {
		dir := path.Dir(p)
		if dir == "." {
			dir = ""
		}
		r := rulesOf(dir)
		g := got[p]
		gitIgnored := g.pattern != "" && !strings.HasPrefix(g.pattern, "!")
		m, ok := r.Explain(p, isDir[p])
		ours := ok && !m.Negated
		var src string
		if ok {
			src = path.Join(m.Dir, m.File)
		}
		if ours != gitIgnored || ours != r.Ignored(p, isDir[p]) || (g.pattern != "" || ok) &&
			(src != g.source || m.Line != g.line || m.Pattern != g.pattern) {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%s (dir=%v): git %s:%d:%q ignored=%v; ours %s:%d:%q ignored=%v",
					p, isDir[p], g.source, g.line, g.pattern, gitIgnored, src, m.Line, m.Pattern, ours)
			}
		}
	}
	if mismatches > 0 {
		t.Logf("ignore files: %q", sc.ignores)
	}
	nIgnored := 0
	for _, g := range got {
		if g.pattern != "" && !strings.HasPrefix(g.pattern, "!") {
			nIgnored++
		}
	}
	t.Logf("%d paths, %d ignored by git", len(all), nIgnored)

	// A walker that skips ignored directories and uses IgnoredEntry must
	// see exactly the paths that Ignored keeps.
	for _, p := range all {
		dir := path.Dir(p)
		if dir == "." {
			dir = ""
		}
		r := rulesOf(dir)
		parentsKept := true
		for d := dir; d != ""; {
			pd := path.Dir(d)
			if pd == "." {
				pd = ""
			}
			if rulesOf(pd).IgnoredEntry(d, true) {
				parentsKept = false
				break
			}
			d = pd
		}
		if parentsKept && r.IgnoredEntry(p, isDir[p]) != r.Ignored(p, isDir[p]) {
			t.Errorf("%s: IgnoredEntry disagrees with Ignored", p)
		}
	}
}
