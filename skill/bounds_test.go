package skill

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// aliasBomb is a SKILL.md whose frontmatter holds an alias bomb: each of
// levels anchors repeats the one before it width times, so the expanded
// value has width^levels leaves. variant is "seq" (&a1 [*a0, *a0, …]),
// "map" (&a1 {k0: *a0, k1: *a0, …}) or "merge" (mappings built with merge
// keys, <<: *a0).
func aliasBomb(variant string, levels, width int) []byte {
	var b strings.Builder
	b.WriteString("---\nname: bomb\ndescription: Explodes.\n")
	switch variant {
	case "seq":
		b.WriteString("a0: &a0 [lol]\n")
		for i := 1; i <= levels; i++ {
			items := make([]string, width)
			for j := range items {
				items[j] = fmt.Sprintf("*a%d", i-1)
			}
			fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Join(items, ", "))
		}
	case "map":
		b.WriteString("a0: &a0 {k: lol}\n")
		for i := 1; i <= levels; i++ {
			items := make([]string, width)
			for j := range items {
				items[j] = fmt.Sprintf("k%d: *a%d", j, i-1)
			}
			fmt.Fprintf(&b, "a%d: &a%d {%s}\n", i, i, strings.Join(items, ", "))
		}
	case "merge":
		b.WriteString("a0: &a0 {k: lol}\n")
		for i := 1; i <= levels; i++ {
			items := make([]string, width)
			for j := range items {
				items[j] = fmt.Sprintf("k%d: *a%d", j, i-1)
			}
			fmt.Fprintf(&b, "a%d: &a%d {<<: *a%d, %s}\n", i, i, i-1, strings.Join(items, ", "))
		}
	}
	b.WriteString("---\n# Bomb\n")
	return []byte(b.String())
}

// bombBudget is what parsing any of the test bombs may allocate: the
// decoded tree of a few hundred bytes of YAML, never the expansion.
const bombBudget = 2 << 20

func TestFrontmatterBounds(t *testing.T) {
	deep := "---\nname: deep\ndescription: d\nx: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n"
	deepBlock := "---\nname: deep\ndescription: d\nx:\n"
	for i := range 40 {
		deepBlock += strings.Repeat("  ", i+1) + "k:\n"
	}
	deepBlock += "---\n"
	manyAliases := "---\nname: many\ndescription: d\nv: &v x\nlist: [" + strings.TrimSuffix(strings.Repeat("*v, ", MaxFrontmatterAliases+1), ", ") + "]\n---\n"
	bigScalar := "---\nname: big\ndescription: d\nv: &v " + strings.Repeat("x", 60_000) + "\nlist: [*v, *v, *v, *v, *v]\n---\n"
	aliasDeep := "---\nname: deep\ndescription: d\nv: &v " + strings.Repeat("[", 20) + strings.Repeat("]", 20) + "\nw: " + strings.Repeat("[", 15) + "*v" + strings.Repeat("]", 15) + "\n---\n"
	cases := []struct {
		name string
		text []byte
		code string
	}{
		{"seq bomb", aliasBomb("seq", 9, 10), CodeYAMLAliasLimit},
		{"map bomb", aliasBomb("map", 9, 10), CodeYAMLAliasLimit},
		{"merge bomb", aliasBomb("merge", 9, 10), CodeYAMLAliasLimit},
		{"wide bomb", aliasBomb("seq", 3, 200), CodeYAMLAliasLimit},
		{"self reference", []byte("---\nname: x\ndescription: d\nz: &a [*a]\n---\n"), CodeYAMLAliasLimit},
		{"self reference in a mapping", []byte("---\nname: x\ndescription: d\nz: &a {k: [1, *a]}\n---\n"), CodeYAMLAliasLimit},
		{"self merge", []byte("---\nname: x\ndescription: d\nz: &a {<<: *a}\n---\n"), CodeYAMLAliasLimit},
		{"many aliases", []byte(manyAliases), CodeYAMLAliasLimit},
		{"big scalar repeated", []byte(bigScalar), CodeYAMLAliasLimit},
		{"deep flow", []byte(deep), CodeFrontmatterTooDeep},
		{"deep block", []byte(deepBlock), CodeFrontmatterTooDeep},
		{"deep through an alias", []byte(aliasDeep), CodeFrontmatterTooDeep},
		{"too large", []byte("---\nname: x\ndescription: d\nz: " + strings.Repeat("y", MaxFrontmatterBytes) + "\n---\n"), CodeFrontmatterTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var diags []Diagnostic
			var ok bool
			n := testutil.Allocated(func() { _, diags, ok = Parse(c.text, "/skills/bomb/SKILL.md", "bomb") })
			if ok {
				t.Fatalf("loaded; diags %v", diags)
			}
			if len(diags) != 1 || diags[0].Code != c.code || diags[0].Severity != Error || diags[0].Path != "/skills/bomb/SKILL.md" {
				t.Fatalf("diags = %v, want one error %s naming the file", diags, c.code)
			}
			if !strings.Contains(diags[0].Message, "limit") && !strings.Contains(diags[0].Message, "contains it") {
				t.Errorf("message does not name the limit: %s", diags[0].Message)
			}
			t.Logf("%d bytes of SKILL.md, %d bytes allocated: %s", len(c.text), n, diags[0].Message)
			if n > bombBudget {
				t.Errorf("Parse allocated %d bytes, budget %d", n, bombBudget)
			}
			// The write gate refuses it too, naming the code.
			b := &Bundle{Content: c.text}
			if _, _, err := b.Check(Limits{}); err == nil || err.(*CheckError).Problems[0].Code != c.code {
				t.Errorf("Check = %v, want %s", err, c.code)
			}
		})
	}
	t.Logf("seq bomb: %d bytes of SKILL.md", len(aliasBomb("seq", 9, 10)))
}

