package skill

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func codesOf(ds []Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, string(d.Severity)+" "+d.Code)
	}
	return out
}

func TestParseLenient(t *testing.T) {
	cases := []struct {
		name, dir, text string
		ok              bool
		wantName        string
		wantDesc        string
		codes           []string
	}{
		{"plain", "pdf", "---\nname: pdf\ndescription: Fill PDFs.\n---\nbody", true, "pdf", "Fill PDFs.", []string{}},
		{"crlf", "pdf", "---\r\nname: pdf\r\ndescription: Fill PDFs.\r\n---\r\nbody\r\n", true, "pdf", "Fill PDFs.", []string{}},
		{"bom", "pdf", "\uFEFF---\nname: pdf\ndescription: d\n---\n", true, "pdf", "d", []string{"warning bom"}},
		{"no frontmatter", "x", "# just markdown\n", false, "", "", []string{"error frontmatter-missing"}},
		{"unclosed", "x", "---\nname: x\ndescription: d\n", false, "", "", []string{"error frontmatter-unclosed"}},
		{"fence must be at line start", "x", "---\nname: x\ndescription: \"a --- b\"\n---\n", true, "x", "a --- b", []string{}},
		{"missing description", "x", "---\nname: x\n---\n", false, "", "", []string{"error description-missing"}},
		{"empty description", "x", "---\nname: x\ndescription: \"  \"\n---\n", false, "", "", []string{"error description-missing"}},
		{"null description", "x", "---\nname: x\ndescription:\n---\n", false, "", "", []string{"error description-missing"}},
		{"list description", "x", "---\nname: x\ndescription: [a, b]\n---\n", false, "", "", []string{"error description-missing"}},
		{"number description is text", "x", "---\nname: x\ndescription: 123\n---\n", true, "x", "123", []string{}},
		{"missing name falls back", "my-dir", "---\ndescription: d\n---\n", true, "my-dir", "d", []string{"warning name-missing"}},
		{"map name falls back", "my-dir", "---\nname: {a: b}\ndescription: d\n---\n", true, "my-dir", "d", []string{"warning field-type"}},
		{"name mismatch loads", "dir", "---\nname: other\ndescription: d\n---\n", true, "other", "d", []string{"warning name-mismatch"}},
		{"bad chars load", "Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\n", true, "Bad_Name", "d", []string{"warning name-invalid-chars"}},
		{"hyphens", "-a--b-", "---\nname: -a--b-\ndescription: d\n---\n", true, "-a--b-", "d", []string{"warning name-hyphen-edge", "warning name-consecutive-hyphens"}},
		{"long name", strings.Repeat("a", 65), "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", true, strings.Repeat("a", 65), "d", []string{"warning name-too-long"}},
		{"unicode name", "навык", "---\nname: навык\ndescription: d\n---\n", true, "навык", "d", []string{}},
		{"decomposed name matches composed dir", "caf\u00e9", "---\nname: cafe\u0301\ndescription: d\n---\n", true, "cafe\u0301", "d", []string{}},
		{"long description loads", "x", "---\nname: x\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", true, "x", strings.Repeat("é", 1025), []string{"warning description-too-long"}},
		{"colon retry", "x", "---\nname: x\ndescription: Use when: the user asks\n---\n", true, "x", "Use when: the user asks", []string{"warning yaml-quoted-retry"}},
		{"hopeless yaml", "x", "---\nname: x\ndescription: d\n  bad: [\n---\n", false, "", "", []string{"error yaml-invalid"}},
		{"not a mapping", "x", "---\n- a\n- b\n---\n", false, "", "", []string{"error frontmatter-not-map"}},
		{"wrong type tags", "x", "---\nname: x\ndescription: d\ntags: {a: b}\n---\n", true, "x", "d", []string{"warning field-type"}},
		{"wrong type disable", "x", "---\nname: x\ndescription: d\ndisable-model-invocation: maybe\n---\n", true, "x", "d", []string{"warning field-type"}},
		{"long compatibility", "x", "---\nname: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", true, "x", "d", []string{"warning compatibility-too-long"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, diags, ok := Parse([]byte(c.text), "/s/"+c.dir+"/SKILL.md", c.dir)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v; diags %v", ok, c.ok, diags)
			}
			if diff := cmp.Diff(c.codes, codesOf(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\n%v", diff, diags)
			}
			for _, d := range diags {
				if d.Path != "/s/"+c.dir+"/SKILL.md" || d.Message == "" {
					t.Errorf("diagnostic without path or message: %+v", d)
				}
			}
			if !ok {
				return
			}
			if doc.Name != c.wantName || doc.Description != c.wantDesc {
				t.Errorf("name, description = %q, %q; want %q, %q", doc.Name, doc.Description, c.wantName, c.wantDesc)
			}
		})
	}
}

