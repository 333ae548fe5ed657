package config

import (
	"strings"
	"testing"
	"time"
)

// TestMCPAuthSection: a good section reads whole; each bad value is
// refused with an error naming its field.
func TestMCPAuthSection(t *testing.T) {
	const agents = `"agents": [{"agentId": "coder", "skills": [{"root": "s"}]}]`
	f, err := Parse([]byte(`{`+agents+`, "mcpAuth": {
  "publicUrl": "https://skills.example.com",
  "issuers": [{"issuer": "https://idp.example.com/", "jwksUri": "https://idp.example.com/keys"}],
  "audiences": ["api://loadout"], "scopes": ["loadout"],
  "grants": [{"group": "dev", "grant": "agent:coder"}, {"scope": "loadout:admin", "grant": "admin"}],
  "leeway": "5m", "maxTokenBytes": 32768, "cacheSize": 10, "cacheTtl": "1m", "jwksRefresh": "1s", "timeout": "1m"}}`), "/x/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	m := f.MCPAuth
	if m == nil || m.PublicURL != "https://skills.example.com" || m.Issuers[0].JWKSURI != "https://idp.example.com/keys" || m.Grants[1].Grant != "admin" ||
		time.Duration(m.Leeway) != 5*time.Minute || m.MaxTokenBytes != 32768 || m.CacheSize != 10 {
		t.Errorf("mcpAuth = %+v", m)
	}
	ok := func(extra string) string {
		return `{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://idp.example.com/"}], "grants": [{"group": "dev", "grant": "agent:coder"}]` + extra + `}}`
	}
	if _, err := Parse([]byte(ok("")), "/x/loadout.json"); err != nil {
		t.Fatalf("the least section: %v", err)
	}
	for text, want := range map[string]string{
		`{` + agents + `, "mcpAuth": {"grants": [{"group": "dev", "grant": "agent:coder"}]}}`:                                                                                    "mcpAuth.issuers: is empty",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://idp.example.com/"}]}}`:                                                                                     "mcpAuth.grants: is empty",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "http://idp.example.com/"}], "grants": [{"group": "g", "grant": "admin"}]}}`:                                        "mcpAuth.issuers[0].issuer: \"http://idp.example.com/\": must be https",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "idp.example.com"}], "grants": [{"group": "g", "grant": "admin"}]}}`:                                                "mcpAuth.issuers[0].issuer",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/"}, {"issuer": "https://b/"}], "grants": [{"group": "g", "grant": "admin"}]}}`:                           "mcpAuth.issuers[0].name: is empty",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/", "name": "x"}, {"issuer": "https://a/", "name": "y"}], "grants": [{"group": "g", "grant": "admin"}]}}`: "mcpAuth.issuers[1].issuer",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/", "name": "x"}, {"issuer": "https://b/", "name": "x"}], "grants": [{"group": "g", "grant": "admin"}]}}`: "mcpAuth.issuers[1].name",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/", "name": "Bad Name"}], "grants": [{"group": "g", "grant": "admin"}]}}`:                                 "mcpAuth.issuers[0].name",
		ok(`, "publicUrl": "skills.example.com"`):        "mcpAuth.publicUrl",
		ok(`, "publicUrl": "http://skills.example.com"`): "mcpAuth.publicUrl: \"http://skills.example.com\": OAuth needs https",
		ok(`, "audiences": [""]`):                        "mcpAuth.audiences[0]",
		ok(`, "scopes": ["two words"]`):                  "mcpAuth.scopes[0]",
		ok(`, "algorithms": ["HS256"]`):                  "mcpAuth.algorithms: \"HS256\"",
		ok(`, "algorithms": ["none"]`):                   "mcpAuth.algorithms: \"none\"",
		ok(`, "leeway": "6m"`):                           "mcpAuth.leeway",
		ok(`, "maxTokenBytes": 32769`):                   "mcpAuth.maxTokenBytes: 32769",
		ok(`, "cacheSize": -1`):                          "mcpAuth.cacheSize",
		ok(`, "jwksRefresh": "10ms"`):                    "mcpAuth.jwksRefresh",
		ok(`, "timeout": "61s"`):                         "mcpAuth.timeout",
		ok(`, "issuer": "x"`):                            `mcpAuth: unknown key "issuer"`,
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/"}], "grants": [{"grant": "admin"}]}}`:                             "mcpAuth.grants[0]: gives neither",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/"}], "grants": [{"scope": "s", "group": "g", "grant": "admin"}]}}`: "mcpAuth.grants[0]: gives both",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/"}], "grants": [{"group": "g", "grant": "agent:nobody"}]}}`:        "mcpAuth.grants[0].grant: \"agent:nobody\": no agent",
		`{` + agents + `, "mcpAuth": {"issuers": [{"issuer": "https://a/"}], "grants": [{"group": "g", "grant": "viewer"}]}}`:              "mcpAuth.grants[0].grant: \"viewer\"",
	} {
		_, err := Parse([]byte(text), "/x/loadout.json")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "/x/loadout.json") {
			t.Errorf("%s:\n got %v\nwant %q", text, err, want)
		}
	}
	// Loopback providers may use http (tests, a provider on this machine).
	if _, err := Parse([]byte(`{`+agents+`, "mcpAuth": {"publicUrl": "http://127.0.0.1:7777", "issuers": [{"issuer": "http://127.0.0.1:5556/"}], "grants": [{"group": "g", "grant": "admin"}]}}`), "/x/loadout.json"); err != nil {
		t.Errorf("loopback http: %v", err)
	}
}
