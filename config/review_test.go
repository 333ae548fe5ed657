package config

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
)

// "review" and an agent's "versions": the defaults keep today's behaviour,
// and a pin that is not a version, "published" or "latest" is refused by
// name.
func TestReviewAndVersions(t *testing.T) {
	f, err := Parse([]byte(`{"agents": [{"agentId": "a", "skills": [{"store": true}]}]}`), "/x/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Review.Required || f.Review.Distinct != nil || f.Agents[0].Versions != nil {
		t.Errorf("defaults: %+v %+v", f.Review, f.Agents[0].Versions)
	}
	f, err = Parse([]byte(`{"agents": [{"agentId": "a", "skills": [{"store": true}], "versions": {"deploy": 3, "lint": "latest", "doc": "published"}}],
  "review": {"required": true, "distinct": false}}`), "/x/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]catalog.VersionPin{"deploy": {Version: 3}, "lint": {Latest: true}, "doc": {}}
	for k, v := range want {
		if f.Agents[0].Versions[k] != v {
			t.Errorf("versions[%s] = %+v, want %+v", k, f.Agents[0].Versions[k], v)
		}
	}
	if !f.Review.Required || f.Review.Distinct == nil || *f.Review.Distinct {
		t.Errorf("review: %+v", f.Review)
	}
	for _, bad := range []string{`"newest"`, `0`, `-1`, `"3x"`, `true`} {
		_, err := Parse([]byte(`{"agents": [{"agentId": "a", "skills": [{"store": true}], "versions": {"deploy": `+bad+`}}]}`), "/x/loadout.json")
		if err == nil || !strings.Contains(err.Error(), "published") {
			t.Errorf("versions deploy %s: %v", bad, err)
		}
	}
}
