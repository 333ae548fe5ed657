package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseResolvesPathsAndAcceptsComments(t *testing.T) {
	home, _ := os.UserHomeDir()
	text := `// agents for the team
{
  "$schema": "./loadout.schema.json",
  "budget": 6000,
  "agents": [
    {
      "agentId": "coding",
      "displayName": "Coding",
      "description": "Writes and edits code.",
      /* an example */
      "skills": [
        { "root": "~/skills", "available": ["*"], "inline": ["my-critical-*"] },
        { "root": "worktrees/assistant/skills" },
        { "root": "/abs/skills", },
      ],
      "preload": ["java-expert", "./adhoc/new-skill"],
      "tools": ["bash"],
    },
  ],
  "limits": { "maxDepth": 8 },
}`
	f, err := Parse([]byte(text), "/etc/loadout/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	a := f.Agents[0]
	got := []string{a.Skills[0].Root, a.Skills[1].Root, a.Skills[2].Root, a.Preload[0], a.Preload[1]}
	want := []string{filepath.Join(home, "skills"), "/etc/loadout/worktrees/assistant/skills", "/abs/skills", "java-expert", "/etc/loadout/adhoc/new-skill"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("path %d = %q, want %q", i, got[i], want[i])
		}
	}
	if a.Skills[1].Available != nil || a.Skills[1].Inline != nil {
		t.Error("omitted patterns must stay nil so the default applies")
	}
	opts := f.CatalogOptions()
	if opts.Budget != 6000 || opts.Scan.MaxDepth != 8 {
		t.Errorf("options: %+v", opts)
	}
}

