package skill

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func typedJSON(t testing.TB, md string) (string, error) {
	t.Helper()
	fs, err := TypedFrontmatter([]byte(md))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(fs)
	if err != nil {
		t.Fatalf("typed frontmatter does not marshal: %v", err)
	}
	return string(b), nil
}

// TestTypedFrontmatter: scalars are typed by the YAML 1.2 core schema as
// the MCP skills clients type them, in key order, nothing added.
func TestTypedFrontmatter(t *testing.T) {
	for _, tc := range []struct{ front, want string }{
		{"name: a\ndescription: b\n", `{"name":"a","description":"b"}`},
		// nothing is injected: no name stays no name
		{"description: only this\n", `{"description":"only this"}`},
		{"", `{}`},
		// null
		{"a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: nULL\n", `{"a":null,"b":null,"c":null,"d":null,"e":null,"f":"nULL"}`},
		// booleans, only the three spellings each
		{"a: true\nb: True\nc: TRUE\nd: false\ne: False\nf: FALSE\ng: yes\nh: no\ni: on\nj: tRUE\n",
			`{"a":true,"b":true,"c":true,"d":false,"e":false,"f":false,"g":"yes","h":"no","i":"on","j":"tRUE"}`},
		// integers: decimal whatever the zeros, 0o octal, 0x hexadecimal
		{"a: 1\nb: -2\nc: +3\nd: 014\ne: 0o14\nf: 0x1F\ng: 0xff\nh: 0X1F\ni: 0b101\nj: 1_000\nk: 0o8\nl: -0x1\n",
			`{"a":1,"b":-2,"c":3,"d":14,"e":12,"f":31,"g":255,"h":"0X1F","i":"0b101","j":"1_000","k":"0o8","l":"-0x1"}`},
		// floats
		{"a: 1.0\nb: 1.5\nc: .5\nd: 1.\ne: 1e3\nf: -2.5E-1\ng: +.5\nh: 1e-400\ni: 1.2.3\n",
			`{"a":1,"b":1.5,"c":0.5,"d":1,"e":1000,"f":-0.25,"g":0.5,"h":0,"i":"1.2.3"}`},
		{"big: 123456789012345678901234567890\nhex: 0xFFFFFFFFFFFFFFFFFFFF\n", `{"big":1.2345678901234568e+29,"hex":1.2089258196146292e+24}`},
		// +.nan is not the core schema's NaN: a string
		{"a: +.nan\n", `{"a":"+.nan"}`},
		// quoted, literal and folded scalars are strings
		{"a: \"true\"\nb: '1.0'\nc: \"\"\nd: ''\ne: |\n  1.0\nf: >-\n  null\n  x\n", `{"a":"true","b":"1.0","c":"","d":"","e":"1.0\n","f":"null x"}`},
		// sequences and mappings, typed all the way down, in order
		{"tags: [a, 1, true, null, \"2\"]\nmetadata:\n  z: 1\n  a:\n    - x\n    - 2.5\n  m: {k: v, n: 0}\n",
			`{"tags":["a",1,true,null,"2"],"metadata":{"z":1,"a":["x",2.5],"m":{"k":"v","n":0}}}`},
		{"list:\n- a\n- b: 1\n  c: two\n", `{"list":["a",{"b":1,"c":"two"}]}`},
		// quoted keys may be anything; plain keys that read as strings
		{"\"1\": a\n'true': b\nc d: e\n", `{"1":"a","true":"b","c d":"e"}`},
		// comments, plain values over several lines, URLs
		{"# c\nname: x # trailing\ndescription: one\n  two\n\n  three\nurl: http://a.b/c:d\n",
			`{"name":"x","description":"one two\nthree","url":"http://a.b/c:d"}`},
		{"a: \"it's \\\"q\\\" \\u00e9\"\nb: 'it''s'\nc: [\"x, y\", 'z]']\n", `{"a":"it's \"q\" é","b":"it's","c":["x, y","z]"]}`},
		{"a: [it's, b]\n", `{"a":["it's","b"]}`},
	} {
		got, err := typedJSON(t, "---\n"+tc.front+"---\nbody\n")
		if err != nil {
			t.Errorf("%q: %v", tc.front, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q\n got %s\nwant %s", tc.front, got, tc.want)
		}
	}
}

// TestTypedFrontmatterSplit: the file is split as the clients split it.
func TestTypedFrontmatterSplit(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"\uFEFF---\r\nname: x\r\ndescription: y\r\n---\r\nbody\r\n", `{"name":"x","description":"y"}`},
		{"---\nname: x\n---   \nbody\n---\nmore\n", `{"name":"x"}`},
		{"---\n---\n", `{}`},
	} {
		got, err := typedJSON(t, tc.md)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %s, %v; want %s", tc.md, got, err, tc.want)
		}
	}
}

