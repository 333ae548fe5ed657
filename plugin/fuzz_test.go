package plugin

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadout/loadout/skill"
)

// FuzzManifest feeds arbitrary text to the manifest decoder and validator,
// and builds the inline skills of what passes. It must never panic, and
// what it accepts must satisfy every rule it promises.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(kindsManifest))
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"id": "x", "name": "X", "version": "1", "trust": "saas_locked", "skills": [{"id": "a", "name": "a", "sorce": {}}]}`))
	f.Add([]byte(`{"id": "x", "name": "X", "version": "1", "trust": "self_host_open", "skills": [
		{"id": "a", "name": "a", "description": "d", "source": {"kind": "inline", "content": "c"}, "files": [{"path": "../x", "content": ""}]},
		{"id": "a", "name": "b", "source": {"kind": "file", "path": "/abs/SKILL.md"}},
		{"id": "c", "name": "c", "source": {"kind": "directory", "path": "a/../.."}},
		"str", 1, null, {}]}`))
	f.Add([]byte(`{"id": "Bad", "trust": "nope"}`))
	f.Add([]byte(`/* c */ {"id": "x", // comment
		"name": "X", "version": "1", "trust": "saas_locked", "skills": [],}`))
	f.Add([]byte(`{"id": "x", "name": "X", "version": "1", "trust": "saas_locked", "skills": [{"id": "q", "name": "q\"\n: x", "description": "--- \n---", "tags": ["\u2028"], "source": {"kind": "inline", "content": "\r\n---\n"}}]}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Add([]byte(`{"skills": [{"skills": [[[[{}]]]]}]}`))
	const file = "/plugins/fuzz/plugin.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		m, idx, diags := parseManifest(data, file)
		for _, d := range diags {
			if d.Code == "" || d.Message == "" || d.Path != file {
				t.Fatalf("bad diagnostic %+v", d)
			}
			if d.Severity != skill.Error && d.Severity != skill.Warning && d.Severity != skill.Info {
				t.Fatalf("bad severity %+v", d)
			}
		}
		if m == nil {
			if len(errorsIn(diags)) == 0 {
				t.Fatal("manifest refused without an error")
			}
			return
		}
		if !validID(m.ID) || !slices.Contains(trustLevels, m.Trust) || strings.TrimSpace(m.Name) == "" || strings.TrimSpace(m.Version) == "" {
			t.Fatalf("accepted a bad manifest: %+v", m)
		}
		if len(idx) != len(m.Skills) || !slices.IsSorted(idx) {
			t.Fatalf("indices %v for %d skills", idx, len(m.Skills))
		}
		ids := map[string]bool{}
		l := &loader{file: file, m: m, origin: &skill.Origin{Kind: "plugin", Plugin: m.ID, Trust: m.Trust, Root: "/plugins/fuzz"}}
		for k, c := range m.Skills {
			if c.ID == "" || ids[c.ID] || strings.TrimSpace(c.Name) == "" {
				t.Fatalf("accepted contribution %+v", c)
			}
			ids[c.ID] = true
			switch c.Source.Kind {
			case KindInline:
				if c.Source.Content == "" || c.Source.Path != "" {
					t.Fatalf("accepted inline source %+v", c.Source)
				}
				sk, _ := l.inline(idx[k], c)
				if sk != nil {
					if sk.Name == "" || !sk.Virtual || sk.Location != "plugin://"+m.ID+"/"+sk.Name+"/SKILL.md" || *sk.Origin != *l.origin {
						t.Fatalf("inline skill %+v", sk)
					}
					for _, f := range sk.Files {
						if c, err := skill.CleanFilePath(f.Path); err != nil || c != f.Path {
							t.Fatalf("inline file path %q passed", f.Path)
						}
					}
				}
			case KindFile, KindDirectory:
				if _, err := skill.CleanPath(c.Source.Path); err != nil || c.Source.Content != "" || len(c.Files) > 0 {
					t.Fatalf("accepted %s source %+v", c.Source.Kind, c)
				}
			default:
				t.Fatalf("accepted source kind %q", c.Source.Kind)
			}
		}
	})
}

// FuzzSynthFrontmatter checks that a frontmatter written for an inline
// contribution reads back as the values it was written from.
func FuzzSynthFrontmatter(f *testing.F) {
	for _, s := range []string{"plain", `"q" \ b`, "a: b # c", "\x00\u0085\u2028\ufeff", "\n", "- x", "&a *b", "🚀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		if !utf8.ValidString(desc) || strings.TrimSpace(desc) == "" {
			return
		}
		checkRoundTrip(t, "fuzz-name", desc)
	})
}
