package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// generated makes n frontmatter texts from pieces that real files hold and
// that the two readers might read differently, the same every run.
func generated(n int) []string {
	r := rand.New(rand.NewPCG(9, 9))
	keys := []string{"k", "x-y", "\"q k\"", "'1'", "1", "true", "null", "k2", "é"}
	vals := []string{"1.0", "014", "0x1F", "0o17", "1_000", "-0", "+.5", ".5", "1e3", "1.", "true", "False", "~", "null", "",
		"\"1.0\"", "'it''s'", "plain text", "http://a/b:c", "[a, 1, true]", "[]", "{}", "{a: 1, b: [x]}", "[a, {b: c}]",
		"x # c", "\"a\\tb\"", "yes", "0b1", ".inf", "a:b", "-x", "'a' # c", "[a, 'b, c']", "2001-12-14", "12:30", "<<"}
	var out []string
	for range n {
		var b strings.Builder
		for j := range 1 + r.IntN(4) {
			b.WriteString(keys[r.IntN(len(keys))] + fmt.Sprint(j) + ":")
			switch r.IntN(6) {
			case 0: // a block list
				b.WriteString("\n")
				for range 1 + r.IntN(3) {
					b.WriteString("  - " + vals[r.IntN(len(vals))] + "\n")
				}
			case 1: // a block mapping
				b.WriteString("\n")
				for k := range 1 + r.IntN(3) {
					b.WriteString("  " + keys[r.IntN(len(keys))] + fmt.Sprint(k) + ": " + vals[r.IntN(len(vals))] + "\n")
				}
			case 2: // a block scalar
				b.WriteString(" " + []string{"|", ">", "|-", ">+"}[r.IntN(4)] + "\n  " + vals[r.IntN(len(vals))] + "\n\n   more\n")
			default:
				b.WriteString(" " + vals[r.IntN(len(vals))] + "\n")
			}
		}
		out = append(out, b.String())
	}
	return out
}

// clientParse is a Node module that reads a JSON list of SKILL.md texts on
// stdin and prints, for each, the frontmatter the MCP TypeScript SDK reads
// from it (through skillEntry of @modelcontextprotocol/server, which parses
// SKILL.md with the same reader SkillsClient verifies with), or the error.
const clientParse = `
import { skillEntry } from "@modelcontextprotocol/server/ext/skills";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const md of JSON.parse(input)) {
  try {
    out.push({ frontmatter: (await skillEntry("s", { "SKILL.md": md })).frontmatter });
  } catch (e) {
    const msg = (e.problems ?? []).map((p) => p.message).join("; ") || String(e.message);
    out.push(msg.startsWith("SKILL.md frontmatter: ") ? { refused: msg } : { other: msg });
  }
}
console.log(JSON.stringify(out));
`

