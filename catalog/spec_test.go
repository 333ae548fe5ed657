package catalog

import (
	"context"
	"strings"
	"testing"
)

// TestInvalidSkillsSpec: invalidSkills takes "load" (the default) or
// "refuse"; anything else is refused naming the field and the choices.
func TestInvalidSkillsSpec(t *testing.T) {
	for _, v := range []string{"", InvalidLoad, InvalidRefuse} {
		if err := (&AgentSpec{AgentID: "a", InvalidSkills: v}).Validate(); err != nil {
			t.Errorf("invalidSkills %q: %v", v, err)
		}
	}
	_, err := New(context.Background(), []AgentSpec{{AgentID: "a", InvalidSkills: "strict"}}, Options{})
	want := `agent "a": invalidSkills "strict" is not a choice: use "load" (the default`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `or "refuse"`) {
		t.Errorf("got %v, want it to contain %q", err, want)
	}
}
