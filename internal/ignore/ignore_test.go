package ignore

import (
	"strings"
	"testing"
)

// build makes rules from pairs of (directory, file content), in order.
func build(pairs ...string) *Rules {
	var r *Rules
	for i := 0; i+1 < len(pairs); i += 2 {
		r = r.Add(pairs[i], []byte(pairs[i+1]))
	}
	return r
}

type check struct {
	path  string
	isDir bool
	want  bool
}

func f(p string, want bool) check { return check{p, false, want} }
func d(p string, want bool) check { return check{p, true, want} }

// The expected results follow gitignore(5) and the behaviour of git's matcher.
var tableTests = []struct {
	name   string
	files  []string // pairs of (dir, content)
	checks []check
}{
	{"basename any depth", []string{"", "foo\n"}, []check{
		f("foo", true), d("foo", true), f("a/foo", true), f("a/b/foo", true),
		f("foobar", false), f("afoo", false), f("foo.c", false), f("a/foo/x", true),
	}},
	{"blank lines and comments", []string{"", "\n\n# foo\n   \n#bar\n"}, []check{
		f("foo", false), f("# foo", false), f("#bar", false), f("   ", false),
	}},
	{"escaped hash and bang", []string{"", "\\#foo\n\\!bar\n"}, []check{
		f("#foo", true), f("foo", false), f("!bar", true), f("bar", false),
	}},
	{"hash not at start", []string{"", "a#b\n"}, []check{f("a#b", true), f("a", false)}},
	{"trailing spaces trimmed", []string{"", "foo   \nbar\\ \nbaz\\  \n"}, []check{
		f("foo", true), f("foo ", false), f("bar ", true), f("bar", false),
		f("baz ", true), f("baz  ", false), f("baz", false),
	}},
	{"tabs are not trimmed", []string{"", "foo\t\n"}, []check{f("foo", false), f("foo\t", true)}},
	{"crlf", []string{"", "foo\r\nbar\r\n"}, []check{f("foo", true), f("bar", true), f("foo\r", false)}},
	{"bom", []string{"", "\xef\xbb\xbffoo\nbar"}, []check{f("foo", true), f("bar", true)}},
	{"no newline at end", []string{"", "a\nb"}, []check{f("a", true), f("b", true)}},
	{"dir only", []string{"", "foo/\n"}, []check{
		d("foo", true), f("foo", false), d("a/foo", true), f("a/foo", false),
		f("foo/x", true), f("a/foo/x/y", true), d("foobar", false),
	}},
	{"trailing slash in rel means dir", []string{"", "foo/\n"}, []check{f("foo/", true), f("a/foo/", true)}},
	{"leading slash anchors", []string{"", "/foo\n"}, []check{
		f("foo", true), d("foo", true), f("a/foo", false), f("foo/x", true),
	}},
	{"middle slash anchors", []string{"", "a/b\n"}, []check{
		f("a/b", true), f("x/a/b", false), f("a/b/c", true), f("a/bc", false),
	}},
	{"doc frotz", []string{"", "doc/frotz/\n"}, []check{
		d("doc/frotz", true), d("a/doc/frotz", false), f("doc/frotz", false),
	}},
	{"frotz dir anywhere", []string{"", "frotz/\n"}, []check{d("frotz", true), d("a/frotz", true), f("a/frotz", false)}},
	{"star", []string{"", "*.log\n"}, []check{
		f("x.log", true), f("a/b/x.log", true), f(".log", true), d("x.log", true),
		f("x.log.txt", false), f("xlog", false), f("a.log/b", true),
	}},
	{"star does not cross slash", []string{"", "doc/*.txt\n"}, []check{
		f("doc/a.txt", true), f("doc/x/a.txt", false), f("a/doc/a.txt", false), f("doc/.txt", true),
	}},
	{"dir slash star", []string{"", "foo/*\n"}, []check{
		f("foo/test.json", true), d("foo/bar", true), f("foo", false), d("foo", false),
		f("foo/bar/hello.c", true), // ignored because foo/bar is
	}},
	{"star alone", []string{"", "*\n"}, []check{f("a", true), f("a/b", true), d("a", true), f(".x", true)}},
	{"star in middle of base", []string{"", "a*b\n"}, []check{
		f("ab", true), f("axxb", true), f("d/axb", true), f("a/b", false), f("ba", false),
	}},
	{"question mark", []string{"", "?\n"}, []check{f("a", true), f("ab", false), f("d/x", true), f("ab/cd", false)}},
	{"question mark not slash", []string{"", "a?b\n"}, []check{f("a/b", false), f("axb", true)}},
	{"question mark is one byte", []string{"", "?\n"}, []check{f("é", false)}},
	{"leading double star", []string{"", "**/foo\n"}, []check{
		f("foo", true), f("a/foo", true), f("a/b/foo", true), f("afoo", false), f("foo/x", true),
	}},
	{"leading double star two segments", []string{"", "**/foo/bar\n"}, []check{
		f("foo/bar", true), f("x/foo/bar", true), f("x/y/foo/bar", true), f("foo/x/bar", false), f("xfoo/bar", false),
	}},
	{"trailing double star", []string{"", "abc/**\n"}, []check{
		f("abc/x", true), f("abc/x/y", true), d("abc", false), f("abc", false), f("x/abc/y", false),
	}},
	{"middle double star", []string{"", "a/**/b\n"}, []check{
		f("a/b", true), f("a/x/b", true), f("a/x/y/b", true), f("a/xb", false), f("a/x/yb", false), f("x/a/b", false),
	}},
	{"double star alone", []string{"", "**\n"}, []check{f("a", true), f("a/b/c", true)}},
	{"slash double star", []string{"", "/**\n"}, []check{f("a", true), f("a/b/c", true)}},
	{"double star not at boundary is a star", []string{"", "a**b\n"}, []check{
		f("ab", true), f("axb", true), f("x/axyb", true), f("a/b", false),
	}},
	{"double star suffix in base", []string{"", "foo**\n"}, []check{f("foo", true), f("foobar", true), f("x/foob", true)}},
	{"double star anchored mid-segment", []string{"", "x/a**b\n"}, []check{f("x/ab", true), f("x/azzb", true), f("x/a/b", false)}},
	{"triple star", []string{"", "a/***/b\n"}, []check{f("a/b", true), f("a/x/y/b", true)}},
	{"class", []string{"", "[abc]x\n"}, []check{f("ax", true), f("cx", true), f("dx", false), f("x", false)}},
	{"class range", []string{"", "[a-c]x\n"}, []check{f("bx", true), f("dx", false), f("-x", false)}},
	{"class negated bang", []string{"", "[!a]x\n"}, []check{f("ax", false), f("bx", true), f("/x", false)}},
	{"class negated caret", []string{"", "[^a]x\n"}, []check{f("ax", false), f("bx", true)}},
	{"class bracket first", []string{"", "[]]\n"}, []check{f("]", true), f("[", false)}},
	{"class negated bracket first", []string{"", "[!]]\n"}, []check{f("]", false), f("a", true)}},
	{"class trailing dash", []string{"", "[a-]\n"}, []check{f("a", true), f("-", true), f("b", false)}},
	{"class leading dash", []string{"", "[-a]\n"}, []check{f("a", true), f("-", true), f("b", false)}},
	{"class escape", []string{"", "[\\]]x\n"}, []check{f("]x", true), f("\\x", false)}},
	{"class posix", []string{"", "[[:digit:]]x\n[[:upper:][:space:]]y\n"}, []check{
		f("1x", true), f("ax", false), f("Ay", true), f(" y", true), f("ay", false),
	}},
	{"class not posix", []string{"", "[[:a]\n"}, []check{f("[", true), f(":", true), f("a", true), f("b", false)}},
	{"class bad posix name matches nothing", []string{"", "[[:nope:]]\nx[[:nope:]]\n"}, []check{f("n", false), f("x", false)}},
	{"unterminated class matches nothing", []string{"", "[abc\n"}, []check{f("[abc", false), f("a", false)}},
	{"class never matches slash", []string{"", "a[/]b\n"}, []check{f("a/b", false)}},
	{"reversed range", []string{"", "[z-a]\n"}, []check{f("a", false), f("z", true), f("m", false)}}, // as git: the start is a member
	{"escaped star", []string{"", "\\*\n"}, []check{f("*", true), f("x", false)}},
	{"escaped question", []string{"", "a\\?\n"}, []check{f("a?", true), f("ab", false)}},
	{"trailing backslash matches nothing", []string{"", "foo\\\n"}, []check{f("foo", false), f("foo\\", false)}},
	{"bang and slash alone", []string{"", "!\n/\n!/\n"}, []check{f("a", false), d("a", false)}},
	{"negation", []string{"", "*.log\n!keep.log\n"}, []check{f("x.log", true), f("keep.log", false), f("a/keep.log", false)}},
	{"negation last wins", []string{"", "!keep.log\n*.log\n"}, []check{f("keep.log", true)}},
	{"cannot reinclude inside excluded dir", []string{"", "build/\n!build/keep.txt\n"}, []check{
		f("build/keep.txt", true), d("build", true),
	}},
	{"cannot reinclude with star star", []string{"", "build/\n!build/**\n"}, []check{f("build/x", true)}},
	{"reinclude by not excluding the dir", []string{"", "build/*\n!build/keep.txt\n"}, []check{
		f("build/keep.txt", false), f("build/x", true), d("build", false),
	}},
	{"doc example only foo bar", []string{"", "/*\n!/foo\n/foo/*\n!/foo/bar\n"}, []check{
		d("foo", false), d("foo/bar", false), f("foo/bar/x", false), f("foo/baz", true), f("other", true), f("other/foo", true),
	}},
	{"negated dir only", []string{"", "*\n!*/\n"}, []check{d("a", false), f("a", true), f("a/b", true), d("a/b", false)}},
	{"nested precedence", []string{"", "*.md\n", "sub", "!README.md\n"}, []check{
		f("README.md", true), f("sub/README.md", false), f("sub/x/README.md", false), f("other/README.md", true), f("sub/x.md", true),
	}},
	{"nested exclusion", []string{"", "!x\n", "sub", "x\n"}, []check{f("x", false), f("sub/x", true), f("sub/y/x", true)}},
	{"nested anchored", []string{"sub", "/x\n"}, []check{
		f("sub/x", true), f("x", false), f("sub/y/x", false), f("other/sub/x", false), d("sub", false),
	}},
	{"nested middle slash", []string{"sub", "a/b\n"}, []check{f("sub/a/b", true), f("a/b", false), f("sub/x/a/b", false)}},
	{"nested base name", []string{"sub", "foo\n"}, []check{
		f("sub/q/foo", true), f("sub/foo", true), f("foo", false), f("other/foo", false), f("subfoo", false), f("sub", false),
	}},
	{"nested does not apply to its dir", []string{"sub", "sub\n*\n"}, []check{d("sub", false), f("sub/a", true)}},
	{"nested double star", []string{"a/b", "**/x\n"}, []check{f("a/b/x", true), f("a/b/c/x", true), f("a/x", false)}},
	{"nested parent dir excluded", []string{"", "a/\n", "a", "!keep\n"}, []check{f("a/keep", true)}},
	{"same dir later file wins", []string{"", "x\n", "", "!x\n"}, []check{f("x", false)}},
	{"dot dir", []string{".", "x\n"}, []check{f("x", true)}},
	{"anchored literal prefix then double star", []string{"", "foo**/bar\n"}, []check{
		// git globs what follows an anchored pattern's literal prefix as a
		// separate pattern, so this "**" is at a boundary.
		f("foo/bar", true), f("fooX/y/bar", true), f("foobar", true),
	}},
	{"utf8 literal", []string{"", "ünïcode\n"}, []check{f("ünïcode", true), f("a/ünïcode", true), f("unicode", false)}},
}