// typedCorpus are frontmatter lines (after name: s and description: d) to
// read both ways.
var typedCorpus = []string{
	"",
	"version: 1.0\nflag: true\nnothing:\nn2: ~\nn3: Null\nn4: NULL\nn5: nULL\n",
	"a: True\nb: TRUE\nc: False\nd: FALSE\ne: yes\nf: no\ng: on\nh: tRUE\n",
	"a: 1\nb: -2\nc: +3\nd: 014\ne: 0o14\nf: 0x1F\ng: 0xff\nh: 0X1F\ni: 0b101\nj: 1_000\nk: 0o8\nl: -0x1\nm: 09\n",
	"a: 1.5\nb: .5\nc: 1.\nd: 1e3\ne: -2.5E-1\nf: +.5\ng: 1e-400\nh: 1.2.3\ni: +.nan\nj: -0\nk: 1e+3\n",
	"big: 123456789012345678901234567890\nhex: 0xFFFFFFFFFFFFFFFFFFFF\noct: 0o7777777777777777777777777\n",
	"a: .inf\n", "a: -.Inf\n", "a: .NaN\n", "a: 1e400\n", "a: 0x" + strings.Repeat("f", 300) + "\n",
	"a: \"true\"\nb: '1.0'\nc: \"\"\nd: ''\ne: |\n  1.0\nf: >-\n  null\n  x\ng: |+\n  keep\n\nh: >\n  a\n\n  b\n    c\n  d\n",
	"tags: [a, 1, true, null, \"2\"]\nmetadata:\n  z: \"1\"\n  a: x\n",
	"list:\n- a\n- b: 1\n  c: two\n- - nested\n  - 2\n",
	"\"1\": a\n'true': b\nc d: e\n",
	"# c\nx: y # trailing\nlong: one\n  two\n\n  three\nurl: http://a.b/c:d\n",
	"a: \"it's \\\"q\\\" \\u00e9 \\x41\"\nb: 'it''s'\nc: [\"x, y\", 'z]']\nd: [it's, b]\n",
	"m: {k: v, n: 0, l: [1, {d: e}]}\n",
	"1: a\n", "true: a\n", "~: a\n", "m: {1.5: a}\n", "__proto__: a\n", "a: 1\na: 2\n",
	"a: &x 1\nb: *x\n", "a: !!str 1\n", "a: \"one\n  two\"\n", "a: [x,\n  y]\n", "a: [x: y]\n",
	"a: |2\n   x\n", "a: {b: }\n", "a: Use when: y\n", "a: foo:\n", "a: @x\n", "a: `x`\n", "a: %x\n",
	"a: b # c\n  d\n", "a:\n  - x\n  -\n  - z\n", "a: -\n", "a: - b\n", "a: ? b\n",
	"a: [a, b]  # c\n", "a: {}\nb: []\n", "a: [[[]]]\n", "a: x\n\tb: y\n",
	"a: <<\n", "<<: {a: 1}\n", "a: =\n", "a: 2001-12-14\n", "a: 1:30\n", "a: 0.\n", "a: 00\n",
	"a: x\u2028y\n", "a: x\u0085y\n", "a: 'x\u2029y'\n", "a: |\n  x\u2028y\n", "a: \"\\L\"\n",
	"a: \"\\/\\N\\_\"\n", "a: \"\\q\"\n", "a: 'x' y\n", "a: \"x\" # ok\n",
}

// TestTypedMatchesClient reads each corpus frontmatter with
// TypedFrontmatter and with the TypeScript SDK's reader: both must type it
// to the same JSON values, or both refuse it. Where loadout refuses what
// the SDK reads, the skill is only left out of skills/list; where loadout
// typed what the SDK refuses or reads differently, verification would fail.
func TestTypedMatchesClient(t *testing.T) {
	bin := testutil.CompatBin(t)
	corpus := append(slices.Clone(typedCorpus), generated(400)...)
	var docs []string
	for _, c := range corpus {
		docs = append(docs, "---\nname: s\ndescription: d\n"+c+"---\nbody\n")
	}
	in, _ := json.Marshal(docs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), "--input-type=module", "--eval", clientParse)
	cmd.Dir = filepath.Dir(filepath.Dir(bin))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var results []struct {
		Frontmatter    json.RawMessage
		Refused, Other string
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(docs) {
		t.Fatalf("node printed %d results (%v): %s", len(results), err, out)
	}
	var typed, refused int
	for i, r := range results {
		fs, terr := TypedFrontmatter([]byte(docs[i]))
		switch {
		case r.Other != "":
			t.Errorf("%q: the SDK refused it for another reason: %s", corpus[i], r.Other)
		case r.Refused != "":
			if terr == nil {
				t.Errorf("%q: loadout types it, the SDK refuses it: %s", corpus[i], r.Refused)
			}
			refused++
		case terr != nil:
			t.Logf("%q: loadout refuses what the SDK reads (%v); the SDK reads %s", corpus[i], terr, r.Frontmatter)
		default:
			b, _ := json.Marshal(fs)
			var got, want any
			json.Unmarshal(b, &got)
			json.Unmarshal(r.Frontmatter, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q:\n loadout %s\n     SDK %s", corpus[i], b, r.Frontmatter)
			}
			typed++
		}
	}
	t.Logf("%d frontmatters: %d typed alike, %d refused by both", len(docs), typed, refused)
}
