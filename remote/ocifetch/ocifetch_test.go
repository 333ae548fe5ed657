package ocifetch_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/remote/ocifetch"
	"github.com/loadout/loadout/skill"
)

// push packs a skill named name whose body is body and pushes it to the
// registry at repo:tag; it returns the manifest digest.
func push(t *testing.T, reg *registrytest.Registry, o oci.Options, repo, tag, name, body string) string {
	t.Helper()
	b := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: Do " + name + " things. Use when " + name + " is asked for.\n---\n" + body + "\n"),
		Files: []skill.BundleFile{{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho " + body + "\n"), Executable: true}}}
	a, err := oci.Pack(b, oci.Meta{Version: tag})
	if err != nil {
		t.Fatal(err)
	}
	o.NoDockerConfig = true
	o.RootCAs = reg.CAPool
	o.Insecure = !reg.TLS
	c, err := oci.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Push(context.Background(), reg.Ref(repo)+":"+tag, a, oci.PushOptions{})
	if err != nil {
		t.Fatalf("push %s:%s: %v", repo, tag, err)
	}
	return p.Manifest.Digest
}

type env struct {
	reg  *registrytest.Registry
	dir  string
	opt  ocifetch.Options
	gate func([]*skill.Skill) []skill.Diagnostic
	rev  bool
}

func (e *env) manager(t *testing.T, specs ...remote.Spec) *remote.Manager {
	t.Helper()
	m, err := remote.NewManager(specs, remote.Options{Cache: filepath.Join(e.dir, "cache"), LockPath: filepath.Join(e.dir, remote.LockName),
		Fetchers: map[string]func(remote.Spec) (remote.Fetcher, error){"oci": func(s remote.Spec) (remote.Fetcher, error) { return ocifetch.New(s, e.opt) }},
		Gate:     e.gate, Review: e.rev})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func newEnv(t *testing.T, o registrytest.Options) *env {
	reg := registrytest.Start(t, o)
	return &env{reg: reg, dir: t.TempDir(), opt: ocifetch.Options{RootCAs: reg.CAPool, DockerConfig: filepath.Join(t.TempDir(), "none.json")}}
}

func body(t *testing.T, m *remote.Manager, id, name string) string {
	t.Helper()
	sks, diags := m.Skills(id)
	for _, sk := range sks {
		if sk.Name == name {
			data, err := os.ReadFile(filepath.Join(sk.Dir, "SKILL.md"))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
	t.Fatalf("source %s serves no skill %s (diagnostics %v)", id, name, diags)
	return ""
}

// TestSyncPinsTheManifestDigest: a tag is pinned by the digest of the
// manifest it names, with the skill's content digest; the skill is served
// with its executable bit; a tag moved to another manifest is a move for
// Check (the pin holds) and Sync moves it; a registry gone keeps the last
// good snapshot served.
func TestSyncPinsTheManifestDigest(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	d1 := push(t, e.reg, oci.Options{}, "team/skills/pdf", "1.0.0", "pdf", "one")
	spec := remote.Spec{OCI: e.reg.Ref("team/skills/pdf"), Tag: "1.0.0", Ref: "1.0.0", Insecure: true}
	m := e.manager(t, spec)
	id := m.Specs()[0].ID
	if id != "pdf@1.0.0" {
		t.Errorf("default id %q, want pdf@1.0.0", id)
	}
	ch := m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || ch.To != d1 {
		t.Fatalf("first sync: %+v, want moved to %s", ch, d1)
	}
	pin := m.Pin(id)
	if pin.Kind != "oci" || pin.Revision != d1 || pin.URL != spec.OCI || pin.Ref != "1.0.0" || len(pin.Skills) != 1 || !strings.HasPrefix(pin.Skills["pdf"], "sha256:") {
		t.Fatalf("pin %+v", pin)
	}
	if got := body(t, m, id, "pdf"); !strings.Contains(got, "one") {
		t.Errorf("served SKILL.md %q", got)
	}
	sks, _ := m.Skills(id)
	if fi, err := os.Stat(filepath.Join(sks[0].Dir, "scripts", "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("scripts/run.sh: %v %v, want executable", fi, err)
	}
	if o := sks[0].Origin; o == nil || o.Kind != "oci" || o.Revision != d1 || o.Root != spec.OCI || o.Ref != "1.0.0" {
		t.Errorf("origin %+v", sks[0].Origin)
	}

	// The tag moves: Check reports it and moves nothing.
	d2 := push(t, e.reg, oci.Options{}, "team/skills/pdf", "1.0.0", "pdf", "two")
	if d2 == d1 {
		t.Fatal("the second push has the first's digest")
	}
	ck := m.Check(context.Background())[0]
	if ck.Err != nil || !ck.Moved || ck.From != d1 || ck.To != d2 || len(ck.Changed) != 1 {
		t.Fatalf("check after the tag moved: %+v", ck)
	}
	if p := m.Pin(id); p.Revision != d1 {
		t.Fatalf("check moved the pin to %s", p.Revision)
	}
	if got := body(t, m, id, "pdf"); !strings.Contains(got, "one") {
		t.Errorf("after check, served %q", got)
	}
	ch = m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Moved || ch.To != d2 || m.Pin(id).Revision != d2 {
		t.Fatalf("sync after the tag moved: %+v", ch)
	}
	if got := body(t, m, id, "pdf"); !strings.Contains(got, "two") {
		t.Errorf("after sync, served %q", got)
	}

	// A second manager (a restart) opens the pin from the cache.
	m2 := e.manager(t, spec)
	if d := m2.Open(context.Background(), false); len(d) > 0 {
		t.Fatalf("open: %v", d)
	}
	if got := body(t, m2, id, "pdf"); !strings.Contains(got, "two") {
		t.Errorf("reopened, served %q", got)
	}

	// The registry's manifests go away: the sync fails, and the last good
	// snapshot stays served with a remote-stale warning.
	if err := os.RemoveAll(filepath.Join(e.reg.Storage, "docker", "registry", "v2", "repositories", "team", "skills", "pdf", "_manifests", "tags")); err != nil {
		t.Fatal(err)
	}
	ch = m.Sync(context.Background())[0]
	if ch.Err == nil || remote.CodeOf(ch.Err) != remote.CodeRef {
		t.Fatalf("sync with the tag gone: %+v, want %s", ch, remote.CodeRef)
	}
	_, diags := m.Skills(id)
	if !hasCode(diags, remote.CodeStale) {
		t.Errorf("diagnostics %v, want %s", diags, remote.CodeStale)
	}
	if got := body(t, m, id, "pdf"); !strings.Contains(got, "two") || m.Pin(id).Revision != d2 {
		t.Errorf("after a failed sync, served %q at %s", got, m.Pin(id).Revision)
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func hasCode(diags []skill.Diagnostic, code string) bool {
	for _, d := range diags {
		if d.Code == code {
			return true
		}
	}
	return false
}

// TestTagRangeAndDigest: a range takes the highest tag in it, recorded in
// the lock beside the digest; a digest source is that manifest, whatever
// the tags do.
func TestTagRangeAndDigest(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	var d120 string
	for _, v := range []string{"1.0.0", "1.2.0", "1.4.1", "2.0.0", "latest"} {
		d := push(t, e.reg, oci.Options{}, "skills/xlsx", v, "xlsx", "v"+v)
		if v == "1.2.0" {
			d120 = d
		}
	}
	rng := remote.Spec{OCI: e.reg.Ref("skills/xlsx"), Tags: ">=1.2 <2", Ref: ">=1.2 <2", Insecure: true}
	dig := remote.Spec{ID: "pinned", OCI: e.reg.Ref("skills/xlsx"), Digest: d120, Ref: d120, Insecure: true}
	none := remote.Spec{ID: "none", OCI: e.reg.Ref("skills/xlsx"), Tags: ">=3", Ref: ">=3", Insecure: true}
	m := e.manager(t, rng, dig, none)
	chs := m.Sync(context.Background())
	if chs[0].Err != nil || chs[1].Err != nil {
		t.Fatalf("sync: %+v", chs)
	}
	if p := m.Pin("xlsx"); p.Tag != "1.4.1" || !strings.Contains(body(t, m, "xlsx", "xlsx"), "v1.4.1") {
		t.Errorf("range pin %+v, want tag 1.4.1", p)
	}
	if p := m.Pin("pinned"); p.Revision != d120 || p.Tag != "" || !strings.Contains(body(t, m, "pinned", "xlsx"), "v1.2.0") {
		t.Errorf("digest pin %+v", p)
	}
	if chs[2].Err == nil || remote.CodeOf(chs[2].Err) != remote.CodeRef || !strings.Contains(chs[2].Err.Error(), ">=3") {
		t.Errorf("a range no tag is in: %+v", chs[2])
	}
	// A new version in the range moves the pin; one outside does not.
	push(t, e.reg, oci.Options{}, "skills/xlsx", "3.0.0", "xlsx", "v3")
	if ck := m.Check(context.Background(), "xlsx")[0]; ck.Moved || ck.Err != nil {
		t.Errorf("check after 3.0.0: %+v, want unchanged", ck)
	}
	push(t, e.reg, oci.Options{}, "skills/xlsx", "1.5.0", "xlsx", "v1.5.0")
	if ck := m.Check(context.Background(), "xlsx")[0]; !ck.Moved {
		t.Errorf("check after 1.5.0: %+v, want moved", ck)
	}
	if ch := m.Sync(context.Background(), "xlsx")[0]; ch.Err != nil || m.Pin("xlsx").Tag != "1.5.0" {
		t.Errorf("sync after 1.5.0: %+v, pin %+v", ch, m.Pin("xlsx"))
	}
	// MaxTags bounds the listing: 7 tags, a limit of 6 fails the sync.
	e.opt.MaxTags = 6
	m2 := e.manager(t, remote.Spec{ID: "few", OCI: e.reg.Ref("skills/xlsx"), Tags: ">=1", Ref: ">=1", Insecure: true})
	if ch := m2.Sync(context.Background())[0]; ch.Err == nil || remote.CodeOf(ch.Err) != remote.CodeLimit {
		t.Errorf("7 tags over a limit of 6: %+v, want %s", ch, remote.CodeLimit)
	}
	e.opt.MaxTags = 7
	m3 := e.manager(t, remote.Spec{ID: "few", OCI: e.reg.Ref("skills/xlsx"), Tags: ">=1", Ref: ">=1", Insecure: true})
	if ch := m3.Sync(context.Background())[0]; ch.Err != nil {
		t.Errorf("7 tags at a limit of 7: %+v", ch)
	}
}

// TestPlainHTTPRefused: without insecure, a plain-HTTP registry is
// refused with an error naming the field.
func TestPlainHTTPRefused(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	push(t, e.reg, oci.Options{}, "skills/pdf", "1.0.0", "pdf", "one")
	m := e.manager(t, remote.Spec{OCI: e.reg.Ref("skills/pdf"), Tag: "1.0.0", Ref: "1.0.0"})
	ch := m.Sync(context.Background())[0]
	if ch.Err == nil || !strings.Contains(ch.Err.Error(), `"insecure": true`) {
		t.Fatalf("sync of a plain-HTTP registry without insecure: %+v", ch)
	}
	if m.Pin("pdf@1.0.0") != nil {
		t.Error("pinned anyway")
	}
}

// TestBasicAuthTLS: a registry with TLS and basic auth; the credentials
// come from the source (expanded from the environment by cmd), the
// certificate from the roots given; a wrong password is remote-auth.
func TestBasicAuthTLS(t *testing.T) {
	e := newEnv(t, registrytest.Options{Users: map[string]string{"ci": "s3cret"}, TLS: true})
	d := push(t, e.reg, oci.Options{Username: "ci", Password: "s3cret"}, "team/pdf", "1.0.0", "pdf", "one")
	good := remote.Spec{ID: "good", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0", Username: "ci", Password: "s3cret"}
	bad := remote.Spec{ID: "bad", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0", Username: "ci", Password: "wrong"}
	anon := remote.Spec{ID: "anon", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0"}
	m := e.manager(t, good, bad, anon)
	chs := m.Sync(context.Background())
	if chs[0].Err != nil || chs[0].To != d {
		t.Fatalf("sync with the right password: %+v", chs[0])
	}
	for _, ch := range chs[1:] {
		if ch.Err == nil || remote.CodeOf(ch.Err) != remote.CodeAuth {
			t.Errorf("%s: %+v, want %s", ch.ID, ch, remote.CodeAuth)
		}
		if ch.Err != nil && strings.Contains(ch.Err.Error(), "wrong") {
			t.Errorf("%s: the error shows the password: %v", ch.ID, ch.Err)
		}
	}
	// Without credentials in the source, the docker config's are used: an
	// "auths" entry, then a credential helper (a docker-credential-NAME
	// program on PATH, as docker runs it).
	cfgDir := t.TempDir()
	e.opt.DockerConfig = filepath.Join(cfgDir, "config.json")
	writeFile(t, e.opt.DockerConfig, `{"auths": {"`+e.reg.Host+`": {"auth": "`+base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))+`"}}}`, 0o600)
	m3 := e.manager(t, remote.Spec{ID: "dockercfg", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0"})
	if ch := m3.Sync(context.Background())[0]; ch.Err != nil || ch.To != d {
		t.Errorf("sync with the docker config's auths: %+v", ch)
	}
	bin := t.TempDir()
	helper := "#!/bin/sh\nread server\n[ \"$1\" = get ] && [ \"$server\" = \"" + e.reg.Host + "\" ] && echo '{\"ServerURL\":\"" + e.reg.Host + "\",\"Username\":\"ci\",\"Secret\":\"s3cret\"}'\n"
	writeFile(t, filepath.Join(bin, "docker-credential-loadouttest"), helper, 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	writeFile(t, e.opt.DockerConfig, `{"credHelpers": {"`+e.reg.Host+`": "loadouttest"}}`, 0o600)
	m4 := e.manager(t, remote.Spec{ID: "helper", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0"})
	if ch := m4.Sync(context.Background())[0]; ch.Err != nil || ch.To != d {
		t.Errorf("sync with a credential helper: %+v", ch)
	}
	writeFile(t, e.opt.DockerConfig, `{"credHelpers": {"other.example.com": "loadouttest"}}`, 0o600)
	m5 := e.manager(t, remote.Spec{ID: "nohelper", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0"})
	if ch := m5.Sync(context.Background())[0]; remote.CodeOf(ch.Err) != remote.CodeAuth {
		t.Errorf("sync with a helper for another registry only: %+v, want %s", ch, remote.CodeAuth)
	}

	// Without the registry's CA, the certificate is refused.
	e.opt.RootCAs = nil
	m2 := e.manager(t, remote.Spec{ID: "noca", OCI: e.reg.Ref("team/pdf"), Tag: "1.0.0", Ref: "1.0.0", Username: "ci", Password: "s3cret"})
	if ch := m2.Sync(context.Background())[0]; ch.Err == nil || !strings.Contains(ch.Err.Error(), "certificate") {
		t.Errorf("sync without the CA: %+v, want a certificate error", ch)
	}
}

// TestGateAndReview: the safety gate refuses an oci snapshot as a git
// one's, and under review a sync records the change instead of moving
// the pin.
func TestGateAndReview(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	push(t, e.reg, oci.Options{}, "skills/pdf", "1.0.0", "pdf", "one")
	spec := remote.Spec{OCI: e.reg.Ref("skills/pdf"), Tag: "1.0.0", Ref: "1.0.0", Insecure: true}
	e.gate = func(sks []*skill.Skill) []skill.Diagnostic {
		return []skill.Diagnostic{{Severity: skill.Error, Code: "safety-test", Skill: sks[0].Name, Path: sks[0].Location}}
	}
	m := e.manager(t, spec)
	if ch := m.Sync(context.Background())[0]; remote.CodeOf(ch.Err) != remote.CodeRefused || m.Pin("pdf@1.0.0") != nil {
		t.Fatalf("gated sync: %+v", ch)
	}
	e.gate, e.rev = nil, true
	m = e.manager(t, spec)
	ch := m.Sync(context.Background())[0]
	if ch.Err != nil || !ch.Pending || m.Pin("pdf@1.0.0") != nil {
		t.Fatalf("sync under review: %+v", ch)
	}
	if a := m.Approve(context.Background(), "pdf@1.0.0", ch.To); a.Err != nil {
		t.Fatalf("approve: %v", a.Err)
	}
	if p := m.Pin("pdf@1.0.0"); p == nil || p.Revision != ch.To {
		t.Fatalf("pin after approval %+v", p)
	}
}
