package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

const goodOIDC = `"issuer": "https://login.example.com/realms/main", "clientId": "loadout", "clientSecretEnv": "LOADOUT_OIDC_SECRET",
	"redirectURL": "https://skills.example.com/ui/oidc/callback", "roles": {"groups": {"skills-admins": ["admin"], "data": ["author:team-data-*", "viewer"], "ops": ["agent:coder"]}, "emailDomains": {"example.com": ["viewer"]}}`

func oidcConfig(fields string) string {
	return `{"agents": [{"agentId": "coder", "skills": [{"root": "s"}]}], "oidc": {` + fields + `}}`
}

func TestOIDCSection(t *testing.T) {
	f, err := Parse([]byte(oidcConfig(goodOIDC+`, "recheck": "2m", "scopes": ["email", "groups"], "name": "Example SSO"`)), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	o := f.OIDC
	if o.ClientID != "loadout" || o.RecheckEvery() != 2*time.Minute || o.Roles.Groups["data"][0] != "author:team-data-*" || o.Name != "Example SSO" {
		t.Errorf("oidc = %+v", o)
	}
	f, _ = Parse([]byte(oidcConfig(goodOIDC)), "/cfg/loadout.json")
	if f.OIDC.RecheckEvery() != DefaultOIDCRecheck {
		t.Errorf("default recheck = %v", f.OIDC.RecheckEvery())
	}
	// A secret written in the file never prints.
	f, err = Parse([]byte(oidcConfig(strings.Replace(goodOIDC, `"clientSecretEnv": "LOADOUT_OIDC_SECRET"`, `"clientSecret": "hunter2"`, 1))), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.OIDC.ClientSecret.Reveal() != "hunter2" {
		t.Errorf("secret = %q", f.OIDC.ClientSecret.Reveal())
	}
	b, _ := json.Marshal(f.OIDC)
	if s := fmt.Sprintf("%v %+v %s", f.OIDC.ClientSecret, *f.OIDC, b); strings.Contains(s, "hunter2") {
		t.Errorf("the secret prints: %s", s)
	}
}

func TestOIDCErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ fields, want string }{
		{strings.Replace(goodOIDC, `"issuer": "https://login.example.com/realms/main", `, ``, 1), "oidc.issuer: is missing"},
		{strings.Replace(goodOIDC, `https://login.example.com/realms/main`, `login.example.com`, 1), "oidc.issuer: \"login.example.com\" is not an issuer URL"},
		{strings.Replace(goodOIDC, `https://login.example.com/realms/main`, `http://login.example.com`, 1), "oidc.issuer: \"http://login.example.com\": an issuer must use https"},
		{strings.Replace(goodOIDC, `"clientId": "loadout", `, ``, 1), "oidc.clientId: is missing"},
		{goodOIDC + `, "clientSecret": "x"`, "oidc.clientSecret: give clientSecret or clientSecretEnv, not both"},
		{strings.Replace(goodOIDC, `"LOADOUT_OIDC_SECRET"`, `"s3cr3t value!"`, 1), "oidc.clientSecretEnv: \"s3cr3t value!\" is not an environment variable name"},
		{strings.Replace(goodOIDC, `"redirectURL": "https://skills.example.com/ui/oidc/callback", `, ``, 1), "oidc.redirectURL: is missing"},
		{strings.Replace(goodOIDC, `https://skills.example.com/ui/oidc/callback`, `/ui/oidc/callback`, 1), "oidc.redirectURL: \"/ui/oidc/callback\" is not an absolute URL"},
		{strings.Replace(goodOIDC, `https://skills.example.com/ui/oidc/callback`, `https://skills.example.com/callback`, 1), "oidc.redirectURL: \"https://skills.example.com/callback\": its path must be /ui/oidc/callback"},
		{strings.Replace(goodOIDC, `https://skills.example.com/ui/oidc/callback`, `https://skills.example.com/ui/oidc/callback?next=https://evil.example`, 1), "is not an absolute URL"},
		{strings.Replace(goodOIDC, `https://skills.example.com/ui/oidc/callback`, `http://skills.example.com/ui/oidc/callback`, 1), "oidc.redirectURL: \"http://skills.example.com/ui/oidc/callback\": use https"},
		{goodOIDC + `, "scopes": ["email", "a b"]`, "oidc.scopes[1]: \"a b\" is not a scope"},
		{goodOIDC + `, "recheck": "5s"`, "oidc.recheck: 5s: give a duration of at least 10s"},
		{strings.Replace(goodOIDC, `"roles": {`, `"roles": {"groupsClaim": "a b", `, 1), "oidc.roles.groupsClaim"},
		{strings.Replace(goodOIDC, `"skills-admins": ["admin"]`, `"skills-admins": ["owner"]`, 1), `oidc.roles.groups["skills-admins"]`},
		{strings.Replace(goodOIDC, `"skills-admins": ["admin"]`, `"skills-admins": []`, 1), `oidc.roles.groups["skills-admins"]: a token needs at least one scope`},
		{strings.Replace(goodOIDC, `"skills-admins": ["admin"]`, `"skills-admins": ["index:coder"]`, 1), `oidc.roles.groups["skills-admins"]: "index:coder" is a link scope`},
		{strings.Replace(goodOIDC, `["agent:coder"]`, `["agent:nobody"]`, 1), `oidc.roles.groups["ops"]: "agent:nobody" names no agent`},
		{strings.Replace(goodOIDC, `"example.com": ["viewer"]`, `"@Example.com": ["viewer"]`, 1), `oidc.roles.emailDomains["@Example.com"]: "@Example.com" is not a domain`},
		{strings.Replace(goodOIDC, `"groups": {"skills-admins": ["admin"], "data": ["author:team-data-*", "viewer"], "ops": ["agent:coder"]}, "emailDomains": {"example.com": ["viewer"]}`, ``, 1), "oidc.roles: maps no claim to a role"},
		{goodOIDC + `, "unknown": 1`, `oidc: unknown key "unknown"`},
	} {
		_, err := Parse([]byte(oidcConfig(c.fields)), "/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/cfg/loadout.json") {
			t.Errorf("%s\n  = %v\n  want it to contain %q", c.fields, err, c.want)
		}
	}
	// The bound on mappings: at it accepted, one past it refused.
	groups := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"g%d": ["viewer"]`, i)
		}
		return b.String()
	}
	base := `"issuer": "https://login.example.com", "clientId": "l", "redirectURL": "https://s.example.com/ui/oidc/callback", "roles": {"groups": {%s}}`
	if _, err := Parse([]byte(oidcConfig(fmt.Sprintf(base, groups(MaxOIDCMappings)))), "/cfg/loadout.json"); err != nil {
		t.Errorf("%d mappings: %v", MaxOIDCMappings, err)
	}
	if _, err := Parse([]byte(oidcConfig(fmt.Sprintf(base, groups(MaxOIDCMappings+1)))), "/cfg/loadout.json"); err == nil || !strings.Contains(err.Error(), "oidc.roles: has 1001 entries") {
		t.Errorf("%d mappings: %v", MaxOIDCMappings+1, err)
	}
	// Loopback http is for tests.
	if _, err := Parse([]byte(oidcConfig(fmt.Sprintf(strings.Replace(strings.Replace(base, "https://login.example.com", "http://127.0.0.1:5556/", 1), "https://s.example.com", "http://localhost:7777", 1), `"a": ["viewer"]`))), "/cfg/loadout.json"); err != nil {
		t.Errorf("loopback http: %v", err)
	}
}
