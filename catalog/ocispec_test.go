package catalog

import (
	"strings"
	"testing"
)

// TestOCISpec: an oci source names a repository and exactly one of tag,
// digest and tags; every refusal names its field. Each rule has a "yes"
// and a "no" case, and the length bounds are tried at and past the limit.
func TestOCISpec(t *testing.T) {
	const repo = "registry.example.com/team/skills/pdf"
	dig := "sha256:" + strings.Repeat("a", 64)
	long := "r.example.com/" + strings.Repeat("a", MaxOCIRepository-len("r.example.com/"))
	for _, s := range []SourceSpec{
		{OCI: repo, Tag: "1.2.0"},
		{OCI: repo, Digest: dig},
		{OCI: repo, Tags: ">=1.2 <2"},
		{OCI: repo, Tags: strings.Repeat("1", MaxTagRange)},
		{OCI: repo, Tags: "^1.4 || ~2.0.1, >=3.0.0-rc.1"},
		{OCI: "localhost:5000/skills/pdf", Tag: "latest", Insecure: true},
		{OCI: "127.0.0.1:5000/a/b_c/d-e.f", Tag: "v1"},
		{OCI: repo, Tag: strings.Repeat("t", 128)},
		{OCI: repo, Tag: "1.0.0", Username: "${REG_USER}", Password: "${REG_PASSWORD}"},
		{OCI: long, Tag: "1"},
		{OCI: repo, Tag: "1", Every: "1h", ID: "pdf"},
	} {
		if err := (&AgentSpec{AgentID: "a", Skills: []SourceSpec{s}}).Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, c := range []struct {
		s    SourceSpec
		want string
	}{
		{SourceSpec{OCI: repo}, `skills[0].tag an oci source names exactly one of "tag"`},
		{SourceSpec{OCI: repo, Tag: "1", Digest: dig}, `skills[0].tag an oci source names exactly one`},
		{SourceSpec{OCI: repo, Tag: "1", Tags: ">=1"}, `skills[0].tag an oci source names exactly one`},
		{SourceSpec{OCI: "https://" + repo, Tag: "1"}, `skills[0].oci "https://registry.example.com/team/skills/pdf": give the repository without a scheme`},
		{SourceSpec{OCI: "pdf", Tag: "1"}, `skills[0].oci "pdf": give the registry's host and the repository`},
		{SourceSpec{OCI: repo + ":1.0", Tag: "1"}, `not in the repository`},
		{SourceSpec{OCI: "registry.example.com/Team/pdf", Tag: "1"}, `"Team" is not a repository name part`},
		{SourceSpec{OCI: "bad_host!/team/pdf", Tag: "1"}, `is not a registry host`},
		{SourceSpec{OCI: long + "a", Tag: "1"}, `skills[0].oci is 256 characters, over the limit of 255`},
		{SourceSpec{OCI: repo, Tag: strings.Repeat("t", 129)}, `skills[0].tag`},
		{SourceSpec{OCI: repo, Tag: ".hidden"}, `is not an OCI tag`},
		{SourceSpec{OCI: repo, Digest: "sha256:abc"}, `skills[0].digest "sha256:abc" is not a manifest digest`},
		{SourceSpec{OCI: repo, Tags: "banana"}, `skills[0].tags "banana" is not a semver range`},
		{SourceSpec{OCI: repo, Tags: ">=1.2 && <2"}, `skills[0].tags ">=1.2 && <2" is not a semver range`},
		{SourceSpec{OCI: repo, Tags: " "}, `skills[0].tags is empty`},
		{SourceSpec{OCI: repo, Tags: strings.Repeat("1", MaxTagRange+1)}, `skills[0].tags is 257 characters, over the limit of 256`},
		{SourceSpec{OCI: repo, Tag: "1", Ref: "main"}, `skills[0].ref is for git sources`},
		{SourceSpec{OCI: repo, Tag: "1", Paths: []string{"skills"}}, `skills[0].paths is for git sources`},
		{SourceSpec{OCI: repo, Tag: "1", Token: "${T}"}, `skills[0].token is for git and index sources`},
		{SourceSpec{OCI: repo, Tag: "1", AllowedOrigins: []string{"https://cdn.example.com"}}, `skills[0].allowedOrigins is for index sources only`},
		{SourceSpec{OCI: repo, Tag: "1", Username: "${U}"}, `skills[0].username "username" and "password" go together`},
		{SourceSpec{OCI: repo, Tag: "1", Username: "ci", Password: "${P}"}, `skills[0].username must name an environment variable`},
		{SourceSpec{OCI: repo, Tag: "1", Username: "${U}", Password: "hunter2"}, `skills[0].password must name an environment variable`},
		{SourceSpec{Git: "https://git.example.com/s.git", Tag: "1"}, `skills[0].tag is for oci sources only`},
		{SourceSpec{Root: "skills", Insecure: true}, `skills[0].insecure is for oci sources only`},
		{SourceSpec{Index: "https://x.example.com/index.json", Username: "${U}"}, `skills[0].username is for oci sources only`},
		{SourceSpec{OCI: repo, Git: "https://git.example.com/s.git", Tag: "1"}, `must name exactly one source`},
	} {
		err := (&AgentSpec{AgentID: "a", Skills: []SourceSpec{c.s}}).Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want it to contain %q", c.s, err, c.want)
		}
	}
}

// TestOCIRemoteID: the default id is the repository's last part and the
// tag, or 12 digits of the digest; a range has none.
func TestOCIRemoteID(t *testing.T) {
	dig := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		s    SourceSpec
		want string
	}{
		{SourceSpec{OCI: "r.example.com/team/pdf", Tag: "1.2.0"}, "pdf@1.2.0"},
		{SourceSpec{OCI: "r.example.com/team/pdf", Digest: dig}, "pdf@sha256-ababababab"[:len("pdf@sha256-")] + "abababababab"},
		{SourceSpec{OCI: "r.example.com/team/pdf", Tags: ">=1"}, "pdf"},
		{SourceSpec{OCI: "r.example.com/team/pdf", Tag: "1", ID: "mine"}, "mine"},
	} {
		if got := c.s.RemoteID(); got != c.want {
			t.Errorf("%+v: id %q, want %q", c.s, got, c.want)
		}
		if !c.s.Remote() || c.s.RemoteKind() != "oci" {
			t.Errorf("%+v: not a remote oci source", c.s)
		}
	}
}