func TestTable(t *testing.T) {
	for _, tt := range tableTests {
		t.Run(tt.name, func(t *testing.T) {
			r := build(tt.files...)
			for _, c := range tt.checks {
				if got := r.Ignored(c.path, c.isDir); got != c.want {
					m, _ := r.Explain(c.path, c.isDir)
					t.Errorf("Ignored(%q, dir=%v) = %v, want %v (files %q, match %+v)", c.path, c.isDir, got, c.want, tt.files, m)
				}
			}
		})
	}
}

func TestNil(t *testing.T) {
	var r *Rules
	if r.Ignored("a", false) || r.IgnoredEntry("a/b", true) {
		t.Fatal("nil Rules ignored something")
	}
	if _, ok := r.Explain("a", false); ok {
		t.Fatal("nil Rules explained something")
	}
	if got := r.Add("x", []byte("# only a comment\n\n")); got != nil {
		t.Fatal("Add of an empty file returned non-nil")
	}
}

func TestAddDoesNotModifyParent(t *testing.T) {
	root := build("", "*.log\n")
	a := root.Add("a", []byte("!x.log\n"))
	b := root.Add("b", []byte("y\n"))
	if !root.Ignored("a/x.log", false) {
		t.Error("parent changed by Add")
	}
	if a.Ignored("a/x.log", false) || !b.Ignored("b/x.log", false) || !b.Ignored("b/y", false) || a.Ignored("a/y", false) {
		t.Error("siblings interfere")
	}
}

