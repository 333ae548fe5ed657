package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
)

// TestTopLevelBudgetTokensBound: the top-level budgetTokens is accepted at
// 0 (none), 1 and exactly catalog.MaxBudgetTokens, and refused one past
// either end, naming the field and the bound.
func TestTopLevelBudgetTokensBound(t *testing.T) {
	for _, n := range []int{0, 1, catalog.MaxBudgetTokens} {
		f, err := Parse(fmt.Appendf(nil, `{"budgetTokens": %d}`, n), "/cfg/loadout.json")
		if err != nil {
			t.Errorf("budgetTokens %d: %v", n, err)
			continue
		}
		if f.CatalogOptions().BudgetTokens != n {
			t.Errorf("budgetTokens %d read as %d", n, f.CatalogOptions().BudgetTokens)
		}
	}
	for _, n := range []int{-1, catalog.MaxBudgetTokens + 1} {
		_, err := Parse(fmt.Appendf(nil, `{"budgetTokens": %d}`, n), "/cfg/loadout.json")
		want := fmt.Sprintf("budgetTokens: %d: give a number of tokens between 1 and %d", n, catalog.MaxBudgetTokens)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "/cfg/loadout.json") {
			t.Errorf("budgetTokens %d: %v, want %q", n, err, want)
		}
	}
}
