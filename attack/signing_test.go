package attack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/signing"
	"github.com/loadout/loadout/signing/signingtest"
)

// Attacks on signature policies (docs/signatures.md): a source that
// requires signatures never pins a revision that is unsigned, signed by a
// key the policy does not allow, or signed for something else; the last
// good pin stays served, and the error names the source.

// signingKey makes an ed25519 key with ssh-keygen: its path and public
// key line.
func signingKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the signing attacks: install Debian's openssh-client")
		}
		t.Skip("ssh-keygen is needed to sign commits")
	}
	key := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	return key, strings.TrimSpace(string(pub))
}

// pushSigned commits files signed with key (none: unsigned) by real git
// (gpg.format ssh) and pushes them; it returns the commit.
func (g *gitRemote) pushSigned(msg, key string, files map[string]string) string {
	g.t.Helper()
	WriteFiles(g.t, g.work, files)
	g.git(g.work, "add", "-A")
	if key == "" {
		g.git(g.work, "commit", "-q", "-m", msg)
	} else {
		g.git(g.work, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", msg)
	}
	g.git(g.work, "push", "-q", "--force", g.bare, "main")
	return g.git(g.work, "rev-parse", "HEAD")
}

// lockSigner is the signer loadout.lock records for source team.
func lockSigner(t *testing.T, path string) map[string]string {
	t.Helper()
	var l struct {
		Sources []struct {
			ID     string
			Signer map[string]string
		}
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range l.Sources {
		if s.ID == "team" {
			return s.Signer
		}
	}
	return nil
}

// TestAttackUnsignedAndForeignCommits: a git source whose verify policy
// lists alice's SSH key. serve pins alice's signed commit and the lock
// records her principal and key; an unsigned commit, then one signed by
// mallory (a valid signature, by a key not allowed), are refused by
// `loadout sync` with remote-signature naming the source, and the last
// good pin stays served. Alice's next commit moves the pin.
func TestAttackUnsignedAndForeignCommits(t *testing.T) {
	g := newGitRemote(t, pdfSkill("v0"))
	keys := t.TempDir()
	alice, alicePub := signingKey(t, keys, "alice")
	mallory, _ := signingKey(t, keys, "mallory")
	os.WriteFile(filepath.Join(keys, "allowed_signers"), []byte("alice@example.com "+alicePub+"\n"), 0o644)
	good := g.pushSigned("v1", alice, pdfSkill("v1"))

	var cfg map[string]any
	json.Unmarshal([]byte(remoteConfig(g, nil)), &cfg)
	src := cfg["agents"].([]any)[0].(map[string]any)["skills"].([]any)[0].(map[string]any)
	src["verify"] = map[string]any{"sshAllowedSigners": filepath.Join(keys, "allowed_signers")}
	b, _ := json.Marshal(cfg)
	s := Start(t, Options{Config: string(b)})
	lock := filepath.Join(s.Dir, "loadout.lock")
	if rev := lockRevision(t, lock); rev != good {
		t.Fatalf("serve pinned %s, want alice's %s\n%s", rev, good, s.Log())
	}
	fp, _ := exec.Command("ssh-keygen", "-lf", alice+".pub").Output()
	sg := lockSigner(t, lock)
	if sg["kind"] != "ssh" || sg["identity"] != "alice@example.com" || sg["key"] == "" || !strings.Contains(string(fp), sg["key"]) || !strings.HasPrefix(sg["policy"], "sha256:") {
		t.Fatalf("the lock records signer %v; want ssh alice@example.com with the key of %s", sg, fp)
	}

	if code, _, src := s.Do(t, "GET", "/v1/sources", "", ""); code != 200 || !strings.Contains(src, `"signer":{"kind":"ssh","key":"`+sg["key"]+`","identity":"alice@example.com"}`) {
		t.Fatalf("GET /v1/sources does not name the signer: %d %s", code, src)
	}
	for _, c := range []struct{ name, key, want string }{
		{"unsigned", "", "is not signed"},
		{"mallory", mallory, "not in sshAllowedSigners"},
	} {
		bad := g.pushSigned(c.name, c.key, pdfSkill(c.name))
		out, errOut, code := s.CLI(t, "sync")
		all := out + errOut
		t.Logf("%s: %s", c.name, strings.TrimSpace(all))
		if code == 0 || !strings.Contains(all, c.want) || !strings.Contains(all, "team") || !strings.Contains(all, bad[:12]) {
			t.Fatalf("%s: sync of %s: exit %d\n%s", c.name, bad, code, all)
		}
		if rev := lockRevision(t, lock); rev != good {
			t.Fatalf("%s: the pin moved to %s", c.name, rev)
		}
		if code, body := readRef(t, s); code != 200 || !strings.Contains(body, "ref v1") {
			t.Fatalf("%s: the last good snapshot is not served: %d %s", c.name, code, body)
		}
		if out, errOut, code := s.CLI(t, "sync", "--check"); code == 0 {
			t.Fatalf("%s: sync --check passes over a refused commit:\n%s%s", c.name, out, errOut)
		}
	}
	next := g.pushSigned("v2", alice, pdfSkill("v2"))
	if out, errOut, code := s.CLI(t, "sync"); code != 0 || !strings.Contains(out, "signed by ssh alice@example.com") {
		t.Fatalf("alice's commit: %d\n%s%s", code, out, errOut)
	}
	if rev := lockRevision(t, lock); rev != next {
		t.Fatalf("alice's signed commit was not pinned: %s", rev)
	}
}

// cosignKeyPair writes an ECDSA P-256 key pair as `cosign
// generate-key-pair` does (cosign.key encrypted with password, PEM
// "ENCRYPTED SIGSTORE PRIVATE KEY"; cosign.pub).
func cosignKeyPair(t *testing.T, dir, name, password string) (key, pub string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	enc, err := encrypted.Encrypt(der, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	pder, _ := x509.MarshalPKIXPublicKey(k.Public())
	key, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: enc}), 0o600)
	os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o644)
	return key, pub
}

