package catalog

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/loadout/loadout/skill"
)

// genName makes a skill name from characters that stress glob matching:
// path separators, glob metacharacters, dots, spaces, capitals and other
// scripts. Many are not valid names under the format; the lenient loader
// accepts most of them with warnings, and those must all be selectable.
func genName(r *rand.Rand) string {
	alphabet := []rune("ab-z09/./*?[]\\^!. _ABé日ß:@")
	n := 1 + r.Intn(12)
	out := make([]rune, n)
	for i := range out {
		out[i] = alphabet[r.Intn(len(alphabet))]
	}
	return string(out)
}

// TestDefaultPatternsSelectEveryLoadedName: every name the lenient loader
// accepts is selected by the default patterns (available omitted, or
// ["*"]) and appears in the global catalog. A name with '/' used to load
// with two warnings and then vanish, because * did not cross '/'.
func TestDefaultPatternsSelectEveryLoadedName(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	names := []string{"ui-toolkit/web", "a/b/c", "/lead", "trail/", "x//y", "[x]", `back\slash`, "*", "?"}
	for len(names) < 300 {
		names = append(names, genName(r))
	}
	root := t.TempDir()
	files := map[string]string{}
	accepted := map[string]bool{}
	for i, name := range names {
		q, _ := json.Marshal(name)
		text := fmt.Sprintf("---\nname: %s\ndescription: Generated skill %d.\n---\nBody.\n", q, i)
		dir := fmt.Sprintf("s%03d", i)
		doc, _, ok := skill.Parse([]byte(text), dir+"/SKILL.md", dir)
		if !ok {
			continue
		}
		accepted[doc.Frontmatter.Name] = true
		files[dir+"/SKILL.md"] = text
	}
	if !accepted["ui-toolkit/web"] || len(accepted) < 200 {
		t.Fatalf("the generator should produce names the loader accepts, got %d", len(accepted))
	}
	write(t, root, files)
	c := newCat(t,
		AgentSpec{AgentID: "omitted", Skills: []SourceSpec{{Root: root}}},
		AgentSpec{AgentID: "star", Skills: []SourceSpec{{Root: root, Available: []string{"*"}}}},
		AgentSpec{AgentID: "inline-star", Skills: []SourceSpec{{Root: root, Inline: []string{"*"}}}},
	)
	var want []string
	for n := range accepted {
		want = append(want, n)
	}
	sort.Strings(want)
	check := func(what string, l *Loadout) {
		t.Helper()
		got := map[string]bool{}
		for _, n := range l.Names() {
			got[n] = true
		}
		for _, n := range want {
			if !got[n] {
				t.Errorf("%s: skill %q loads but is not selected", what, n)
			}
			if _, ok := l.Lookup(n); !ok {
				t.Errorf("%s: skill %q loads but Lookup does not find it", what, n)
			}
		}
	}
	for _, id := range []string{"omitted", "star", "inline-star"} {
		check(id, agent(t, c, id))
	}
	check("global", c.Global())
}

// TestPatternsTreatSlashAsACharacter: '/' in a name is an ordinary
// character for * and ?, and a literal '/' in a pattern matches it.
func TestPatternsTreatSlashAsACharacter(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"*", "ui-toolkit/web", true},
		{"ui-toolkit/*", "ui-toolkit/web", true},
		{"ui-toolkit?web", "ui-toolkit/web", true},
		{"*/web", "ui-toolkit/web", true},
		{"ui-*", "ui-toolkit/web", true},
		{"ui-toolkit/*", "ui-toolkit-web", false},
		{"web", "ui-toolkit/web", false},
		{"[^a]*", "/x", true},
	} {
		if got := matchAny([]string{tc.pat}, tc.name); got != tc.want {
			t.Errorf("matchAny(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
	if err := checkPattern("a\x00b"); err == nil {
		t.Error("a pattern holding NUL should be refused")
	}
}

// TestPreloadSlashName: a preload naming a skill whose name holds '/'
// preloads that skill; it used to be taken for a folder path and refused.
func TestPreloadSlashName(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"web/SKILL.md": md(`"ui-toolkit/web"`, "Web kit.")})
	c := newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: root}}, Preload: []string{"ui-toolkit/web"}})
	l := agent(t, c, "a")
	e, ok := l.Lookup("ui-toolkit/web")
	if !ok || !e.Inline {
		t.Fatalf("ui-toolkit/web not preloaded: %+v", rows(l))
	}
	for _, d := range l.agentDiags {
		if d.Severity == skill.Error {
			t.Errorf("unexpected error: %s: %s", d.Code, d.Message)
		}
	}
	for _, d := range c.Diagnostics() {
		if d.Severity == skill.Error {
			t.Errorf("unexpected error: %s: %s", d.Code, d.Message)
		}
	}
}
