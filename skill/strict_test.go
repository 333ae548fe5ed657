package skill

import (
	"github.com/loadout/loadout/internal/pyrepr"
	"github.com/loadout/loadout/internal/testutil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const onlyAllowed = ". Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed."

// writeSkill makes root/dir/file with content and returns root/dir.
func writeSkill(t *testing.T, root, dir, file, content string) string {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func fm(lines ...string) string { return "---\n" + strings.Join(lines, "\n") + "\n---\nBody\n" }

// TestValidateRules covers every message of "skills-ref validate" in
// format.md, in the reference's order, on real folders.
func TestValidateRules(t *testing.T) {
	long65 := strings.Repeat("a", 65)
	tests := []struct {
		name    string
		dir     string
		content string
		want    []string // nil: valid
	}{
		{"valid", "my-skill", fm("name: my-skill", "description: Does things."), nil},
		{"unicode cjk", "技能", fm("name: 技能", "description: x"), nil},
		{"unicode cyrillic", "навык", fm("name: навык", "description: x"), nil},
		{"unicode cyrillic hyphen", "мой-навык", fm("name: мой-навык", "description: x"), nil},
		{"composed name composed dir", "café", fm("name: café", "description: x"), nil},
		{"decomposed name composed dir", "café", fm("name: cafe\u0301", "description: x"), nil},
		{"composed name decomposed dir", "cafe\u0301", fm("name: café", "description: x"), nil},
		{"uppercase cyrillic", "НАВЫК", fm("name: НАВЫК", "description: x"),
			[]string{"Skill name 'НАВЫК' must be lowercase"}},
		{"uppercase latin", "My-Skill", fm("name: My-Skill", "description: x"),
			[]string{"Skill name 'My-Skill' must be lowercase"}},
		{"fullwidth is NFKC'd", "abc", fm("name: ａｂｃ", "description: x"), nil},
		{"too long", long65, fm("name: "+long65, "description: x"),
			[]string{"Skill name '" + long65 + "' exceeds 64 character limit (65 chars)"}},
		{"64 is fine", long65[:64], fm("name: "+long65[:64], "description: x"), nil},
		{"hyphen edges", "-a-", fm("name: -a-", "description: x"),
			[]string{"Skill name cannot start or end with a hyphen"}},
		{"consecutive hyphens", "a--b", fm("name: a--b", "description: x"),
			[]string{"Skill name cannot contain consecutive hyphens"}},
		{"invalid chars", "a_b", fm("name: a_b", "description: x"),
			[]string{"Skill name 'a_b' contains invalid characters. Only letters, digits, and hyphens are allowed."}},
		{"every name rule at once", "x", fm("name: '-A_--"+strings.Repeat("b", 62)+"'", "description: x"), []string{
			"Skill name '-A_--" + strings.Repeat("b", 62) + "' exceeds 64 character limit (67 chars)",
			"Skill name '-A_--" + strings.Repeat("b", 62) + "' must be lowercase",
			"Skill name cannot start or end with a hyphen",
			"Skill name cannot contain consecutive hyphens",
			"Skill name '-A_--" + strings.Repeat("b", 62) + "' contains invalid characters. Only letters, digits, and hyphens are allowed.",
			"Directory name 'x' must match skill name '-A_--" + strings.Repeat("b", 62) + "'",
		}},
		{"directory mismatch", "other", fm("name: my-skill", "description: x"),
			[]string{"Directory name 'other' must match skill name 'my-skill'"}},
		{"directory match is case-sensitive", "My-skill", fm("name: my-skill", "description: x"),
			[]string{"Directory name 'My-skill' must match skill name 'my-skill'"}},
		{"name stripped", "my-skill", fm("name: '  my-skill '", "description: x"), nil},
		{"name missing", "my-skill", fm("description: x"),
			[]string{"Missing required field in frontmatter: name"}},
		{"name empty", "my-skill", fm("name:", "description: x"),
			[]string{"Field 'name' must be a non-empty string"}},
		{"name blank", "my-skill", fm("name: '   '", "description: x"),
			[]string{"Field 'name' must be a non-empty string"}},
		{"name a list", "my-skill", fm("name:", "  - a", "description: x"),
			[]string{"Field 'name' must be a non-empty string"}},
		{"description missing", "my-skill", fm("name: my-skill"),
			[]string{"Missing required field in frontmatter: description"}},
		{"description empty", "my-skill", fm("name: my-skill", "description: ''"),
			[]string{"Field 'description' must be a non-empty string"}},
		{"description a mapping", "my-skill", fm("name: my-skill", "description:", "  a: b"),
			[]string{"Field 'description' must be a non-empty string"}},
		{"description number is a string", "my-skill", fm("name: my-skill", "description: 123"), nil},
		{"description null is a string", "my-skill", fm("name: my-skill", "description: null"), nil},
		{"description 1024", "my-skill", fm("name: my-skill", "description: "+strings.Repeat("é", 1024)), nil},
		{"description too long", "my-skill", fm("name: my-skill", "description: "+strings.Repeat("é", 1025)),
			[]string{"Description exceeds 1024 character limit (1025 chars)"}},
		{"description length is raw, unstripped", "my-skill", fm("name: my-skill", "description: |", "  "+strings.Repeat("d", 1024)),
			[]string{"Description exceeds 1024 character limit (1025 chars)"}},
		{"compatibility empty passes", "my-skill", fm("name: my-skill", "description: x", "compatibility: ''"), nil},
		{"compatibility no value passes", "my-skill", fm("name: my-skill", "description: x", "compatibility:"), nil},
		{"compatibility 500", "my-skill", fm("name: my-skill", "description: x", "compatibility: "+strings.Repeat("c", 500)), nil},
		{"compatibility too long", "my-skill", fm("name: my-skill", "description: x", "compatibility: "+strings.Repeat("c", 501)),
			[]string{"Compatibility exceeds 500 character limit (501 chars)"}},
		{"compatibility a list", "my-skill", fm("name: my-skill", "description: x", "compatibility:", "  - a"),
			[]string{"Field 'compatibility' must be a string"}},
		{"optional fields unchecked", "my-skill", fm("name: my-skill", "description: x", "license:", "  - a", "allowed-tools:", "  - Bash", "metadata: text"), nil},
		{"unexpected fields sorted", "my-skill", fm("zeta: 1", "name: my-skill", "alpha: 2", "description: x", "version: 1.0"),
			[]string{"Unexpected fields in frontmatter: alpha, version, zeta" + onlyAllowed}},
		{"everything in order", "dir", fm("extra: 1", "name: Bad", "compatibility:", "  a: b"), []string{
			"Unexpected fields in frontmatter: extra" + onlyAllowed,
			"Skill name 'Bad' must be lowercase",
			"Directory name 'dir' must match skill name 'Bad'",
			"Missing required field in frontmatter: description",
			"Field 'compatibility' must be a string",
		}},
		{"merge key dropped at top", "my-skill", fm("<<:", "  x: y", "name: my-skill", "description: x"), nil},
		{"CRLF", "my-skill", "---\r\nname: my-skill\r\ndescription: x\r\n---\r\n", nil},
		{"fence with trailing blanks", "my-skill", "---  \nname: my-skill\ndescription: x\n--- \n", nil},
		{"no body", "my-skill", "---\nname: my-skill\ndescription: x\n---", nil},

		// Parse errors stop everything.
		{"no frontmatter", "my-skill", "# Title\n", []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"empty file", "my-skill", "", []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"BOM", "my-skill", "\uFEFF" + fm("name: my-skill", "description: x"), []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"leading blank line", "my-skill", "\n" + fm("name: my-skill", "description: x"), []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"unclosed", "my-skill", "---\nname: my-skill\ndescription: x\n", []string{"SKILL.md frontmatter not properly closed with ---"}},
		{"only a fence", "my-skill", "---", []string{"SKILL.md frontmatter not properly closed with ---"}},
		{"empty frontmatter", "my-skill", "---\n---\n", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"comment-only frontmatter", "my-skill", "---\n# c\n---\n", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"scalar frontmatter", "my-skill", fm("just text"), []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"list frontmatter", "my-skill", fm("- a", "- b"), []string{"SKILL.md frontmatter must be a YAML mapping"}},
	}
	root := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSkill(t, filepath.Join(root, string(rune('a'+i%26))+strings.Repeat("x", i/26)), tt.dir, "SKILL.md", tt.content)
			got, err := Validate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestValidateInvalidYAML checks what strictyaml refuses: each gives one
// "Invalid YAML in frontmatter: DETAIL" message and nothing else.
func TestValidateInvalidYAML(t *testing.T) {
	tests := map[string]string{
		"flow mapping":           "name: my-skill\ndescription: {a: b}",
		"flow sequence":          "name: my-skill\ndescription: x\nallowed-tools: [Bash, Read]",
		"nested flow":            "name: my-skill\ndescription: x\nmetadata:\n  a:\n    - [x]",
		"anchor":                 "name: &n my-skill\ndescription: x",
		"alias":                  "name: my-skill\ndescription: x\nlicense: *n",
		"tag":                    "name: !!str my-skill\ndescription: x",
		"non-specific tag":       "name: ! my-skill\ndescription: x",
		"local tag on mapping":   "name: my-skill\ndescription: x\nmetadata: !m\n  a: b",
		"duplicate key":          "name: my-skill\nname: my-skill\ndescription: x",
		"duplicate quoted key":   "name: my-skill\n\"description\": x\ndescription: y",
		"duplicate nested key":   "name: my-skill\ndescription: x\nmetadata:\n  a: 1\n  a: 2",
		"unquoted colon":         "name: my-skill\ndescription: Use when: x",
		"tab after colon":        "name:\tmy-skill\ndescription: x",
		"trailing tab":           "name: my-skill\t\ndescription: x",
		"tab indentation":        "name: my-skill\ndescription: x\nmetadata:\n\ta: b",
		"inconsistent mappings":  "name: my-skill\ndescription: x\nmetadata:\n  a:\n    b: c\n  d:\n      e: f",
		"second document":        "name: my-skill\ndescription: x\n...\nlicense: MIT",
		"bad block header":       "name: my-skill\ndescription: >#-\n  x",
		"merge of a scalar":      "<<: x\nname: my-skill\ndescription: x",
		"complex key":            "? - a\n: b\nname: my-skill\ndescription: x",
		"control character":      "name: my-skill\ndescription: \x01",
		"unclosed quote":         "name: my-skill\ndescription: \"x",
		"text after quoted text": "name: \"my-skill\" x\ndescription: x",
	}
	root := t.TempDir()
	i := 0
	for name, front := range tests {
		i++
		t.Run(name, func(t *testing.T) {
			dir := writeSkill(t, filepath.Join(root, strings.Repeat("d", i)), "my-skill", "SKILL.md", "---\n"+front+"\n---\n")
			got, err := Validate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], "Invalid YAML in frontmatter: ") || len(got[0]) == len("Invalid YAML in frontmatter: ") {
				t.Errorf("Validate = %q, want one Invalid YAML message", got)
			}
		})
	}
}

// TestValidateTabsAllowed: tabs inside quotes, block scalars and comments
// are text, as in strictyaml.
func TestValidateTabsAllowed(t *testing.T) {
	for _, front := range []string{
		"name: my-skill\ndescription: \"a\tb\"",
		"name: my-skill\ndescription: 'a\tb'",
		"name: my-skill\ndescription: |\n  a\tb\n   \tc",
		"name: my-skill # a\tcomment\ndescription: x",
		"# \t\nname: my-skill\ndescription: x",
	} {
		dir := writeSkill(t, t.TempDir(), "my-skill", "SKILL.md", "---\n"+front+"\n---\n")
		if got, err := Validate(dir); err != nil || got != nil {
			t.Errorf("%q: Validate = %q, %v; want valid", front, got, err)
		}
	}
}

func TestValidatePaths(t *testing.T) {
	root := t.TempDir()
	good := fm("name: my-skill", "description: x")
	dir := writeSkill(t, root, "my-skill", "SKILL.md", good)

	// A path to the SKILL.md file means its folder.
	if got, err := Validate(filepath.Join(dir, "SKILL.md")); err != nil || got != nil {
		t.Errorf("file path: %q, %v", got, err)
	}
	if got := RefSkillDir(filepath.Join(dir, "SKILL.md")); got != dir {
		t.Errorf("RefSkillDir(file) = %q, want %q", got, dir)
	}

	// skill.md is accepted; SKILL.md preferred.
	low := writeSkill(t, root, "low", "skill.md", fm("name: low", "description: x"))
	if got, err := Validate(low); err != nil || got != nil {
		t.Errorf("skill.md: %q, %v", got, err)
	}
	if got, err := Validate(filepath.Join(low, "skill.md")); err != nil || got != nil {
		t.Errorf("skill.md file path: %q, %v", got, err)
	}
	both := writeSkill(t, root, "both", "SKILL.md", fm("name: both", "description: x"))
	writeSkill(t, root, "both", "skill.md", "broken")
	if got, err := Validate(both); err != nil || got != nil {
		t.Errorf("SKILL.md preferred: %q, %v", got, err)
	}

	empty := filepath.Join(root, "empty")
	testutil.Must(t, os.Mkdir(empty, 0o755))
	want := map[string][]string{
		empty:                       {"Missing required file: SKILL.md"},
		filepath.Join(root, "nope"): {"Path does not exist: " + filepath.Join(root, "nope")},
		dir + "//":                  nil, // printed as pathlib would: no trailing slashes
	}
	other := filepath.Join(root, "notes.txt")
	testutil.Write(t, other, "x")
	want[other] = []string{"Not a directory: " + other}
	for p, w := range want {
		got, err := Validate(p)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("Validate(%q) = %q, %v; want %q", p, got, err, w)
		}
	}

	// The entry file must be readable UTF-8; the reference crashes, we
	// return an error.
	bin := writeSkill(t, root, "bin", "SKILL.md", "---\nname: bin\ndescription: \xff\n---\n")
	if got, err := Validate(bin); err == nil {
		t.Errorf("invalid UTF-8: %q, want an error", got)
	}
	dirEntry := filepath.Join(root, "direntry")
	testutil.Must(t, os.MkdirAll(filepath.Join(dirEntry, "SKILL.md"), 0o755))
	if got, err := Validate(dirEntry); err == nil {
		t.Errorf("SKILL.md folder: %q, want an error", got)
	}
}