// pushFolder pushes a skill folder with `loadout push` (signed with key
// when set) and returns the digest it printed.
func pushFolder(t *testing.T, dir, ref, body, key string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "pdf")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: pdf\ndescription: Fill PDF forms. Use when a PDF form must be filled.\n---\n"+body+"\n"), 0o644)
	args := []string{"push", "--insecure"}
	if key != "" {
		args = append(args, "--sign", key)
	}
	out, errOut, code := CLI(t, dir, []string{"COSIGN_PASSWORD=hunter2"}, append(args, src, ref)...)
	if code != 0 {
		t.Fatalf("loadout %v: %d\n%s%s", args, code, out, errOut)
	}
	for _, f := range strings.Fields(out + " " + errOut) {
		if strings.Contains(f, "sha256:") {
			return f[strings.Index(f, "sha256:"):][:71]
		}
	}
	t.Fatalf("loadout push printed no digest:\n%s%s", out, errOut)
	return ""
}

// TestAttackOCISignatures: an oci source whose verify policy names a
// cosign public key, against a real registry. `loadout push --sign` of
// v1 is pinned, and the lock records the key; then the tag is moved to
// an unsigned artifact, to one signed by another key, and to one that
// carries a valid bundle of another digest (v1's, copied as a referrer):
// each `loadout sync` fails with remote-signature naming the source, the
// pin holds and v1 is still served.
func TestAttackOCISignatures(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	keys := t.TempDir()
	key, pub := cosignKeyPair(t, keys, "cosign", "hunter2")
	other, _ := cosignKeyPair(t, keys, "other", "hunter2")
	ref := reg.Ref("team/pdf") + ":stable"
	dir := ociDir(t, map[string]any{"oci": reg.Ref("team/pdf"), "tag": "stable", "insecure": true, "verify": map[string]any{"key": pub}}, nil)
	v1 := pushFolder(t, dir, ref, "version one", key)
	if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
		t.Fatalf("sync of a signed artifact: %d\n%s%s", code, out, errOut)
	}
	if rev, lock := ociPin(t, dir); rev != v1 || !strings.Contains(lock, `"kind": "key"`) || !strings.Contains(lock, `"signer"`) {
		t.Fatalf("pinned %q, want %s signed by the key\n%s", rev, v1, lock)
	}

	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	ks, err := signing.LoadKey(key, func() ([]byte, error) { return []byte("hunter2"), nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ name, key, want string }{
		{"unsigned", "", "carries no signature"},
		{"another key", other, "no signature of"},
		{"a signature of another digest", "", "no signature of"},
	} {
		d := pushFolder(t, dir, ref, "version "+step.name, step.key)
		if step.name == "a signature of another digest" {
			b, err := ks.Bundle(v1)
			if err != nil {
				t.Fatal(err)
			}
			attachBundle(t, c, reg.Ref("team/pdf"), d, b)
		}
		out, errOut, code := CLI(t, dir, nil, "sync")
		all := out + errOut
		t.Logf("%s: %s", step.name, strings.TrimSpace(all))
		if code == 0 || !strings.Contains(all, step.want) || !strings.Contains(all, "pdf") || !strings.Contains(all, d[:19]) {
			t.Fatalf("%s: sync of %s: exit %d, want a refusal (%s) naming the source and the digest\n%s", step.name, d, code, step.want, all)
		}
		if rev, lock := ociPin(t, dir); rev != v1 {
			t.Fatalf("%s: the pin moved to %s\n%s", step.name, rev, lock)
		}
		if out, _, code := CLI(t, dir, nil, "read", "--agent", "coder", "pdf", "SKILL.md"); code != 0 || !strings.Contains(out, "version one") {
			t.Fatalf("%s: the last good pin is not served: %d\n%s", step.name, code, out)
		}
	}
}

