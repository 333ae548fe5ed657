package main

import (
	"testing"

	"github.com/loadout/loadout/catalog"
)

// TestEndpointOf: the MCP endpoints, and the paths beside them that are
// not.
func TestEndpointOf(t *testing.T) {
	for path, want := range map[string]string{
		"/mcp":                  catalog.GlobalID,
		"/agents/coder/mcp":     "coder",
		"/agents/a.b_c-1/mcp":   "a.b_c-1",
		"/mcp/":                 "",
		"/agents//mcp":          "",
		"/agents/coder/mcp/":    "",
		"/agents/coder/mcp/x":   "",
		"/agents/coder/prompt":  "",
		"/agents/a/b/mcp":       "",
		"/v1/agents/coder/mcp":  "",
		"/.well-known/mcp":      "",
		"/agents/coder/mcpx":    "",
		"/agents/coder/../mcp":  "",
		"/agents/coder/mcp?x=1": "",
	} {
		got, ok := endpointOf(path)
		if ok != (want != "") || got != want {
			t.Errorf("endpointOf(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
	if g := grantsFor(catalog.GlobalID); len(g) != 1 || g[0] != "admin" {
		t.Errorf("the global endpoint's grants: %v", g)
	}
	if g := grantsFor("coder"); len(g) != 2 || g[0] != "agent:coder" || g[1] != "admin" {
		t.Errorf("an agent endpoint's grants: %v", g)
	}
}
