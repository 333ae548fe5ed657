package mcpserver

import (
	"context"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/service"
)

// TestInstructionsWithinBudget: initialize's instructions (the note on
// the tools and the listing) are everything the model gets from the
// server up front, so all of it counts against the agent's budget: at
// most the budget, and filled to within one skill's line of the reserve. The note
// used to come on top (8,260 characters for 8,000).
func TestInstructionsWithinBudget(t *testing.T) {
	root := t.TempDir()
	for i := range 400 {
		writeSkill(t, root, fmt.Sprintf("skill-%03d", i), fmt.Sprintf("Does the chore numbered %d for the team, and reports what it changed.", i), "", nil)
	}
	for _, budget := range []int{2000, 8000} {
		cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
			{AgentID: "coder", Budget: budget, Skills: []catalog.SourceSpec{{Root: root}}},
		}, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		svc := service.New(cat, service.Options{Logger: quiet})
		t.Cleanup(func() { svc.Close() })
		ins := connect(t, svc, Options{Agent: "coder"}, openPrincipal, nil).InitializeResult().Instructions
		n := utf8.RuneCountInString(ins)
		if n > budget || n < budget-budget/render.ReserveShare-200 { // a stable plan leaves the reserve
			t.Errorf("budget %d: instructions of %d characters", budget, n)
		}
		l, _ := cat.Agent("coder")
		_, rep, _ := l.Prompt(catalog.PromptOptions{Format: render.FormatProgressive})
		if rep.Chars > budget {
			t.Errorf("budget %d: the listing alone is %d", budget, rep.Chars)
		}
	}
}