func TestParseKeepsEveryField(t *testing.T) {
	text := `---
name: deploy
description: Deploy it.
version: 1.0
tags: [deployment, ops]
category: ops
requires-tools: bash, read_file
allowed-tools: Bash(git:*) Read
license: MIT
metadata:
  author: me
  yes: yes
disable-model-invocation: true
when_to_use: on Fridays
hooks:
  pre: [a, b]
---
# Body
`
	doc, diags, ok := Parse([]byte(text), "p", "deploy")
	if !ok || len(diags) != 0 {
		t.Fatalf("ok=%v diags=%v", ok, diags)
	}
	fm := doc.Frontmatter
	if fm.Version != "1.0" || fm.Category != "ops" || fm.License != "MIT" || !fm.DisableModelInvocation {
		t.Errorf("typed fields wrong: %+v", fm)
	}
	if diff := cmp.Diff([]string{"deployment", "ops"}, fm.Tags); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"bash", "read_file"}, fm.RequiresTools); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"Bash(git:*)", "Read"}, fm.AllowedTools); diff != "" {
		t.Error(diff)
	}
	if fm.Metadata["yes"] != "yes" {
		t.Errorf("metadata yes = %q", fm.Metadata["yes"])
	}
	raw, _ := json.Marshal(fm.Raw)
	want := `{"name":"deploy","description":"Deploy it.","version":"1.0","tags":["deployment","ops"],"category":"ops","requires-tools":"bash, read_file","allowed-tools":"Bash(git:*) Read","license":"MIT","metadata":{"author":"me","yes":"yes"},"disable-model-invocation":"true","when_to_use":"on Fridays","hooks":{"pre":["a","b"]}}`
	if string(raw) != want {
		t.Errorf("raw =\n%s\nwant\n%s", raw, want)
	}
	var back Fields
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fm.Raw, back); diff != "" {
		t.Errorf("raw JSON round trip (-want +got):\n%s", diff)
	}
	if doc.Body != "# Body\n" {
		t.Errorf("body = %q", doc.Body)
	}
}

