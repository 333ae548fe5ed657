package loadout_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The public library must stay importable by other Go agent frameworks
// without pulling in a database, an HTTP server or MCP: arrows point from
// transports to the catalog to the format, never back.
func TestLibraryDependencies(t *testing.T) {
	forbidden := []string{"net/http", "database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/modelcontextprotocol"}
	layers := map[string][]string{
		"./skill":   {"github.com/loadout/loadout/source", "github.com/loadout/loadout/catalog", "github.com/loadout/loadout/render", "github.com/loadout/loadout/config"},
		"./render":  {"github.com/loadout/loadout/source", "github.com/loadout/loadout/catalog", "github.com/loadout/loadout/config"},
		"./source":  {"github.com/loadout/loadout/catalog", "github.com/loadout/loadout/render", "github.com/loadout/loadout/config"},
		"./catalog": {"github.com/loadout/loadout/config"},
		"./config":  {},
		// The service sits between the transports and the catalog: no HTTP,
		// no MCP, no database driver (it uses the store's interface).
		"./service":  {"github.com/loadout/loadout/httpapi", "github.com/loadout/loadout/mcpserver", "github.com/loadout/loadout/wellknown", "github.com/loadout/loadout/sqlite", "github.com/loadout/loadout/postgres"},
		"./store":    {"github.com/loadout/loadout/catalog", "github.com/loadout/loadout/service"},
		"./portable": {"github.com/loadout/loadout/catalog", "github.com/loadout/loadout/store"},
		"./plugin":   {"github.com/loadout/loadout/catalog", "github.com/loadout/loadout/store"},
	}
	for pkg, above := range layers {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range append(forbidden, above...) {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
