package skill

import (
	"strings"
	"testing"
)

// TestFrontmatterBoundsExact: frontmatter of exactly MaxFrontmatterBytes
// and nesting exactly MaxFrontmatterDepth deep loads, by every reader and
// in every form (flow, block, through an alias); one byte or one level
// more is refused with the bound's code.
func TestFrontmatterBoundsExact(t *testing.T) {
	sized := func(n int) string {
		head := "name: ok\ndescription: d\nz: "
		f := head + strings.Repeat("y", n-len(head)-1) + "\n"
		if len(f) != n {
			t.Fatalf("built %d bytes, want %d", len(f), n)
		}
		return "---\n" + f + "---\nbody\n"
	}
	flow := func(depth int) string { // the top-level mapping is depth 1
		return "---\nname: ok\ndescription: d\nx: " + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "\n---\n"
	}
	block := func(depth int) string {
		s := "---\nname: ok\ndescription: d\nx:\n"
		for i := range depth - 1 {
			s += strings.Repeat("  ", i+1) + "k:\n"
		}
		return s + "---\n"
	}
	alias := func(depth int) string { // v is 21 deep; w puts it depth-21 further down
		b := depth - 21
		return "---\nname: ok\ndescription: d\nv: &v " + strings.Repeat("[", 20) + strings.Repeat("]", 20) +
			"\nw: " + strings.Repeat("[", b) + "*v" + strings.Repeat("]", b) + "\n---\n"
	}
	for _, c := range []struct {
		name     string
		at, past string
		code     string
		typed    bool // MCP's reading of it applies (it refuses every alias)
	}{
		{"size", sized(MaxFrontmatterBytes), sized(MaxFrontmatterBytes + 1), CodeFrontmatterTooLarge, true},
		{"flow depth", flow(MaxFrontmatterDepth), flow(MaxFrontmatterDepth + 1), CodeFrontmatterTooDeep, true},
		{"block depth", block(MaxFrontmatterDepth), block(MaxFrontmatterDepth + 1), CodeFrontmatterTooDeep, true},
		{"depth through an alias", alias(MaxFrontmatterDepth), alias(MaxFrontmatterDepth + 1), CodeFrontmatterTooDeep, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, diags, ok := Parse([]byte(c.at), "SKILL.md", "ok"); !ok {
				t.Errorf("at the bound, Parse refuses: %v", diags)
			}
			if _, _, err := (&Bundle{Content: []byte(c.at)}).Check(Limits{}); err != nil {
				t.Errorf("at the bound, Check refuses: %v", err)
			}
			if _, err := TypedFrontmatter([]byte(c.at)); c.typed && err != nil {
				t.Errorf("at the bound, TypedFrontmatter refuses: %v", err)
			}
			_, diags, ok := Parse([]byte(c.past), "SKILL.md", "ok")
			if ok || len(diags) == 0 || diags[0].Code != c.code {
				t.Errorf("one past the bound, Parse: ok %v, %v; want %s", ok, diags, c.code)
			}
			if _, _, err := (&Bundle{Content: []byte(c.past)}).Check(Limits{}); err == nil || err.(*CheckError).Problems[0].Code != c.code {
				t.Errorf("one past the bound, Check = %v, want %s", err, c.code)
			}
			if _, err := TypedFrontmatter([]byte(c.past)); c.typed && err == nil {
				t.Error("one past the bound, TypedFrontmatter accepts it")
			}
		})
	}
}

// TestTypedUnclosedAtBound: a frontmatter with no closing line is named as
// such while what follows the opening fence fits the bound, and as over
// the bound one byte past it.
func TestTypedUnclosedAtBound(t *testing.T) {
	for n, want := range map[int]string{
		MaxFrontmatterBytes:     `the frontmatter has no closing "---" line`,
		MaxFrontmatterBytes + 1: "within the frontmatter's limit",
	} {
		rest := "name: ok\ndescription: " + strings.Repeat("d", n-len("name: ok\ndescription: "))
		_, err := TypedFrontmatter([]byte("---\n" + rest))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d bytes after the fence: %v, want %q", n, err, want)
		}
	}
}