// attachBundle pushes a Sigstore bundle as a referrer of subject, as
// cosign attaches one.
func attachBundle(t *testing.T, c *oci.Client, repo, subject string, b []byte) {
	t.Helper()
	ctx := context.Background()
	sd, _, err := c.FetchManifest(ctx, repo+"@"+subject)
	if err != nil {
		t.Fatal(err)
	}
	sha := func(b []byte) string { h := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(h[:]) }
	empty := []byte("{}")
	layer := oci.Blob{Descriptor: oci.Descriptor{MediaType: signing.BundleMediaType, Digest: sha(b), Size: int64(len(b))}, Data: b}
	cfg := oci.Blob{Descriptor: oci.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: sha(empty), Size: 2}, Data: empty}
	for _, blob := range []oci.Blob{layer, cfg} {
		if err := c.PushBlob(ctx, repo, blob); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := json.Marshal(oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, ArtifactType: signing.BundleMediaType,
		Config: cfg.Descriptor, Layers: []oci.Descriptor{layer.Descriptor}, Subject: &oci.Descriptor{MediaType: sd.MediaType, Digest: sd.Digest, Size: sd.Size}})
	mb := oci.Blob{Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha(m), Size: int64(len(m)), ArtifactType: signing.BundleMediaType}, Data: m}
	if err := c.PushManifest(ctx, repo+"@"+mb.Descriptor.Digest, mb); err != nil {
		t.Fatal(err)
	}
}

// TestAttackOCIKeyless: an oci source with a keyless policy (a
// trusted_root.json of a virtual Sigstore, an identity and an issuer),
// through `loadout sync` against a real registry. v1, signed by the
// release identity, is pinned and the lock records the identity and
// issuer. Then the tag moves to an artifact signed by another identity,
// to one whose certificate the trusted root's CA issued after its
// validity ended, and to one carrying v1's bundle (a signature of another
// digest): each is refused (remote-signature, naming the source and the
// digest), the pin holds and v1 is served.
func TestAttackOCIKeyless(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := context.Background()
	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := signingtest.NewSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const who, issuer = "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main", "https://token.actions.githubusercontent.com"
	repo := reg.Ref("team/pdf")
	signed := func(d, identity string) []byte {
		_, manifest, err := c.FetchManifest(ctx, repo+"@"+d)
		if err != nil {
			t.Fatal(err)
		}
		b, err := signingtest.KeylessBundle(vs, identity, issuer, manifest)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	attach := func(d string, b []byte) {
		sd, _, err := c.FetchManifest(ctx, repo+"@"+d)
		if err != nil {
			t.Fatal(err)
		}
		if err := signingtest.Attach(ctx, c, repo, sd, b); err != nil {
			t.Fatal(err)
		}
	}
	trFile := filepath.Join(t.TempDir(), "trusted_root.json")
	dir := ociDir(t, map[string]any{"oci": repo, "tag": "stable", "insecure": true,
		"verify": map[string]any{"certificateIdentity": who, "certificateOidcIssuer": issuer, "trustedRoot": trFile}}, nil)
	v1 := pushFolder(t, dir, repo+":stable", "version one", "")
	v1Bundle := signed(v1, who)
	attach(v1, v1Bundle)
	// The CA is valid until just after v1 was signed: the expired case
	// below is signed later.
	caEnd := time.Now().Add(500 * time.Millisecond)
	tr, err := signingtest.TrustedRoot(vs, caEnd)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(trFile, tr, 0o644)
	if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
		t.Fatalf("sync of v1, signed by %s: %d\n%s%s", who, code, out, errOut)
	}
	if rev, lock := ociPin(t, dir); rev != v1 || !strings.Contains(lock, `"kind": "keyless"`) || !strings.Contains(lock, `"identity": "`+who+`"`) || !strings.Contains(lock, `"issuer": "`+issuer+`"`) {
		t.Fatalf("pinned %s, want %s signed keyless by %s\n%s", rev, v1, who, lock)
	}
	for _, step := range []struct{ name, want string }{
		{"another identity", "CertificateIdentity"},
		{"after the CA expired", "certificate"},
		{"v1's bundle on another digest", "artifact"},
	} {
		d := pushFolder(t, dir, repo+":stable", "version "+step.name, "")
		switch step.name {
		case "another identity":
			attach(d, signed(d, "https://github.com/mallory/skills/.github/workflows/release.yml@refs/heads/main"))
		case "after the CA expired":
			time.Sleep(time.Until(caEnd.Add(time.Second))) // the timestamp must fall after caEnd
			attach(d, signed(d, who))
		default:
			attach(d, v1Bundle)
		}
		out, errOut, code := CLI(t, dir, nil, "sync")
		all := out + errOut
		t.Logf("%s: %s", step.name, strings.TrimSpace(all))
		if code == 0 || !strings.Contains(all, "remote-signature") && !strings.Contains(all, "verify policy") || !strings.Contains(all, step.want) || !strings.Contains(all, d[:19]) {
			t.Fatalf("%s: sync of %s: exit %d, want a refusal naming the source and the digest\n%s", step.name, d, code, all)
		}
		if rev, lock := ociPin(t, dir); rev != v1 {
			t.Fatalf("%s: the pin moved to %s\n%s", step.name, rev, lock)
		}
		if out, _, code := CLI(t, dir, nil, "read", "--agent", "coder", "pdf", "SKILL.md"); code != 0 || !strings.Contains(out, "version one") {
			t.Fatalf("%s: the last good pin is not served: %d\n%s", step.name, code, out)
		}
	}
}
