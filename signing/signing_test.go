package signing

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/remote"
)

// env is a real registry (Debian's docker-registry) with one pushed skill.
type env struct {
	reg  *registrytest.Registry
	c    *oci.Client
	repo string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	reg := registrytest.Start(t, registrytest.Options{})
	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	return &env{reg: reg, c: c, repo: reg.Ref("team/pdf")}
}

// push pushes a skill whose body is body, signed by s when set; it returns
// the manifest's descriptor.
func (e *env) push(t *testing.T, tag, body string, s oci.Signer) oci.Descriptor {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: pdf\ndescription: Fill PDF forms.\n---\n"+body+"\n"), 0o644)
	a, err := oci.PackDir(dir, oci.Meta{Name: "pdf", Version: tag})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.c.Push(context.Background(), e.repo+":"+tag, a, oci.PushOptions{Signer: s})
	if err != nil {
		t.Fatalf("push: %v\n%s", err, e.reg.Log())
	}
	return p.Manifest
}

// cosignKey writes an ECDSA P-256 key pair as `cosign generate-key-pair`
// does: cosign.key encrypted with password (scrypt and secretbox, PEM
// "ENCRYPTED SIGSTORE PRIVATE KEY") and cosign.pub.
func cosignKey(t *testing.T, dir, name, password string) (keyPath, pubPath string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	enc, err := encrypted.Encrypt(der, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	keyPath, pubPath = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: pemEncryptedSigstore, Bytes: enc}), 0o600)
	pub, _ := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	os.WriteFile(pubPath, pub, 0o644)
	return keyPath, pubPath
}

func pw(s string) func() ([]byte, error) { return func() ([]byte, error) { return []byte(s), nil } }

func mustVerifier(t *testing.T, p *remote.Verify) *Verifier {
	t.Helper()
	v, err := NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestKeyedBundle: `push --sign` with cosign's encrypted key attaches a
// Sigstore bundle as a referrer in a real registry (through the
// referrers tag schema: distribution 2.8 has no referrers API); the
// matching public key verifies it and names the key; another key, an
// unsigned artifact and a bundle moved onto another artifact are refused.
func TestKeyedBundle(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	keyPath, pubPath := cosignKey(t, dir, "cosign", "hunter2")
	_, otherPub := cosignKey(t, dir, "other", "x")
	if _, err := LoadKey(keyPath, pw("wrong")); err == nil || !strings.Contains(err.Error(), "cannot decrypt") {
		t.Fatalf("a wrong password: %v", err)
	}
	if _, err := LoadKey(keyPath, nil); err == nil || !strings.Contains(err.Error(), "COSIGN_PASSWORD") {
		t.Fatalf("no password: %v", err)
	}
	ks, err := LoadKey(keyPath, pw("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	signed := e.push(t, "1.0.0", "v1", ks)
	unsigned := e.push(t, "1.0.1", "v2", nil)
	ctx := context.Background()

	v := mustVerifier(t, &remote.Verify{Key: pubPath})
	s, err := v.Verify(ctx, e.c, e.repo, signed.Digest)
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, e.reg.Log())
	}
	if s.Kind != "key" || s.Key != ks.KeyID() || !strings.HasPrefix(s.Key, "sha256:") {
		t.Fatalf("signer %+v, want key %s", s, ks.KeyID())
	}
	// The referrers tag schema's index is what oras-go wrote.
	idxDesc, idx, err := e.c.FetchManifest(ctx, e.repo+":"+strings.Replace(signed.Digest, ":", "-", 1))
	if err != nil || !strings.Contains(string(idx), BundleMediaType) {
		t.Fatalf("no referrers index: %v %s", err, idx)
	}
	t.Logf("referrers index %s: %s", idxDesc.Digest, idx)

	_, err = mustVerifier(t, &remote.Verify{Key: otherPub}).Verify(ctx, e.c, e.repo, signed.Digest)
	if err == nil || !strings.Contains(err.Error(), "no signature of") {
		t.Fatalf("another key: %v", err)
	}
	_, err = v.Verify(ctx, e.c, e.repo, unsigned.Digest)
	if !errors.Is(err, ErrUnsigned) {
		t.Fatalf("an unsigned artifact: %v", err)
	}

	// The signed artifact's bundle, attached to the unsigned one: a
	// signature for another digest.
	b, err := ks.Bundle(signed.Digest)
	if err != nil {
		t.Fatal(err)
	}
	attach(t, e, unsigned, b)
	_, err = v.Verify(ctx, e.c, e.repo, unsigned.Digest)
	if err == nil || errors.Is(err, ErrUnsigned) {
		t.Fatalf("a bundle for another digest: %v", err)
	}
	t.Logf("another digest: %v", err)
}

// attach pushes bundle b as a referrer of subject (as cosign would).
func attach(t *testing.T, e *env, subject oci.Descriptor, b []byte) {
	t.Helper()
	ctx := context.Background()
	layer := oci.Blob{Descriptor: oci.Descriptor{MediaType: BundleMediaType, Digest: sha(b), Size: int64(len(b))}, Data: b}
	cfg := oci.Blob{Descriptor: oci.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: sha(emptyConfig), Size: 2}, Data: emptyConfig}
	for _, blob := range []oci.Blob{layer, cfg} {
		if err := e.c.PushBlob(ctx, e.repo, blob); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := json.Marshal(oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, ArtifactType: BundleMediaType,
		Config: cfg.Descriptor, Layers: []oci.Descriptor{layer.Descriptor}, Subject: &subject})
	mb := oci.Blob{Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha(m), Size: int64(len(m)), ArtifactType: BundleMediaType}, Data: m}
	if err := e.c.PushManifest(ctx, e.repo+"@"+mb.Descriptor.Digest, mb); err != nil {
		t.Fatal(err)
	}
}

