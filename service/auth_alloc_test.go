package service_test

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
)

// CanAgent runs twice on every agent request: it must not allocate, even
// for an agent id longer than the compiler's 32-byte concatenation buffer.
func TestCanAgentAllocatesNothing(t *testing.T) {
	id := strings.Repeat("long-agent-id-", 4)
	p := service.Principal{Scopes: []string{"agent:other", "agent:" + id}}
	if !p.CanAgent(id) || p.CanAgent("other-"+id) || !(service.Principal{Scopes: []string{"index:" + id}}).CanAgent(id) {
		t.Fatal("CanAgent answers wrongly")
	}
	if n := testing.AllocsPerRun(100, func() { p.CanAgent(id) }); n != 0 {
		t.Errorf("CanAgent allocates %.0f times per call, want 0", n)
	}
}
