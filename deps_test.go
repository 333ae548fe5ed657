package loadout_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/loadout/loadout"

// layers lists, for every package of the module, the packages of the module
// it may import directly. It is an allowlist: an import not listed here, or
// a new package not listed at all, fails the test, so every arrow is a
// decision. The arrows point one way: transports (httpapi, mcpserver,
// wellknown) → service → catalog → source → skill, and catalog → render →
// skill. The store, plugins and portable formats never import the catalog
// (it reaches them through its Provider interface, wired up by cmd), and
// the catalog never imports them, config, the service or a transport.
var layers = map[string][]string{
	// The format and the library.
	"skill":                 {"internal/pyrepr"},
	"render":                {"skill", "internal/terms"},
	"safety":                {"skill", "internal/safefile"},
	"source":                {"skill", "internal/ignore", "internal/safefile", "internal/dirent", "internal/fnv1a"},
	"catalog":               {"source", "render", "skill", "safety", "internal/textdist", "internal/terms", "internal/obs"},
	"config":                {"catalog", "source", "safety", "store", "internal/jsonc"},
	"internal/ignore":       {},
	"internal/jsonc":        {"internal/textdist", "internal/jsondepth"},
	"internal/jsondepth":    {},
	"internal/testutil":     {"internal/cputime"},  // imported by tests only
	"internal/pgtest":       {},                    // imported by tests only: a PostgreSQL schema per test
	"internal/browsertest":  {"internal/testutil"}, // imported by tests only: the real binary, and Chromium; the waits of testutil
	"webui/internal/bundle": {},                    // go generate: the editor bundle, with esbuild
	"compat":                {},                    // test-only: runs the pinned MCP and skills clients against the real binary
	"attack":                {},                    // test-only: the attack suite, against the real binary
	"internal/pyrepr":       {},
	"internal/semrange":     {}, // semver ranges over tags: the one importer of Masterminds/semver
	"internal/textdist":     {},
	"internal/terms":        {}, // search terms: shared by the index and the listing's summaries
	"internal/linediff":     {}, // line diffs: the review API's and the UI's
	"internal/safefile":     {"skill"},
	"internal/dirent":       {},
	"internal/fnv1a":        {},
	"internal/cputime":      {},
	"internal/obs":          {}, // the seam between the library and its observers (metrics, tracing): no dependency
	"examples":              {},
	"watch":                 {"internal/dirent", "internal/fnv1a"},
	// Stores, plugins and portable formats: the format (plugins scan their
	// skill folders with source), never the catalog.
	"store":           {"skill"},
	"store/sqlstore":  {"store", "skill", "internal/obs"},
	"store/storetest": {"store", "skill", "internal/testutil"},
	"sqlite":          {"store/sqlstore"},
	"postgres":        {"store/sqlstore"},
	"portable":        {"skill", "internal/safefile", "internal/jsondepth", "internal/dirent", "internal/fnv1a"},
	"plugin":          {"skill", "source", "internal/jsonc", "internal/safefile"},
	// The service sits between the transports and the catalog; it uses the
	// store's interface, never a driver.
	"service": {"catalog", "store", "render", "skill", "safety", "internal/linediff"},
	// Transports.
	"httpapi":   {"service", "catalog", "store", "portable", "render", "skill", "safety", "internal/cputime", "internal/errstatus", "internal/httpbody", "internal/inert", "internal/obs"},
	"mcpserver": {"service", "catalog", "store", "render", "skill", "internal/errstatus", "internal/obs"},
	"wellknown": {"service", "catalog", "store", "render", "skill", "internal/errstatus", "internal/httpbody", "internal/inert"},
	"webui":     {"service", "catalog", "store", "portable", "render", "skill", "internal/errstatus", "internal/httpbody", "internal/inert", "identity", "internal/linediff"},
	// The company's identity provider: go-oidc and x/oauth2, nothing of loadout's.
	"identity":           {},
	"internal/oidctest":  {"internal/testutil"}, // imported by tests only: a real OpenID provider
	"internal/errstatus": {"service"},
	// Observers: the one package importing the Prometheus client; it
	// reads the service's state and the marks of internal/obs.
	"metrics":           {"service", "internal/obs"},
	"internal/httpbody": {}, // cached HTTP answers: ETag, 304, gzip made once
	"internal/inert":    {}, // the headers of every answer carrying a skill's bytes
	// Remote sources: snapshots of git repositories and skill indexes. The
	// git library is in remote/gitfetch only; cmd wires it in.
	"remote":          {"skill", "source", "internal/safefile", "internal/obs"},
	"remote/gitfetch": {"remote", "skill"},
	"remote/ocifetch": {"remote", "oci", "portable", "internal/semrange", "signing"}, // oci sources: the registry client is package oci's
	// OCI registries: the one package importing oras-go and the OCI
	// image-spec; cmd (and the remote source, through its own seam) use it.
	"oci":                   {"skill", "portable"},
	"internal/registrytest": {"internal/testutil"},
	// Signatures: the one package importing sigstore-go (cosign's format,
	// keyed and keyless), over package oci's client.
	"signing":             {"oci", "remote"},
	"signing/signingtest": {"oci"}, // imported by tests only: keyless signatures from sigstore-go's virtual Sigstore // imported by tests only: a real registry (Debian's docker-registry)
	// Traces: the one package that imports OpenTelemetry; cmd registers it
	// as the observer of internal/obs.
	"tracing": {"internal/obs"},

	"safety/internal/gentable": {}, // go generate: the default-ignorable table, from Go's unicode tables
}