func TestParseErrorsNameFileAndField(t *testing.T) {
	cases := map[string]string{
		`{"agents": [{"agentId": "a", "skils": []}]}`:                                    `agents[0]: unknown key "skils" (did you mean "skills"?)`,
		`{"agents": [{"agentId": "a", "skills": [{"root": "x", "inline": "y"}]}]}`:       `agents[0].skills[0].inline`,
		`{"agents": [{"displayName": "x"}]}`:                                             `agents[0].agentId: is required`,
		`{"agents": [{"agentId": "a"}, {"agentId": "a"}]}`:                               `agents[1].agentId: "a" is already the id of agents[0]`,
		`{"agents": [{"agentId": "a", "skills": [{"available": ["*"]}]}]}`:               `agents[0].skills[0]: must name exactly one source`,
		`{"agents": [{"agentId": "a", "format": "yaml"}]}`:                               `agents[0].format: "yaml" is not a prompt format`,
		`{"agents": [{"agentId": "a", "skills": [{"root": "x", "available": ["[a"]}]}]}`: `agents[0].skills[0].available[0]: pattern "[a" is malformed`,
		"{\n  \"agents\": [\n    {\"agentId\": \"a\",,}\n  ]\n}":                         `/cfg/loadout.json:3:`,
		`{"limits": {"maxDirs": -1}}`:                                                    `limits: limits must be positive`,
		`{"agent": []}`:                                                                  `unknown key "agent" (did you mean "agents"?)`,
		`{"watch": {"maxWatches": -1}}`:                                                  `watch.maxWatches: must be a positive number`,
		`{"watch": {"pollInterval": "5"}}`:                                               `watch.pollInterval: "5": give a duration`,
		`{"server": {"readTimeout": "soon"}}`:                                            `server.readTimeout: "soon" is not a duration`,
		`{"server": {"idleTimeout": 30}}`:                                                `server.idleTimeout`,
		`{"server": {"allowedHosts": ["https://skills.example.com/"]}}`:                  `server.allowedHosts[0]: "https://skills.example.com/" has a scheme`,
		`{"server": {"allowedHosts": ["a b"]}}`:                                          `server.allowedHosts[0]: "a b" is not a host name`,
		`{"server": {"allowedOrigins": ["ui.example.com"]}}`:                             `server.allowedOrigins[0]: "ui.example.com" is not an origin`,
		`{"server": {"maxConns": -1}}`:                                                   `server.maxConns: must be positive`,
		`{"server": {"mcpSessionIdle": "-1m"}}`:                                          `server.mcpSessionIdle: must be positive`,
		`{"server": {"uiSessionLifetime": "-1h"}}`:                                       `server.uiSessionLifetime: must be positive`,
		`{"server": {"shutdownDelay": "-1s"}}`:                                           `server.shutdownDelay: -1s: give a duration from 0 to 1m0s`,
		`{"server": {"shutdownDelay": "61s"}}`:                                           `server.shutdownDelay: 1m1s: give a duration from 0 to 1m0s`,
		`{"server": {"shutdownTimeout": "10m1s"}}`:                                       `server.shutdownTimeout: 10m1s: give a duration from 0 to 10m0s`,
		`{"server": {"shutdownTimeout": "-1ns"}}`:                                        `server.shutdownTimeout: -1ns: give a duration from 0 to 10m0s`,
		`{"server": {"shutdownDelay": 5}}`:                                               `server.shutdownDelay`,
		`{"server": {"maxConn": 5}}`:                                                     `unknown key "maxConn" (did you mean "maxConns"?)`,
		`{"receipts": {"maxRows": -5}}`:                                                  `receipts.maxRows: -5 is negative`,
		`{"receipts": {"maxBytes": -5}}`:                                                 `receipts.maxBytes: -5 is negative`,
		`{"storePool": {"maxConns": -1}}`:                                                `storePool: maxConns and maxIdleTime must be positive`,
		`{"storePool": {"maxIdleTime": "often"}}`:                                        `storePool.maxIdleTime`,
		`{"safety": {"warn": ["safety-nope"]}}`:                                          `safety: warn[0]: unknown code "safety-nope"`,
		`{"safety": {"gate": ["folder", "folders"]}}`:                                    `safety.gate[1]: "folders" is not a source kind the policy can gate: use "folder" or "plugin"`,
		`{"safety": {"gate": ["store"]}}`:                                                `safety.gate[0]: "store": store writes and remote syncs are always gated`,
		`{"safety": {"gates": ["folder"]}}`:                                              `unknown key "gates" (did you mean "gate"?)`,
		`{"agents": [{"agentId": "a", "skills": [{"git": "x", "token": "literal"}]}]}`:   `agents[0].skills[0].token: must name an environment variable`,
		`{"agents": [{"agentId": "a", "skills": [{"git": "x", "every": "5s"}]}]}`:        `agents[0].skills[0].every: "5s": give a duration of at least 1m0s`,
		`{"agents": [{"agentId": "a", "skills": [{"root": "x", "ref": "main"}]}]}`:       `agents[0].skills[0].ref: is for git and index sources only`,
		`{"agents": [{"agentId": "a", "skills": [{"index": "ftp://h/i.json"}]}]}`:        `agents[0].skills[0].index: "ftp://h/i.json" is not an http(s) URL`,
		`{"receipts": {"keepdays": 3}}`:                                                  `unknown key "keepdays"`,
		`{"agents": [{"agentId": "a", "skills": [{"index": "https://h/i.json", "allowedOrigins": ["https://cdn.example.com/"]}]}]}`:         `agents[0].skills[0].allowedOrigins[0]: "https://cdn.example.com/" has more than an origin`,
		`{"agents": [{"agentId": "a", "skills": [{"index": "https://h/i.json", "allowedOrigins": ["cdn.example.com"]}]}]}`:                  `agents[0].skills[0].allowedOrigins[0]: "cdn.example.com": give an http:// or https:// origin`,
		`{"agents": [{"agentId": "a", "skills": [{"index": "https://h/i.json", "allowedOrigins": ["https://*.example.com"]}]}]}`:            `agents[0].skills[0].allowedOrigins[0]: "https://*.example.com": its host is not a DNS name`,
		`{"agents": [{"agentId": "a", "skills": [{"index": "https://h/i.json", "allowedOrigins": ["https://a.io", "HTTPS://A.io:443"]}]}]}`: `agents[0].skills[0].allowedOrigins[1]: "HTTPS://A.io:443" is the same origin as allowedOrigins[0]`,
		`{"agents": [{"agentId": "a", "skills": [{"git": "x", "allowedOrigins": ["https://a.io"]}]}]}`:                                      `agents[0].skills[0].allowedOrigins: is for index sources only`,
		`{"agents": [{"agentId": "a", "skills": [{"root": "x", "allowedOrigins": ["https://a.io"]}]}]}`:                                     `agents[0].skills[0].allowedOrigins: is for index sources only`,
		`{"agents": [{"agentId": "a", "pin": ["[a"]}]}`:                                                                                     `agents[0].pin[0]: pattern "[a" is malformed`,
		`{"agents": [{"agentId": "a", "budgetTokens": -3}]}`:                                                                                `agents[0].budgetTokens: -3 is negative`,
		`{"budgetTokens": -1}`:                                          `budgetTokens: -1: give a number of tokens`,
		`{"listing": {"usageDays": 500}}`:                               `listing.usageDays: 500: give a number of days between 1 and 400`,
		`{"listing": {"usageDays": 40}, "receipts": {"usageDays": 20}}`: `listing.usageDays: 40: give a number of days between 1 and 20`,
		`{"listing": {"refresh": "10s"}}`:                               `listing.refresh: 10s: give a duration of at least 1m0s`,
		`{"listing": {"refresh": "daily"}}`:                             `listing.refresh: "daily" is not a duration`,
		`{"listing": {"replan": "59s"}}`:                                `listing.replan: 59s: give a duration of at least 1m0s`,
		`{"listing": {"usagedays": 7}}`:                                 `unknown key "usagedays"`,
		`{"audit": {"keepDays": -1}}`:                                   `audit.keepDays: -1 is negative`,
		`{"audit": {"keepdays": 30}}`:                                   `unknown key "keepdays"`,
	}
	for text, want := range cases {
		_, err := Parse([]byte(text), "/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "/cfg/loadout.json") {
			t.Errorf("Parse(%s)\n  = %v\n  want it to contain %q and the file name", text, err, want)
		}
	}
}