func TestIgnoredEntry(t *testing.T) {
	r := build("", "foo/*\n")
	if r.IgnoredEntry("foo/bar/hello.c", false) {
		t.Error("foo/* matched foo/bar/hello.c by itself")
	}
	if !r.Ignored("foo/bar/hello.c", false) {
		t.Error("foo/bar/hello.c not ignored although foo/bar is")
	}
}

func TestExplain(t *testing.T) {
	r := build("", "# c\n*.log\n", "sub", "\n!keep.log\n")
	m, ok := r.Explain("sub/keep.log", false)
	if !ok || m.Dir != "sub" || m.Line != 2 || m.Pattern != "!keep.log" || !m.Negated {
		t.Errorf("Explain = %+v, %v", m, ok)
	}
	m, ok = r.Explain("x/a.log", false)
	if !ok || m.Dir != "" || m.Line != 2 || m.Pattern != "*.log" || m.Negated {
		t.Errorf("Explain = %+v, %v", m, ok)
	}
	if _, ok := r.Explain("x/a.txt", false); ok {
		t.Error("Explain matched a.txt")
	}
}

func TestTrimTrailingSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"a":       "a",
		"a  ":     "a",
		"a\\ ":    "a\\ ",
		"a\\  ":   "a\\ ",
		"a \\ b ": "a \\ b",
		"  ":      "",
		"a\\":     "a\\",
		"a \t ":   "a \t",
	} {
		if got := trimTrailingSpaces(in); got != want {
			t.Errorf("trimTrailingSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkIgnored(b *testing.B) {
	gitignore := strings.Join([]string{
		"# build output", "/bin/", "/dist/", "build/", "*.o", "*.so", "*.exe", "*.test",
		"*.out", "coverage.*", "node_modules/", ".DS_Store", "*.swp", "*~", ".idea/",
		".vscode/*", "!.vscode/settings.json", "/vendor/", "**/testdata/golden/*.tmp",
		"docs/_build/", "[Tt]humbs.db",
	}, "\n")
	r := build("", gitignore)
	paths := []string{
		"skills/pdf/SKILL.md", "skills/pdf/scripts/extract.py", "internal/ignore/ignore.go",
		"a/b/c/d/e/notes.txt", "cmd/loadout/main.go", "README.md",
	}
	b.Run("Ignored", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				r.Ignored(p, false)
			}
		}
	})
	b.Run("IgnoredEntry", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				r.IgnoredEntry(p, false)
			}
		}
	})
	b.Run("NoRules", func(b *testing.B) {
		var none *Rules
		for b.Loop() {
			for _, p := range paths {
				none.Ignored(p, false)
			}
		}
	})
}