// TestClassicSigTag: cosign's older format (the sha256-HEX.sig tag, a
// simple-signing payload, the signature in an annotation) with a key: a
// payload naming the digest passes; one naming another digest, and one
// signed by another key, are refused.
func TestClassicSigTag(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	keyPath, pubPath := cosignKey(t, dir, "cosign", "")
	ks, err := LoadKey(keyPath, pw(""))
	if err != nil {
		t.Fatal(err)
	}
	a := e.push(t, "1.0.0", "v1", nil)
	b := e.push(t, "2.0.0", "v2", nil)
	ctx := context.Background()
	sigTag := func(subject, named oci.Descriptor, signer *KeySigner) {
		payload, _ := json.Marshal(map[string]any{"critical": map[string]any{"identity": map[string]string{"docker-reference": e.repo},
			"image": map[string]string{"docker-manifest-digest": named.Digest}, "type": simpleSigningKind}, "optional": nil})
		sig, _, err := signer.SignData(ctx, payload)
		if err != nil {
			t.Fatal(err)
		}
		layer := oci.Blob{Descriptor: oci.Descriptor{MediaType: SimpleSigningType, Digest: sha(payload), Size: int64(len(payload)),
			Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}}, Data: payload}
		cfg := oci.Blob{Descriptor: oci.Descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: sha(emptyConfig), Size: 2}, Data: emptyConfig}
		for _, blob := range []oci.Blob{layer, cfg} {
			if err := e.c.PushBlob(ctx, e.repo, blob); err != nil {
				t.Fatal(err)
			}
		}
		m, _ := json.Marshal(oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, Config: cfg.Descriptor, Layers: []oci.Descriptor{layer.Descriptor}})
		tag := strings.Replace(subject.Digest, ":", "-", 1) + ".sig"
		if err := e.c.PushManifest(ctx, e.repo+":"+tag, oci.Blob{Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha(m), Size: int64(len(m))}, Data: m}); err != nil {
			t.Fatal(err)
		}
	}
	v := mustVerifier(t, &remote.Verify{Key: pubPath})
	sigTag(a, a, ks)
	if s, err := v.Verify(ctx, e.c, e.repo, a.Digest); err != nil || s.Key != ks.KeyID() {
		t.Fatalf("classic signature: %+v %v", s, err)
	}
	sigTag(b, a, ks) // b's tag holds a's payload
	if _, err := v.Verify(ctx, e.c, e.repo, b.Digest); err == nil || !strings.Contains(err.Error(), "another artifact") {
		t.Fatalf("a payload for another digest: %v", err)
	}
	other, _ := cosignKey(t, dir, "other", "")
	os2, _ := LoadKey(other, pw(""))
	sigTag(b, b, os2)
	if _, err := v.Verify(ctx, e.c, e.repo, b.Digest); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("another key: %v", err)
	}
}