// TestTypedFrontmatterRefused: what the MCP skills clients refuse is
// refused, with the line in SKILL.md and what to do.
func TestTypedFrontmatterRefused(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"--- \nname: x\n---\n", `line 1: SKILL.md must begin with a line holding only "---"`},
		{"name: x\n", `line 1: SKILL.md must begin`},
		{"---\nname: x\n", `no closing "---" line`},
		{"---\nname: x\rdescription: y\n---\n", "line 2: a carriage return"},
		{"---\na: .inf\n---\n", `line 2: ".inf" is a number JSON cannot hold: quote it`},
		{"---\na: -.Inf\n---\n", `"-.Inf" is a number JSON cannot hold`},
		{"---\na: .NaN\n---\n", `".NaN" is a number JSON cannot hold`},
		{"---\na: 1e400\n---\n", `"1e400" is a number JSON cannot hold`},
		{"---\nname: x\ntags: [1, .nan]\n---\n", `line 3: ".nan" is a number`},
		{"---\n1: a\n---\n", `line 2: the key "1" is read as a number, not a string: quote it`},
		{"---\ntrue: a\n---\n", `the key "true" is read as a boolean`},
		{"---\n~: a\n---\n", `the key "~" is read as a null`},
		{"---\nm: {1.5: a}\n---\n", `the key "1.5" is read as a number`},
		{"---\n__proto__: a\n---\n", `"__proto__" is refused`},
		{"---\na: 1\na: 2\n---\n", `line 3: duplicate key "a"`},
		{"---\na: &x 1\nb: *x\n---\n", "anchors and aliases"},
		{"---\na: !!str 1\n---\n", "tags such as !!str"},
		{"---\na: \"one\n  two\"\n---\n", "line 2: a quoted value must close on the line it opens"},
		{"---\na: [x,\n  y]\n---\n", "line 2: a flow collection ([...] or {...}) must close on the line it opens"},
		{"---\na: [x: y]\n---\n", "a mapping inside a flow list"},
		{"---\na: [x, {}, \"]\"\n  ]\n---\n", "must close on the line"},
		{"---\na: |2\n   x\n---\n", "block scalar indentation indicators"},
		{"---\na: {b: }\n---\n", "an empty value in a flow collection"},
		{"---\n- a\n---\n", "must be a block mapping"},
		{"---\n{a: b}\n---\n", "must be a block mapping"},
		// the quoting retry loadout's lenient reader makes is not YAML to a client
		{"---\nname: x\ndescription: Use when: y\n---\n", "not valid YAML: line 3: mapping values are not allowed"},
		{"---\na: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n", "nest more than 32 deep"},
	} {
		_, err := TypedFrontmatter([]byte(tc.md))
		var te *TypedError
		if !errors.As(err, &te) {
			t.Errorf("%q: got %v, want a *TypedError", tc.md, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.md, err, tc.want)
		}
	}
	if _, err := TypedFrontmatter([]byte("---\na: " + strings.Repeat("x", MaxFrontmatterBytes) + "\n---\n")); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("an oversized frontmatter: %v", err)
	}
}

// TestTypedFrontmatterHead: a head of TypedHeadBytes is enough.
func TestTypedFrontmatterHead(t *testing.T) {
	md := "---\nname: x\ndescription: " + strings.Repeat("y", MaxFrontmatterBytes-40) + "\n---\n" + strings.Repeat("body\n", 1<<16)
	if _, err := TypedFrontmatter([]byte(md)[:TypedHeadBytes]); err != nil {
		t.Fatal(err)
	}
}

// FuzzTypedFrontmatter: whatever the input, TypedFrontmatter does not
// panic, gives JSON that round-trips, or a *TypedError; and a frontmatter
// it types is one the lenient reader loads without the quoting retry.
func FuzzTypedFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\nversion: 1.0\ntags: [a, 1, true]\n---\nbody",
		"---\na: .inf\nb: 014\nc: 0o7\nd: 0x1F\ne: ~\n---\n",
		"\uFEFF---\r\nname: x\r\ndescription: Use when: y\r\n---\r\n",
		"---\nname: &a x\ndescription: *a\nm: {b: [c, {d: e}]}\n---\n",
		"---\n'1': a\n1: b\n---\n",
		"---\nd: >-\n  one\n  two\n\n  three\ne: |+\n  x\n\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := TypedFrontmatter(data)
		if err != nil {
			var te *TypedError
			if !errors.As(err, &te) || te.Msg == "" {
				t.Fatalf("error %v is not a *TypedError with a message", err)
			}
			return
		}
		b, err := json.Marshal(fs)
		if err != nil {
			t.Fatalf("typed frontmatter does not marshal: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("typed frontmatter is not a JSON object: %v: %s", err, b)
		}
		if _, diags, _ := Parse(data, "SKILL.md", ""); hasCode(diags, CodeYAMLQuoted) {
			t.Fatalf("typed a frontmatter that loads only after quoting: %q", data)
		}
	})
}

func hasCode(ds []Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// BenchmarkTypedFrontmatter types a typical SKILL.md frontmatter (the one
// skills/list serves for each skill, once per loaded skill).
func BenchmarkTypedFrontmatter(b *testing.B) {
	md := []byte("---\nname: pdf-forms\ndescription: Fill in PDF forms and check their fields. Use when the user hands you a PDF form.\n" +
		"license: MIT\nversion: 1.0\ntags: [pdf, forms, 1, true]\nallowed-tools: Bash Read\nmetadata:\n  author: tester\n  version: \"2\"\n---\n\n# PDF forms\n\nSteps.\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TypedFrontmatter(md); err != nil {
			b.Fatal(err)
		}
	}
}