func TestFrontmatterBoundsAllowReal(t *testing.T) {
	// Aliases used sensibly still load, expanded, and sit just under the
	// limits.
	text := "---\nname: ok\ndescription: &d Use it.\nsummary: *d\nbase: &b {owner: me, tier: gold}\nother:\n  <<: *b\n  extra: x\nlist: [*d, *d]\n---\n"
	doc, diags, ok := Parse([]byte(text), "SKILL.md", "ok")
	if !ok || len(diags) != 0 {
		t.Fatalf("ok %v diags %v", ok, diags)
	}
	if v, _ := doc.Raw.Get("summary"); v != "Use it." {
		t.Errorf("summary = %v", v)
	}
	if l, _ := doc.Raw.Get("list"); fmt.Sprint(l) != "[Use it. Use it.]" {
		t.Errorf("list = %v", l)
	}
	exact := "---\nname: ok\ndescription: d\nv: &v x\nlist: [" + strings.TrimSuffix(strings.Repeat("*v, ", MaxFrontmatterAliases), ", ") + "]\n---\n"
	if _, diags, ok := Parse([]byte(exact), "SKILL.md", "ok"); !ok {
		t.Errorf("exactly %d aliases: %v", MaxFrontmatterAliases, diags)
	}
	nested := "---\nname: ok\ndescription: d\nx: " + strings.Repeat("[", MaxFrontmatterDepth-1) + strings.Repeat("]", MaxFrontmatterDepth-1) + "\n---\n"
	if _, diags, ok := Parse([]byte(nested), "SKILL.md", "ok"); !ok {
		t.Errorf("depth %d: %v", MaxFrontmatterDepth, diags)
	}
	// Frontmatter of exactly MaxFrontmatterBytes, with no aliases, is never
	// over MaxFrontmatterExpanded, however it is written.
	for _, item := range []string{"a", "[]", "{}", "{a}", "{a: b}"} {
		body := "name: ok\ndescription: d\nx: ["
		for len(body)+len(item)+3 < MaxFrontmatterBytes {
			body += item + ","
		}
		body = strings.TrimSuffix(body, ",") + "]\n"
		if _, diags, ok := Parse([]byte("---\n"+body+"---\n"), "SKILL.md", "ok"); !ok {
			t.Errorf("%d bytes of %q: %v", len(body), item, diags)
		}
	}
}

// FuzzFrontmatterBounds feeds Parse frontmatter made of anchors, aliases,
// merge keys and nesting, and checks that it never panics, never allocates
// more than the bounds allow, and that whatever loads is within them.
func FuzzFrontmatterBounds(f *testing.F) {
	f.Add(string(aliasBomb("seq", 9, 10)))
	f.Add(string(aliasBomb("map", 4, 4)))
	f.Add(string(aliasBomb("merge", 3, 3)))
	f.Add("---\nname: x\ndescription: d\nz: &a [*a]\n---\n")
	f.Add("---\nname: x\ndescription: &d y\nm: {<<: [{a: *d}], b: [*d, *d]}\n---\n")
	f.Add("---\nname: x\ndescription: d\nx: [[[[[[[[[[]]]]]]]]]]\n---\n")
	f.Fuzz(func(t *testing.T, text string) {
		var doc *Document
		var ok bool
		n := testutil.Allocated(func() { doc, _, ok = Parse([]byte(text), "SKILL.md", "x") })
		// The decoded tree is at most a few hundred bytes per input byte;
		// the expansion is bounded by MaxFrontmatterExpanded.
		if budget := uint64(len(text))*2048 + 64<<20; n > budget {
			t.Fatalf("Parse of %d bytes allocated %d", len(text), n)
		}
		if !ok {
			return
		}
		size, depth := rawExtent(doc.Raw, 1)
		if size > MaxFrontmatterExpanded || depth > MaxFrontmatterDepth {
			t.Fatalf("loaded frontmatter of size %d, depth %d", size, depth)
		}
	})
}

// rawExtent is the size and depth of parsed frontmatter, counted as
// checkBounds counts them.
func rawExtent(v any, depth int) (size, maxDepth int) {
	switch v := v.(type) {
	case string:
		return len(v) + 1, depth - 1
	case []any:
		size, maxDepth = 1, depth
		for _, c := range v {
			s, d := rawExtent(c, depth+1)
			size, maxDepth = size+s, max(maxDepth, d)
		}
	case Fields:
		size, maxDepth = 1, depth
		for _, kv := range v {
			s, d := rawExtent(kv.Value, depth+1)
			size, maxDepth = size+len(kv.Key)+1+s, max(maxDepth, d)
		}
	}
	return size, maxDepth
}