// expiredCA is a virtual Sigstore whose Fulcio CA, by the trusted root,
// stopped being valid an hour ago.
type expiredCA struct{ *ca.VirtualSigstore }

func (e expiredCA) FulcioCertificateAuthorities() []root.CertificateAuthority {
	var out []root.CertificateAuthority
	for _, c := range e.VirtualSigstore.FulcioCertificateAuthorities() {
		f := *c.(*root.FulcioCertificateAuthority)
		f.ValidityPeriodEnd = time.Now().Add(-time.Hour)
		out = append(out, &f)
	}
	return out
}

// TestKeyless verifies with sigstore-go's virtual Sigstore (a local
// Fulcio CA, Rekor log and timestamp authority; no network): the
// identity and issuer the policy names pass; another subject, another
// issuer, a signature of another digest, and a certificate from a CA
// the trusted root says was no longer valid when it signed are refused.
// (A signature carries several timestamps; one the trusted root vouches
// for, inside the certificate's validity, suffices, as in sigstore-go.)
func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const who, issuer = "release@example.com", "https://issuer.example.com"
	manifest := []byte(`{"schemaVersion":2}`)
	h := sha256.Sum256(manifest)
	digest := sha(manifest)
	other := sha([]byte("another manifest"))
	oh := sha256.Sum256([]byte("another manifest"))

	id := func(issuer, issuerRe, san, sanRe string) verify.CertificateIdentity {
		ci, err := verify.NewShortCertificateIdentity(issuer, issuerRe, san, sanRe)
		if err != nil {
			t.Fatal(err)
		}
		return ci
	}
	good, err := vs.Sign(who, issuer, manifest)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewKeylessVerifier(vs, id(issuer, "", who, ""))
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.verifyEntity(good, digest, h[:])
	if err != nil {
		t.Fatalf("keyless: %v", err)
	}
	if s.Kind != "keyless" || s.Identity != who || s.Issuer != issuer || !strings.HasPrefix(s.Key, "sha256:") {
		t.Fatalf("signer %+v", s)
	}
	vre, _ := NewKeylessVerifier(vs, id("", `^https://issuer\.example\.com$`, "", `@example\.com$`))
	if _, err := vre.verifyEntity(good, digest, h[:]); err != nil {
		t.Fatalf("keyless, regexps: %v", err)
	}

	cases := map[string]func() error{
		"another subject": func() error {
			v, _ := NewKeylessVerifier(vs, id(issuer, "", "someone@example.com", ""))
			_, err := v.verifyEntity(good, digest, h[:])
			return err
		},
		"another issuer": func() error {
			v, _ := NewKeylessVerifier(vs, id("https://other.example.com", "", who, ""))
			_, err := v.verifyEntity(good, digest, h[:])
			return err
		},
		"another digest": func() error {
			_, err := v.verifyEntity(good, other, oh[:])
			return err
		},
		"a CA expired by the trusted root": func() error {
			v, _ := NewKeylessVerifier(expiredCA{vs}, id(issuer, "", who, ""))
			_, err := v.verifyEntity(good, digest, h[:])
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestPolicyErrors: a policy that cannot be read names its file.
func TestPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "cosign.pub")
	os.WriteFile(bad, []byte("not a key"), 0o644)
	for _, p := range []*remote.Verify{{Key: bad}, {TrustedRoot: bad, CertificateIdentity: "a", CertificateOIDCIssuer: "b"}, {Key: filepath.Join(dir, "missing.pub")}} {
		if _, err := NewVerifier(p); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if _, err := NewVerifier(&remote.Verify{SSHAllowedSigners: bad}); err == nil || !strings.Contains(err.Error(), "git sources") {
		t.Errorf("a git policy: %v", err)
	}
}