// TestValidateDot: "." and ".." name the real folder, not "" or "..".
func TestValidateDot(t *testing.T) {
	dir := writeSkill(t, t.TempDir(), "my-skill", "SKILL.md", fm("name: my-skill", "description: x"))
	wd, _ := os.Getwd()
	t.Cleanup(func() { testutil.Must(t, os.Chdir(wd)) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if got, err := Validate("."); err != nil || got != nil {
		t.Errorf(`Validate(".") = %q, %v`, got, err)
	}
	if got, err := Validate("SKILL.md"); err != nil || got != nil {
		t.Errorf(`Validate("SKILL.md") = %q, %v`, got, err)
	}
	if got := RefSkillDir("SKILL.md"); got != "." {
		t.Errorf(`RefSkillDir("SKILL.md") = %q`, got)
	}
}

func TestRefPath(t *testing.T) {
	for in, want := range map[string][3]string{ // clean, name, parent
		"":          {".", "", "."},
		".":         {".", "", "."},
		"./a//b/":   {"a/b", "b", "a"},
		"a":         {"a", "a", "."},
		"/":         {"/", "", "/"},
		"/a":        {"/a", "a", "/"},
		"//a/b":     {"//a/b", "b", "//a"},
		"///a":      {"/a", "a", "/"},
		"a/../b":    {"a/../b", "b", "a/.."},
		"../x/./y/": {"../x/y", "y", "../x"},
	} {
		got := [3]string{refPathClean(in), refPathName(refPathClean(in)), refPathParent(in)}
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestParseStrictValues(t *testing.T) {
	got, err := ParseStrict([]byte(`---
name: my-skill
description: 123
a: yes
b: 1.0
c: ~
d:
e: "x\u00e9"
f: |
  l1
  l2
g:
  - one
  - k: v
h:
  <<:
    m: merged
    i: lost
  i: own
? j
: explicit
: empty key
---
body --- with dashes
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Fields{
		{"name", "my-skill"}, {"description", "123"}, {"a", "yes"}, {"b", "1.0"}, {"c", "~"}, {"d", ""},
		{"e", "xé"}, {"f", "l1\nl2\n"},
		{"g", []any{"one", Fields{{"k", "v"}}}},
		{"h", Fields{{"i", "own"}, {"m", "merged"}}},
		{"j", "explicit"}, {"", "empty key"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseStrict:\n got %#v\nwant %#v", got, want)
	}
}

func TestReadProperties(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "my-skill", "SKILL.md", fm(
		"name: '  my-skill  '",
		"description: |",
		"  Café <b> & \"q\" 'x' 😀",
		"  second line",
		"license: ''",
		"allowed-tools:",
		"  - Bash",
		"  - Read",
		"metadata:",
		"  version: 1.0",
		"  tags:",
		"    - a",
		"    - \"it's\"",
		"  nested:",
		"    k: v",
		"  ctl: \"\\t\\x7f\\u00a0/\"",
		"extra: ignored",
	))
	p, err := ReadProperties(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "name": "my-skill",
  "description": "Caf\u00e9 <b> & \"q\" 'x' \ud83d\ude00\nsecond line",
  "license": "",
  "allowed-tools": [
    "Bash",
    "Read"
  ],
  "metadata": {
    "version": "1.0",
    "tags": "['a', \"it's\"]",
    "nested": "{'k': 'v'}",
    "ctl": "\t\u007f\u00a0/"
  }
}`
	if got := p.JSON(); got != want {
		t.Errorf("JSON:\n%s\nwant\n%s", got, want)
	}

	// Empty metadata and absent fields are left out; metadata that is
	// text is printed as it is.
	for content, want := range map[string]string{
		fm("name: a", "description: b", "metadata: ''"):                     "{\n  \"name\": \"a\",\n  \"description\": \"b\"\n}",
		fm("name: a", "description: b", "metadata: text"):                   "{\n  \"name\": \"a\",\n  \"description\": \"b\",\n  \"metadata\": \"text\"\n}",
		fm("name: a", "description: b", "compatibility: x", "license: MIT"): "{\n  \"name\": \"a\",\n  \"description\": \"b\",\n  \"license\": \"MIT\",\n  \"compatibility\": \"x\"\n}",
	} {
		d := writeSkill(t, t.TempDir(), "a", "SKILL.md", content)
		p, err := ReadProperties(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.JSON(); got != want {
			t.Errorf("%q:\n%s\nwant\n%s", content, got, want)
		}
	}

	errs := map[string]string{
		fm("description: x"):             "Missing required field in frontmatter: name",
		fm("name: x"):                    "Missing required field in frontmatter: description",
		fm("name: ''", "description: x"): "Field 'name' must be a non-empty string",
		fm("name: x", "description:"):    "Field 'description' must be a non-empty string",
		"no frontmatter":                 "SKILL.md must start with YAML frontmatter (---)",
	}
	for content, want := range errs {
		d := writeSkill(t, t.TempDir(), "a", "SKILL.md", content)
		if _, err := ReadProperties(d); err == nil || err.Error() != want {
			t.Errorf("%q: err %v, want %q", content, err, want)
		}
	}
	empty := t.TempDir()
	if _, err := ReadProperties(empty); err == nil || err.Error() != "SKILL.md not found in "+empty {
		t.Errorf("no SKILL.md: %v", err)
	}
}

func TestToPrompt(t *testing.T) {
	root := t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	a := writeSkill(t, root, "a", "SKILL.md", fm("name: a", "description: \"Use <x> & 'y' \\\"z\\\"\"", "extra: not validated"))
	writeSkill(t, root, "b", "skill.md", fm("name: b", "description: '  lower  '"))
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := ToPrompt([]string{filepath.Join(a, "SKILL.md"), filepath.Join(root, "link")})
	if err != nil {
		t.Fatal(err)
	}
	want := "<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\nUse &lt;x&gt; &amp; &#x27;y&#x27; &quot;z&quot;\n</description>\n<location>\n" +
		real + "/a/SKILL.md\n</location>\n</skill>\n<skill>\n<name>\nb\n</name>\n<description>\nlower\n</description>\n<location>\n" +
		real + "/b/skill.md\n</location>\n</skill>\n</available_skills>"
	if got != want {
		t.Errorf("ToPrompt:\n%s\nwant\n%s", got, want)
	}
	if got, _ := ToPrompt(nil); got != "<available_skills>\n</available_skills>" {
		t.Errorf("ToPrompt(nil) = %q", got)
	}
	empty := filepath.Join(root, "empty")
	testutil.Must(t, os.Mkdir(empty, 0o755))
	if _, err := ToPrompt([]string{a, empty}); err == nil || err.Error() != "SKILL.md not found in "+filepath.Join(real, "empty") {
		t.Errorf("ToPrompt with a bad skill: %v", err)
	}
}

func TestPyHelpers(t *testing.T) {
	if got := pyHTMLEscape(`<a href="x">'&'</a>`); got != "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;" {
		t.Errorf("pyHTMLEscape = %q", got)
	}
	for in, want := range map[string]string{
		"a":             "'a'",
		"it's":          `"it's"`,
		`both ' "`:      `'both \' "'`,
		"t\tn\n\x01\\":  `'t\tn\n\x01\\'`,
		"é\u00a0\u200b": `'é\xa0\u200b'`,
	} {
		if got := pyrepr.String(in); got != want {
			t.Errorf("pyrepr.String(%q) = %s, want %s", in, got, want)
		}
	}
	if got := pyStrip("\x1c\u3000 x \t\u00a0"); got != "x" {
		t.Errorf("pyStrip = %q", got)
	}
}

// FuzzParseStrict feeds arbitrary SKILL.md text to the strict parser and
// the checks after it: they must never panic, and what parses must be a
// mapping of strings, lists and mappings.
func FuzzParseStrict(f *testing.F) {
	f.Add([]byte(fm("name: my-skill", "description: x")))
	f.Add([]byte("---\na: |\n  x\ty\n---\n"))
	f.Add([]byte("---\n<<:\n  a: b\nm:\n  <<:\n    - c: d\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseStrict(data)
		if err != nil {
			return
		}
		checkStrictValue(t, got)
		ValidateFields(got, "dir")
		if p, err := propertiesOf(got); err == nil {
			_ = p.JSON()
		}
	})
}

func checkStrictValue(t *testing.T, v any) {
	switch x := v.(type) {
	case string:
	case []any:
		for _, e := range x {
			checkStrictValue(t, e)
		}
	case Fields:
		for _, kv := range x {
			checkStrictValue(t, kv.Value)
		}
	default:
		t.Fatalf("unexpected value %T", v)
	}
}