// free are the packages that wire everything together (or measure it):
// they may import anything.
var free = []string{"cmd", "bench", "mcpserver/internal"}

// library are the packages other Go agent frameworks import: they must not
// pull in a database, an HTTP server or MCP, even indirectly.
var library = []string{"skill", "render", "safety", "source", "catalog", "config", "store", "portable", "plugin", "service", "watch", "examples", "internal/ignore", "internal/jsonc", "internal/pyrepr", "internal/textdist", "internal/safefile", "internal/jsondepth", "internal/linediff"}

// Drivers and protocols no library package may depend on; store/sqlstore
// is the one user of database/sql outside the drivers.
var (
	forbiddenInLibrary   = []string{"net/http", "database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/modelcontextprotocol", "go.opentelemetry.io"}
	forbiddenInTransport = []string{"database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "go.opentelemetry.io"}
)

func TestLibraryDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(parts[0], module), "/")
		imports, deps := strings.Fields(parts[1]), strings.Fields(parts[2])
		// One package per outside dependency: the Prometheus client is
		// the metrics package's alone (free packages included).
		for _, imp := range imports {
			if strings.HasPrefix(imp, "github.com/prometheus/") && pkg != "metrics" {
				t.Errorf("%s imports %s: only package metrics imports the Prometheus client", pkg, imp)
			}
		}
		if isFree(pkg) {
			continue
		}
		allowed, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s is not in deps_test.go's layers: add it with the packages it may import", parts[0])
			continue
		}
		seen[pkg] = true
		for _, imp := range imports {
			rel, internal := strings.CutPrefix(imp, module+"/")
			if !internal {
				continue
			}
			if !contains(allowed, rel) {
				t.Errorf("%s imports %s; it may import only %v (see README, Go library)", pkg, rel, allowed)
			}
		}
		var forbidden []string
		switch {
		case contains(library, pkg):
			forbidden = forbiddenInLibrary
		case pkg == "httpapi" || pkg == "mcpserver" || pkg == "wellknown" || pkg == "webui":
			forbidden = forbiddenInTransport
		}
		for _, dep := range deps {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
	var gone []string
	for pkg := range layers {
		if !seen[pkg] {
			gone = append(gone, pkg)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		t.Errorf("deps_test.go's layers name packages that do not exist: %v", gone)
	}
}

func isFree(pkg string) bool {
	if pkg == "" { // the module's doc package
		return true
	}
	for _, f := range free {
		if pkg == f || strings.HasPrefix(pkg, f+"/") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// identityLibs are the outside libraries of OpenID Connect and OAuth:
// package identity is their one importer (tests aside).
var identityLibs = []string{"github.com/coreos/go-oidc", "github.com/go-jose/go-jose", "golang.org/x/oauth2"}

func TestIdentityLibrariesOnlyInIdentity(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		if pkg == module+"/identity" {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			for _, lib := range identityLibs {
				if imp == lib || strings.HasPrefix(imp, lib+"/") {
					t.Errorf("%s imports %s: only package identity may (see deps_test.go's layers)", pkg, imp)
				}
			}
		}
	}
}