func TestServerSection(t *testing.T) {
	f, err := Parse([]byte(`{"server": {"allowedHosts": ["skills.example.com", "10.0.0.5:7777"], "allowedOrigins": ["https://ui.example.com"],
  "maxConns": 100, "maxConnsPerIP": 10, "readHeaderTimeout": "5s", "readTimeout": "2m", "writeTimeout": "30s", "idleTimeout": "1m30s",
  "mcpSessions": 50, "mcpSessionIdle": "1h", "uiSessions": 20, "uiSessionIdle": "30m", "uiSessionLifetime": "12h",
  "shutdownDelay": "1m", "shutdownTimeout": "10m"}}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	s := f.Server
	if len(s.AllowedHosts) != 2 || s.MaxConns != 100 || s.MaxConnsPerIP != 10 || s.MCPSessions != 50 ||
		time.Duration(s.ReadTimeout) != 2*time.Minute || time.Duration(s.IdleTimeout) != 90*time.Second || time.Duration(s.MCPSessionIdle) != time.Hour ||
		s.UISessions != 20 || time.Duration(s.UISessionIdle) != 30*time.Minute || time.Duration(s.UISessionLifetime) != 12*time.Hour ||
		time.Duration(s.ShutdownDelay) != time.Minute || time.Duration(s.ShutdownTimeout) != 10*time.Minute {
		t.Errorf("server: %+v", s)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "loadout.json"))
	if err == nil || !strings.Contains(err.Error(), "no such config file") {
		t.Errorf("err = %v", err)
	}
}

func TestStoreAndPlugins(t *testing.T) {
	f, err := Parse([]byte(`{"plugins": ["plugins/acme", "/opt/p"], "storeLimits": {"maxFiles": 10}, "watch": {"maxWatches": 5000, "pollInterval": "2s"}}`), "/srv/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Watch.MaxWatches != 5000 || f.Watch.Interval() != 2*time.Second {
		t.Errorf("watch: %+v", f.Watch)
	}
	f, err = Parse([]byte(`{"plugins": ["plugins/acme", "/opt/p"], "storeLimits": {"maxFiles": 10}, "receipts": {"keepDays": 3, "maxRows": 5000, "usageDays": 31}, "audit": {"keepDays": 365}}`), "/srv/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Receipts != (Receipts{KeepDays: 3, MaxRows: 5000, UsageDays: 31}) || f.Audit.KeepDays != 365 {
		t.Errorf("receipts and audit: %+v %+v", f.Receipts, f.Audit)
	}
	if f.StoreDSN() != "/srv/loadout.db" || f.Plugins[0] != "/srv/plugins/acme" || f.Plugins[1] != "/opt/p" || f.StoreLimits.MaxFiles != 10 {
		t.Errorf("got %q %v %+v", f.StoreDSN(), f.Plugins, f.StoreLimits)
	}
	for in, want := range map[string]string{
		"data/skills.db":              "/srv/data/skills.db",
		"postgres://u@h/db":           "postgres://u@h/db",
		"postgresql://u@h/db?x=y":     "postgresql://u@h/db?x=y",
		"/var/lib/loadout/loadout.db": "/var/lib/loadout/loadout.db",
	} {
		if got := ResolveStore("/srv", in); got != want {
			t.Errorf("ResolveStore(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Parse([]byte(`{"plugins": [""]}`), "/x/loadout.json"); err == nil || !strings.Contains(err.Error(), "plugins[0]") {
		t.Errorf("empty plugin: %v", err)
	}
}

// Item 11 of the trust review: an agent id that cannot be used in a URL or
// a token scope is refused when the config is read, naming the field.
func TestAgentIDsUsableEverywhere(t *testing.T) {
	for id, want := range map[string]string{
		"team/dev":              `agents[0].agentId: "team/dev": an agent id may hold only`,
		"a b":                   `agents[0].agentId: "a b": an agent id may hold only`,
		"-lead":                 `agents[0].agentId: "-lead"`,
		"*":                     `agents[0].agentId: "*"`,
		"agent:x":               `agents[0].agentId: "agent:x"`,
		strings.Repeat("a", 65): `is 65 characters long`,
	} {
		_, err := Parse([]byte(`{"agents": [{"agentId": `+strconv.Quote(id)+`, "skills": [{"root": "s"}]}]}`), "/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("agentId %q: %v, want %q", id, err, want)
		}
	}
	for _, id := range []string{"coder", "team.dev_2", "A-1", strings.Repeat("a", 64)} {
		if _, err := Parse([]byte(`{"agents": [{"agentId": "`+id+`", "skills": [{"root": "s"}]}]}`), "/cfg/loadout.json"); err != nil {
			t.Errorf("agentId %q refused: %v", id, err)
		}
	}
}

func TestListingSection(t *testing.T) {
	f, err := Parse([]byte(`{"budgetTokens": 2000, "listing": {"usageDays": 14, "refresh": "6h", "replan": "1m"}}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Listing.Days() != 14 || f.Listing.Every() != 6*time.Hour || f.Listing.ReplanEvery() != time.Minute || f.CatalogOptions().BudgetTokens != 2000 {
		t.Errorf("listing %+v, budgetTokens %d", f.Listing, f.CatalogOptions().BudgetTokens)
	}
	f, err = Parse([]byte(`{}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Listing.Days() != DefaultListingUsageDays || f.Listing.Every() != DefaultListingRefresh || f.Listing.ReplanEvery() != DefaultListingReplan {
		t.Errorf("defaults: %d days, every %s", f.Listing.Days(), f.Listing.Every())
	}
}

// TestSafetyGate: "gate" sits beside the policy's own keys in "safety",
// and reaches the catalog options with the policy; no gate, no Gate.
func TestSafetyGate(t *testing.T) {
	f, err := Parse([]byte(`{"safety": {"refuse": ["safety-secret-*"], "gate": ["folder", "plugin"]}}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	g := f.CatalogOptions().Gate
	if g == nil || g.Policy != f.SafetyPolicy() || strings.Join(g.Kinds, ",") != "folder,plugin" || strings.Join(f.SafetyPolicy().Refuse, ",") != "safety-secret-*" {
		t.Errorf("gate %+v, policy %+v", g, f.SafetyPolicy())
	}
	f, err = Parse([]byte(`{"safety": {"refuse": ["safety-secret-*"]}}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if g := f.CatalogOptions().Gate; g != nil {
		t.Errorf("no gate configured, got %+v", g)
	}
	if (&File{}).SafetyPolicy() != nil {
		t.Error("no safety section: the policy is the default (nil)")
	}
}

// TestRemoteIDShared: two agents may name the same remote source, which
// then shares its id; one id given to two different sources is refused,
// naming the second.
func TestRemoteIDShared(t *testing.T) {
	same := `{"agents": [{"agentId": "a", "skills": [{"git": "https://h/r.git", "id": "r"}]}, {"agentId": "b", "skills": [{"git": "https://h/r.git", "id": "r"}]}]}`
	if _, err := Parse([]byte(same), "/cfg/loadout.json"); err != nil {
		t.Errorf("one source named by two agents: %v", err)
	}
	diff := `{"agents": [{"agentId": "a", "skills": [{"git": "https://h/r.git", "id": "r"}]}, {"agentId": "b", "skills": [{"git": "https://h/other.git", "id": "r"}]}]}`
	_, err := Parse([]byte(diff), "/cfg/loadout.json")
	if err == nil || !strings.Contains(err.Error(), `agents[1].skills[0]`) || !strings.Contains(err.Error(), `remote source id "r" is used for two different sources`) {
		t.Errorf("two sources with one id: %v", err)
	}
}

// TestRemoteOCISection: remote.oci's bounds are read as durations and a
// count; a negative one is refused naming the section; an oci source's
// fields are checked with their path, and two sources with one id must
// agree on the oci fields too.
func TestRemoteOCISection(t *testing.T) {
	f, err := Parse([]byte(`{"remote": {"oci": {"responseTimeout": "2s", "fetchTimeout": "1m", "maxTags": 50}},
		"agents": [{"agentId": "a", "skills": [{"oci": "r.example.com/t/pdf", "tags": "^1.2", "username": "${U}", "password": "${P}"}]}]}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Remote.OCI; time.Duration(o.ResponseTimeout) != 2*time.Second || time.Duration(o.FetchTimeout) != time.Minute || o.MaxTags != 50 {
		t.Errorf("remote.oci = %+v", o)
	}
	if rs := f.Remotes(); len(rs) != 1 || rs[0].RemoteID() != "pdf" || rs[0].RemoteRef() != "^1.2" {
		t.Errorf("remotes %+v", rs)
	}
	for text, want := range map[string]string{
		`{"remote": {"oci": {"maxTags": -1}}}`:                                       `remote.oci: responseTimeout, fetchTimeout and maxTags must be positive`,
		`{"remote": {"oci": {"fetchTimeout": "-1s"}}}`:                               `remote.oci: responseTimeout, fetchTimeout and maxTags must be positive`,
		`{"remote": {"oci": {"responseTimout": "1s"}}}`:                              `unknown key "responseTimout"`,
		`{"agents": [{"agentId": "a", "skills": [{"oci": "r.example.com/t/pdf"}]}]}`: `agents[0].skills[0].tag: an oci source names exactly one`,
		`{"agents": [{"agentId": "a", "skills": [{"oci": "r.example.com/t/pdf", "tag": "1", "id": "x"}]}, {"agentId": "b", "skills": [{"oci": "r.example.com/t/pdf", "tag": "2", "id": "x"}]}]}`: `remote source id "x" is used for two different sources`,
	} {
		_, err := Parse([]byte(text), "/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s)\n  = %v\n  want it to contain %q", text, err, want)
		}
	}
}