func TestSplit(t *testing.T) {
	front, body, bom, err := Split([]byte("---\r\na: 1\r\n---  \r\nx\ry\n"))
	if err != nil || bom || front != "a: 1\n" || body != "x\ny\n" {
		t.Errorf("Split = %q %q %v %v", front, body, bom, err)
	}
	if _, _, _, err := Split([]byte("---")); err == nil {
		t.Error("a lone fence should be unclosed")
	}
	front, body, _, err = Split([]byte("---\n---"))
	if err != nil || front != "" || body != "" {
		t.Errorf("empty frontmatter: %q %q %v", front, body, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nbody"), "a")
	f.Add([]byte("\uFEFF---\r\nname: x\r\ndescription: Use when: y\r\n---\r\n"), "x")
	f.Add([]byte("---\nname: &a x\ndescription: *a\ntags: [1, {b: c}]\n---\n"), "x")
	f.Add([]byte("---\n- a\n---\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		doc, diags, ok := Parse(data, "SKILL.md", dir)
		if ok {
			if doc == nil || strings.TrimSpace(doc.Description) == "" {
				t.Fatalf("ok with no description: %+v", doc)
			}
			if doc.Name == "" && dir != "" {
				t.Fatalf("ok with no name")
			}
			if _, err := json.Marshal(doc.Raw); err != nil {
				t.Fatalf("raw does not marshal: %v", err)
			}
			for _, r := range doc.Name {
				if isControl(r, false) || isInvisible(r) {
					t.Fatalf("loaded a name with %U: %q", r, doc.Name)
				}
			}
		}
		for _, d := range diags {
			if d.Code == "" || d.Message == "" || d.Severity == "" {
				t.Fatalf("incomplete diagnostic %+v", d)
			}
		}
	})
}

// FuzzFastYAML checks the fast frontmatter path against the real decoder:
// whenever the fast path accepts a text, both must give the same fields,
// values, kinds and lines.
func FuzzFastYAML(f *testing.F) {
	for _, s := range []string{
		"name: a\ndescription: b\n",
		"name: 'it''s'\ndescription: \"q\"\ntags: [a, b, c]\n",
		"tags:\n  - a\n  - b\nmetadata:\n  author: x\n  version: 1.0\n",
		"a: ~\nb: null\nc:\nd: yes\ne: 0x1F\n",
		"# comment\nname: x # not a comment?\n",
		"name: a:b\nurl: http://x\n",
		"k: [a, 'b']\nl: []\n",
		"list:\n- a\n- b\nafter: 1\n",
		"m:\n  a: 1\n    b: 2\n",
		"k: -x\nk2: - x\n",
		"k: v\n\n\n#c\nj: w\n",
		"d: >-\n  one\n  two\n\n  three\nn: x\n",
		"d: |\n  a\n   b\n",
		"d: >\n  a\n\n\n  b\n\n",
		"d: |-\n  # not a comment\n  x  \n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fast, ok := fastNode(text)
		if !ok {
			return
		}
		full, err := decodeFull(text)
		if err != nil {
			t.Fatalf("fast path accepted what YAML rejects (%v):\n%q", err, text)
		}
		if full == nil || full.Kind != yaml.MappingNode {
			t.Fatalf("fast path made a mapping of a non-mapping:\n%q", text)
		}
		if d := cmp.Diff(describe(full), describe(fast)); d != "" {
			t.Fatalf("fast path differs from YAML for %q (-yaml +fast):\n%s", text, d)
		}
	})
}

// describe reduces a node to what Parse uses of it.
func describe(n *yaml.Node) []string {
	var out []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		null := n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Style == 0
		out = append(out, fmt.Sprintf("%s kind=%d null=%v line=%d value=%q", path, n.Kind, null, n.Line, map[bool]string{true: "", false: n.Value}[null || n.Kind != yaml.ScalarNode]))
		for i, c := range n.Content {
			walk(c, fmt.Sprintf("%s/%d", path, i))
		}
	}
	walk(n, "")
	return out
}

