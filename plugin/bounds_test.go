package plugin

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// TestPluginAliasBomb: a plugin contributing an alias bomb, inline or as a
// folder, loads its other skills, reports the bomb with the stable code,
// and allocates little doing so.
func TestPluginAliasBomb(t *testing.T) {
	inline, _ := json.Marshal(testutil.AliasBomb("inline-bomb", 9, 10))
	manifest := `{"id": "p", "name": "P", "version": "1", "trust": "self_host_open", "skills": [
  {"id": "ok", "name": "ok", "description": "Fine.", "source": {"kind": "inline", "content": "One."}},
  {"id": "inline-bomb", "name": "inline-bomb", "source": {"kind": "inline", "content": ` + string(inline) + `}},
  {"id": "dir-bomb", "name": "dir-bomb", "source": {"kind": "directory", "path": "dir-bomb"}},
]}`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.json":       manifest,
		"dir-bomb/SKILL.md": testutil.AliasBomb("dir-bomb", 9, 10),
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, diags := Load(dir)
	runtime.ReadMemStats(&after)
	if p == nil {
		t.Fatalf("plugin not loaded:\n%s", dump(diags))
	}
	if got := names(p); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("skills = %v, want [ok]\n%s", got, dump(diags))
	}
	n := 0
	for _, d := range diags {
		if d.Code == skill.CodeYAMLAliasLimit && d.Severity == skill.Error {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want two %s errors:\n%s", skill.CodeYAMLAliasLimit, dump(diags))
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
		t.Errorf("Load allocated %d bytes", a)
	}
}
