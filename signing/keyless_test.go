package signing

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/signing/signingtest"
)

func keylessBundle(t *testing.T, vs *ca.VirtualSigstore, identity, issuer string, artifact []byte) []byte {
	t.Helper()
	b, err := signingtest.KeylessBundle(vs, identity, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// trustedRootFile writes vs's trusted_root.json.
func trustedRootFile(t *testing.T, vs *ca.VirtualSigstore) string {
	t.Helper()
	data, err := signingtest.TrustedRoot(vs, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trusted_root.json")
	os.WriteFile(p, data, 0o644)
	return p
}

// TestKeylessInTheRegistry: a keyless bundle (a virtual Sigstore's
// certificate and timestamp) attached as a referrer in a
// real registry, verified through the config's path: a trusted_root.json
// file and the identity fields. The identity that signed passes and is
// recorded; another identity (exact and regexp), another issuer, and a
// trusted root of another Sigstore are refused.
func TestKeylessInTheRegistry(t *testing.T) {
	e := newEnv(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ca.NewVirtualSigstore()
	const who, issuer = "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main", "https://token.actions.githubusercontent.com"
	m := e.push(t, "1.0.0", "v1", nil)
	_, manifest, err := e.c.FetchManifest(context.Background(), e.repo+"@"+m.Digest)
	if err != nil {
		t.Fatal(err)
	}
	attach(t, e, m, keylessBundle(t, vs, who, issuer, manifest))
	tr, otherTR := trustedRootFile(t, vs), trustedRootFile(t, other)

	s, err := mustVerifier(t, &remote.Verify{TrustedRoot: tr, CertificateIdentity: who, CertificateOIDCIssuer: issuer}).Verify(context.Background(), e.c, e.repo, m.Digest)
	if err != nil {
		t.Fatalf("keyless through the registry: %v", err)
	}
	if s.Kind != "keyless" || s.Identity != who || s.Issuer != issuer {
		t.Fatalf("signer %+v", s)
	}
	for name, p := range map[string]*remote.Verify{
		"another identity":        {TrustedRoot: tr, CertificateIdentity: "https://github.com/acme/other/.github/workflows/release.yml@refs/heads/main", CertificateOIDCIssuer: issuer},
		"another identity regexp": {TrustedRoot: tr, CertificateIdentityRegexp: `^https://github\.com/acme/other/`, CertificateOIDCIssuer: issuer},
		"another issuer":          {TrustedRoot: tr, CertificateIdentity: who, CertificateOIDCIssuerRegexp: `^https://accounts\.example\.com$`},
		"another trusted root":    {TrustedRoot: otherTR, CertificateIdentity: who, CertificateOIDCIssuer: issuer},
	} {
		_, err := mustVerifier(t, p).Verify(context.Background(), e.c, e.repo, m.Digest)
		if err == nil || !strings.Contains(err.Error(), "no signature of") {
			t.Errorf("%s: %v", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// The same bundle on another artifact: a signature of another digest.
	m2 := e.push(t, "1.0.1", "v2", nil)
	attach(t, e, m2, keylessBundle(t, vs, who, issuer, manifest))
	if _, err := mustVerifier(t, &remote.Verify{TrustedRoot: tr, CertificateIdentity: who, CertificateOIDCIssuer: issuer}).Verify(context.Background(), e.c, e.repo, m2.Digest); err == nil {
		t.Fatal("a keyless signature of another digest was accepted")
	}
}