func TestFieldsUnmarshalJSONDepth(t *testing.T) {
	var f Fields
	deep := `{"a":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`
	// json.Unmarshal validates (and so bounds) first; a direct call must
	// be bounded too.
	if err := f.UnmarshalJSON([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("too deep: %v", err)
	}
	ok := `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	if err := json.Unmarshal([]byte(ok), &f); err != nil {
		t.Errorf("100 deep: %v", err)
	}
}

// TestYAMLErrorLinesAndHint: YAML errors name the line of the file (an
// unclosed flow list on line 5 used to be reported as line 4, since the
// library counts parser errors from 0), and the advice to quote a value
// appears only when a value needs quoting, naming it.
func TestYAMLErrorLinesAndHint(t *testing.T) {
	const head = "---\nname: x\ndescription: d\nlicense: mit\n"
	cases := []struct {
		name, text, want string
		hint             bool
	}{
		{"unclosed flow list", head + "tags: [a, b\n---\nbody\n", "line 5: did not find expected ',' or ']'", false},
		{"unclosed flow list then a field", head + "tags: [a, b\nfoo: bar\n---\nbody\n", "line 5: did not find expected ',' or ']'", false},
		{"unclosed flow map", head + "tags: {a: b\n---\nbody\n", "line 5: did not find expected ',' or '}'", false},
		{"bad indentation", head + "  bad: indent\n---\nbody\n", "line 5: mapping values are not allowed", false},
		{"unclosed quote", head + "tags: \"abc\n---\nbody\n", "line 5: found unexpected end of stream", false},
		{"block sequence without key", head + "- a\n---\nbody\n", "line 5: did not find expected key", false},
		{"colon in a value", "---\nname: x\ndescription: d\nlicense: a: b: [c\ntags: [a\n---\nbody\n", `the value of "license" on line 4 contains ": "`, true},
		{"reserved start", "---\nname: x\ndescription: d\nlicense: @mit\n---\nbody\n", `the value of "license" on line 4 starts with "@"`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ds, ok := Parse([]byte(tc.text), "p/SKILL.md", "p")
			if ok || len(ds) == 0 || ds[0].Code != CodeYAMLInvalid {
				t.Fatalf("want a yaml-invalid error, got ok=%v %+v", ok, ds)
			}
			msg := ds[0].Message
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not contain %q", msg, tc.want)
			}
			if hint := strings.Contains(msg, "double quotes"); hint != tc.hint {
				t.Errorf("quoting hint present = %v, want %v: %s", hint, tc.hint, msg)
			}
		})
	}
}

// TestParseHeaderTransient: the fast parser's node slab is reused from
// one SKILL.md to the next, and ParseHeaderTransient leaves the fields in
// the frontmatter's text. A Document parsed earlier must not change when
// later ones are parsed, and the two parses must agree field for field.
func TestParseHeaderTransient(t *testing.T) {
	docs := []string{
		"---\nname: alpha\ndescription: Does alpha things.\nversion: 1.2.3\ntags:\n  - one\n  - two\nmetadata:\n  owner: team-a\n  category: ops\n---\nbody\n",
		"---\nname: Beta_Bad\ndescription: >\n  Folded text\n  over lines.\nallowed-tools: [Read, Write]\nrequires-tools: [Bash]\n---\n",
		"---\nname: gamma\ndescription: 'quoted: with colon'\nlicense: MIT\ncompatibility: needs git\nx-extra: {a: 1}\n---\n",
		"---\nname: delta\ndescription: \"the second\"\nunknown: [a, b, c]\ncategory: dev\n---\n",
	}
	// What each holds, written out: the parses below are compared with
	// each other, and with these.
	wantName := []string{"alpha", "Beta_Bad", "gamma", "delta"}
	wantDesc := []string{"Does alpha things.", "Folded text over lines.\n", "quoted: with colon", "the second"}
	wantKeys := []int{5, 4, 5, 4}
	type parsed struct {
		doc   *Document
		diags []Diagnostic
		ok    bool
	}
	var early []parsed
	for i, text := range docs {
		doc, diags, ok := ParseHeaderTransient([]byte(text), "x/SKILL.md", "dir")
		early = append(early, parsed{doc, diags, ok})
		// Parse the others in between, reusing the pooled nodes.
		for j := range docs {
			if j != i {
				ParseHeader([]byte(docs[j]), "y/SKILL.md", "other")
			}
		}
	}
	for i, text := range docs {
		want, wantDiags, wantOK := ParseHeader([]byte(text), "x/SKILL.md", "dir")
		got := early[i]
		if !got.ok || got.doc.Name != wantName[i] || got.doc.Description != wantDesc[i] || len(got.doc.Raw) != wantKeys[i] {
			t.Errorf("doc %d: got ok=%v name %q description %q and %d keys, want %q %q %d", i, got.ok, got.doc.Name, got.doc.Description, len(got.doc.Raw), wantName[i], wantDesc[i], wantKeys[i])
			continue
		}
		if got.ok != wantOK || !reflect.DeepEqual(got.doc, want) || !reflect.DeepEqual(got.diags, wantDiags) {
			t.Errorf("doc %d: transient parse, made before the others,\n got %+v %+v %v\nwant %+v %+v %v", i, got.doc, got.diags, got.ok, want, wantDiags, wantOK)
		}
	}
}
