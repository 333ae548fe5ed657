package skill

import (
	"errors"
	"strings"
	"testing"
	"unicode"
)

func TestCleanPath(t *testing.T) {
	ok := map[string]string{
		"a.md":                   "a.md",
		"references/guide.md":    "references/guide.md",
		"./scripts/run.sh":       "scripts/run.sh",
		"a/./b":                  "a/b",
		"SKILL.md":               "SKILL.md",
		"技能/文件.md":               "技能/文件.md",
		"..a/b..":                "..a/b..",
		strings.Repeat("a", 255): strings.Repeat("a", 255),
	}
	for in, want := range ok {
		got, err := CleanPath(in)
		if err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                        CodePathEmpty,
		".":                       CodePathEmpty,
		"/etc/passwd":             CodePathAbsolute,
		"C:/x":                    CodePathAbsolute,
		"../x":                    CodePathDotDot,
		"a/../../x":               CodePathDotDot,
		"a/..":                    CodePathDotDot,
		`a\b`:                     CodePathChars,
		"a\x00b":                  CodePathChars,
		"a\nb":                    CodePathChars,
		"a\x7fb":                  CodePathChars,
		"a\u0085b":                CodePathChars,
		"\x1b[31mred.md":          CodePathChars,
		"a\u009bb":                CodePathChars,
		"evil\u202egnp.md":        CodePathChars,
		"a\u200bb.md":             CodePathChars,
		"a\u200db.md":             CodePathChars,
		"\ufeffa.md":              CodePathChars,
		"a\u2066b\u2069.md":       CodePathChars,
		"a\u2028b":                CodePathChars,
		"soft\u00adhyphen":        CodePathChars,
		"./C:x":                   CodePathAbsolute,
		"./A:":                    CodePathAbsolute,
		"././c:/x":                CodePathAbsolute,
		"\xff":                    CodePathChars,
		"a//b":                    CodePathSegment,
		"a/":                      CodePathSegment,
		strings.Repeat("a", 256):  CodePathLong,
		strings.Repeat("a/", 600): CodePathLong,
	}
	for in, code := range bad {
		_, err := CleanPath(in)
		var pe *PathError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("CleanPath(%q) = %v; want code %s", in, err, code)
		}
		if err != nil && !strings.Contains(err.Error(), "refused") {
			t.Errorf("error %q does not say it refused", err)
		}
	}
}

func TestCleanFilePath(t *testing.T) {
	// A second entry file at the top is refused, in any case.
	for _, p := range []string{"SKILL.md", "./skill.md", "Skill.MD", "./SKILL.md"} {
		_, err := CleanFilePath(p)
		var pe *PathError
		if !errors.As(err, &pe) || pe.Code != CodePathSkillMD {
			t.Errorf("CleanFilePath(%q) = %v; want %s", p, err, CodePathSkillMD)
		}
	}
	// A SKILL.md below the top is a supporting file, as discovery lists it.
	for p, want := range map[string]string{"sub/SKILL.md": "sub/SKILL.md", "./x/Skill.MD": "x/Skill.MD", "examples/inner/skill.md": "examples/inner/skill.md"} {
		if got, err := CleanFilePath(p); err != nil || got != want || !IsNestedEntry(got) {
			t.Errorf("CleanFilePath(%q) = %q, %v; want %q, a nested entry", p, got, err, want)
		}
	}
	if got, err := CleanFilePath("references/SKILL.md.txt"); err != nil || got != "references/SKILL.md.txt" {
		t.Errorf("got %q %v", got, err)
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a", "./a/b", "../x", "/abs", "a//b", `a\b`, "a\x00", "C:x", "./C:x", "...", "a/./../b", "\u2028", "a\x1bb", "a\u202eb", "e\u0301.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := CleanPath(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Code == "" {
				t.Fatalf("error without code: %v", err)
			}
			return
		}
		// What passes is relative, inside, and stable.
		if c == "" || strings.HasPrefix(c, "/") || strings.Contains(c, `\`) || strings.Contains(c, "//") {
			t.Fatalf("CleanPath(%q) = %q", p, c)
		}
		for _, seg := range strings.Split(c, "/") {
			if seg == ".." || seg == "." || seg == "" {
				t.Fatalf("CleanPath(%q) = %q has segment %q", p, c, seg)
			}
		}
		for _, r := range c {
			if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
				t.Fatalf("control or invisible character %U in %q", r, c)
			}
		}
		if isDrive(c) {
			t.Fatalf("CleanPath(%q) = %q starts with a drive letter", p, c)
		}
		if again, err := CleanPath(c); err != nil || again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", p, c, again, err)
		}
	})
}
