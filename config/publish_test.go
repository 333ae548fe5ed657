package config

import (
	"strings"
	"testing"
)

func TestPublish(t *testing.T) {
	f, err := Parse([]byte(`{"publish": {"registry": "registry.example.com:5000/team/skills", "insecure": true, "username": "ci", "password": "${REG_TOKEN}", "timeout": "30s"}}`), "loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Publish; p.Registry != "registry.example.com:5000/team/skills" || !p.Insecure || p.Username != "ci" || p.Password != "${REG_TOKEN}" {
		t.Fatalf("publish %+v", p)
	}
	for _, c := range []struct{ json, want string }{
		{`{"registry": "https://registry.example.com/team"}`, `publish.registry: "https://registry.example.com/team" has a scheme`},
		{`{"registry": "registry.example.com"}`, `has no path after the host`},
		{`{"registry": "registry.example.com/team/skills:1.0"}`, `which is not a repository path`},
		{`{"registry": "registry.example.com/Team"}`, `which is not a repository path`},
		{`{"registry": "registry.example.com/team@sha256:abc"}`, `has a digest`},
		{`{"registry": "bad_host!/team"}`, `which is not a host[:port]`},
		{`{"registry": "` + strings.Repeat("a", 251) + `/team"}`, `is over 255 bytes`},
		{`{"insecure": true}`, `publish.registry: is empty, but other publish keys are set`},
		{`{"registry": "r.example.com/t", "username": "ci"}`, `publish.password: username and password go together`},
		{`{"registry": "r.example.com/t", "username": "ci", "password": "hunter2"}`, `publish.password: must name an environment variable`},
		{`{"registry": "r.example.com/t", "timeout": "11m"}`, `publish.timeout: 11m0s: give a duration from 1s to 10m0s`},
	} {
		_, err := Parse([]byte(`{"publish": `+c.json+`}`), "loadout.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.json, err, c.want)
		}
	}
	// At the bounds: 255 bytes and 10 minutes are accepted.
	reg := strings.Repeat("a", 250) + "/team"
	if _, err := Parse([]byte(`{"publish": {"registry": "`+reg+`", "timeout": "10m"}}`), "loadout.json"); err != nil || len(reg) != 255 {
		t.Errorf("at the bounds: %v", err)
	}
}
