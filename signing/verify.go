// Package signing verifies and makes Sigstore signatures (cosign's format)
// of OCI artifacts: the one package importing sigstore-go.
//
// Read (Verifier.Verify), for a manifest digest:
//   - Sigstore bundles attached as OCI referrers (artifactType
//     application/vnd.dev.sigstore.bundle.v0.3+json): what cosign v3 writes
//     by default (`cosign sign`, --new-bundle-format), found through the
//     registry's referrers API or the referrers tag schema's index
//     (sha256-HEX) on registries without it. A bundle holds a DSSE envelope
//     of an in-toto statement whose subject is the digest and whose
//     predicate type is https://sigstore.dev/cosign/sign/v1, or a message
//     signature of the digest. Keyed (a configured public key) and
//     keyless (a certificate checked against a trusted root, and its
//     subject and OIDC issuer against the policy).
//   - cosign's older signature tag (sha256-HEX.sig, `cosign sign
//     --new-bundle-format=false` and cosign v2): simple-signing payloads
//     with the signature in an annotation, keyed only.
//
// Written (KeySigner, `loadout push --sign KEY`): a Sigstore bundle as a
// referrer, as cosign v3 writes it with --key and no transparency log,
// signed with a key in cosign's format (cosign generate-key-pair's
// encrypted cosign.key, or an unencrypted PEM key).
//
// Nothing here reaches a network beside the registry: no Rekor, no
// Fulcio, no TUF. The trusted root is a file the config names.
package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/remote"
)

// Media types and names of cosign's formats.
const (
	BundleMediaType       = "application/vnd.dev.sigstore.bundle.v0.3+json"
	SimpleSigningType     = "application/vnd.dev.cosign.simplesigning.v1+json"
	SignatureAnnotation   = "dev.cosignproject.cosign/signature"
	CertificateAnnotation = "dev.sigstore.cosign/certificate"
	CosignSignPredicate   = "https://sigstore.dev/cosign/sign/v1"
	InTotoPayloadType     = "application/vnd.in-toto+json"
	simpleSigningKind     = "cosign container image signature"
)

// Bounds on what a verification reads.
const (
	// MaxSignatures is the most signatures (bundles, or layers of a .sig
	// manifest) read for one digest; more is refused.
	MaxSignatures = 16
	// MaxBundleBytes bounds one bundle; MaxPayloadBytes one simple-signing
	// payload.
	MaxBundleBytes  = 1 << 20
	MaxPayloadBytes = 64 << 10
)

// ErrUnsigned is the error (wrapped) of a digest with no signature at all.
var ErrUnsigned = errors.New("no signature")

// Registry is what verification reads from the artifact's repository;
// *oci.Client is one.
type Registry interface {
	FetchManifest(ctx context.Context, ref string) (oci.Descriptor, []byte, error)
	FetchBlob(ctx context.Context, repository string, d oci.Descriptor, max int64) ([]byte, error)
	Referrers(ctx context.Context, repository string, subject oci.Descriptor, artifactType string, max int) ([]oci.Descriptor, error)
}

// Verifier checks an artifact's signatures against one policy.
type Verifier struct {
	keyed    bool
	pub      crypto.PublicKey
	keyID    string // sha256:HEX of the public key's DER
	verifier *verify.Verifier
	identity verify.CertificateIdentity
}

// NewVerifier reads the policy's key or trusted root. An oci policy has
// Key, or the keyless fields (an identity, an issuer and TrustedRoot).
func NewVerifier(p *remote.Verify) (*Verifier, error) {
	if p.SSHAllowedSigners != "" || p.OpenPGPKeys != "" {
		return nil, errors.New("verify: sshAllowedSigners and openpgpKeys are for git sources; an oci source takes key, or the certificate fields and trustedRoot")
	}
	if p.Key != "" {
		data, err := remote.ReadPolicyFile(p.Key)
		if err != nil {
			return nil, err
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
		if err != nil {
			return nil, fmt.Errorf("verify: key %s is not a PEM public key (cosign.pub): %v", p.Key, err)
		}
		sv, err := signature.LoadDefaultVerifier(pub)
		if err != nil {
			return nil, fmt.Errorf("verify: key %s: %v", p.Key, err)
		}
		id, err := KeyID(pub)
		if err != nil {
			return nil, fmt.Errorf("verify: key %s: %v", p.Key, err)
		}
		material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
		})
		v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
		if err != nil {
			return nil, err
		}
		if p.TrustedRoot != "" || p.CertificateIdentity != "" || p.CertificateIdentityRegexp != "" {
			return nil, errors.New("verify: give key, or the keyless fields (certificateIdentity, certificateOidcIssuer, trustedRoot), not both")
		}
		return &Verifier{keyed: true, pub: pub, keyID: id, verifier: v}, nil
	}
	if p.TrustedRoot == "" {
		return nil, errors.New("verify: an oci source's policy needs key (cosign.pub), or trustedRoot with certificateIdentity and certificateOidcIssuer")
	}
	data, err := remote.ReadPolicyFile(p.TrustedRoot)
	if err != nil {
		return nil, err
	}
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("verify: trustedRoot %s is not a Sigstore trusted_root.json: %v", p.TrustedRoot, err)
	}
	id, err := verify.NewShortCertificateIdentity(p.CertificateOIDCIssuer, p.CertificateOIDCIssuerRegexp, p.CertificateIdentity, p.CertificateIdentityRegexp)
	if err != nil {
		return nil, fmt.Errorf("verify: the certificate identity: %v", err)
	}
	v, err := NewKeylessVerifier(tr, id)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// NewKeylessVerifier checks certificates against trusted (a trusted root,
// or a test's virtual Sigstore) and identity. A signature must carry at
// least one timestamp the trusted root vouches for (a transparency log's
// integrated time or a timestamp authority's), at which the certificate
// was valid: a certificate expired then, or from a CA not valid then, is
// refused.
func NewKeylessVerifier(trusted root.TrustedMaterial, identity verify.CertificateIdentity) (*Verifier, error) {
	v, err := verify.NewVerifier(trusted, verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, err
	}
	return &Verifier{verifier: v, identity: identity}, nil
}

// KeyID is a public key's id as the lock records it: sha256: and the hex
// of its DER (PKIX) encoding.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

// Verify checks that the manifest digest of repository ("registry/repo")
// carries a signature the policy accepts, and returns who signed it. Every
// signature found is tried; the error lists why each was refused (or wraps
// ErrUnsigned when there is none).
func (v *Verifier) Verify(ctx context.Context, reg Registry, repository, digest string) (*remote.Signer, error) {
	raw, err := digestBytes(digest)
	if err != nil {
		return nil, err
	}
	var why []string
	found := 0
	subject := oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: digest}
	refs, err := reg.Referrers(ctx, repository, subject, BundleMediaType, MaxSignatures)
	if err != nil {
		return nil, fmt.Errorf("listing the signatures of %s: %w", digest, err)
	}
	for _, d := range refs {
		found++
		s, err := v.referrer(ctx, reg, repository, digest, raw, d)
		if err == nil {
			return s, nil
		}
		why = append(why, fmt.Sprintf("bundle %s: %v", short(d.Digest), err))
	}
	sigTag := repository + ":" + strings.Replace(digest, ":", "-", 1) + ".sig"
	_, data, err := reg.FetchManifest(ctx, sigTag)
	switch {
	case err != nil && !oci.IsNotFound(err):
		return nil, fmt.Errorf("reading the signature tag of %s: %w", digest, err)
	case err == nil:
		s, n, errs := v.classic(ctx, reg, repository, digest, data)
		if s != nil {
			return s, nil
		}
		found += n
		why = append(why, errs...)
	}
	if found == 0 {
		return nil, fmt.Errorf("%s carries no signature (no Sigstore bundle referrer, no %s tag): sign it with cosign or `loadout push --sign`: %w", digest, sigTag[strings.LastIndexByte(sigTag, ':')+1:], ErrUnsigned)
	}
	return nil, fmt.Errorf("no signature of %s is accepted: %s", digest, strings.Join(why, "; "))
}

var errWrongSubject = errors.New("it signs another artifact")

// referrer checks one bundle referrer.
func (v *Verifier) referrer(ctx context.Context, reg Registry, repository, digest string, raw []byte, d oci.Descriptor) (*remote.Signer, error) {
	_, data, err := reg.FetchManifest(ctx, repository+"@"+d.Digest)
	if err != nil {
		return nil, err
	}
	var m oci.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not an OCI manifest: %v", err)
	}
	if m.Subject == nil || m.Subject.Digest != digest {
		return nil, fmt.Errorf("its subject is not %s", digest)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != BundleMediaType {
		return nil, fmt.Errorf("want one layer of %s", BundleMediaType)
	}
	if m.Layers[0].Size > MaxBundleBytes {
		return nil, fmt.Errorf("the bundle is %d bytes, over the limit of %d", m.Layers[0].Size, MaxBundleBytes)
	}
	blob, err := reg.FetchBlob(ctx, repository, m.Layers[0], MaxBundleBytes)
	if err != nil {
		return nil, err
	}
	return v.VerifyBundle(blob, digest, raw)
}

// VerifyBundle checks a Sigstore bundle (JSON) as a signature of the
// manifest digest (raw: its sha256 bytes).
func (v *Verifier) VerifyBundle(data []byte, digest string, raw []byte) (*remote.Signer, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("not a Sigstore bundle: %v", err)
	}
	return v.verifyEntity(&b, digest, raw)
}

func (v *Verifier) verifyEntity(e verify.SignedEntity, digest string, raw []byte) (*remote.Signer, error) {
	var pol verify.PolicyBuilder
	if v.keyed {
		pol = verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithKey())
	} else {
		pol = verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithCertificateIdentity(v.identity))
	}
	res, err := v.verifier.Verify(e, pol)
	if err != nil {
		return nil, err
	}
	if res.Statement != nil && res.Statement.GetPredicateType() != CosignSignPredicate {
		return nil, fmt.Errorf("an attestation of %s, not a signature (%s)", res.Statement.GetPredicateType(), CosignSignPredicate)
	}
	if v.keyed {
		return &remote.Signer{Kind: "key", Key: v.keyID}, nil
	}
	s := &remote.Signer{Kind: "keyless"}
	if c := res.Signature; c != nil && c.Certificate != nil {
		s.Identity = c.Certificate.SubjectAlternativeName
		s.Issuer = c.Certificate.Issuer
	}
	if vc, err := e.VerificationContent(); err == nil {
		if cert := vc.Certificate(); cert != nil {
			h := sha256.Sum256(cert.Raw)
			s.Key = "sha256:" + hex.EncodeToString(h[:])
		}
	}
	return s, nil
}

// classic checks the layers of a sha256-HEX.sig manifest: how many
// signatures it holds, and why each was refused.
func (v *Verifier) classic(ctx context.Context, reg Registry, repository, digest string, data []byte) (*remote.Signer, int, []string) {
	var m oci.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, 1, []string{fmt.Sprintf(".sig manifest: not an OCI manifest: %v", err)}
	}
	if len(m.Layers) > MaxSignatures {
		return nil, 1, []string{fmt.Sprintf(".sig manifest: %d signatures, over the limit of %d", len(m.Layers), MaxSignatures)}
	}
	var why []string
	n := 0
	for i, l := range m.Layers {
		if l.MediaType != SimpleSigningType {
			continue
		}
		n++
		fail := func(format string, args ...any) {
			why = append(why, fmt.Sprintf(".sig layer %d: ", i)+fmt.Sprintf(format, args...))
		}
		if l.Annotations[CertificateAnnotation] != "" && v.keyed || l.Annotations[CertificateAnnotation] == "" && !v.keyed {
			fail("signed with a %s, and the policy wants %s", map[bool]string{true: "certificate", false: "key"}[l.Annotations[CertificateAnnotation] != ""], map[bool]string{true: "a key", false: "a certificate"}[v.keyed])
			continue
		}
		if !v.keyed {
			fail("keyless signatures in the .sig tag are not read: sign with cosign's bundle format (cosign v3's default)")
			continue
		}
		if l.Size > MaxPayloadBytes {
			fail("the payload is %d bytes, over the limit of %d", l.Size, MaxPayloadBytes)
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[SignatureAnnotation])
		if err != nil || len(sig) == 0 {
			fail("no base64 signature in the %s annotation", SignatureAnnotation)
			continue
		}
		payload, err := reg.FetchBlob(ctx, repository, l, MaxPayloadBytes)
		if err != nil {
			fail("%v", err)
			continue
		}
		sv, err := signature.LoadDefaultVerifier(v.pub)
		if err != nil {
			fail("%v", err)
			continue
		}
		if err := sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)); err != nil {
			fail("the signature does not verify with the key %s: %v", v.keyID, err)
			continue
		}
		var p struct {
			Critical struct {
				Image struct {
					Digest string `json:"docker-manifest-digest"`
				} `json:"image"`
				Type string `json:"type"`
			} `json:"critical"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			fail("the payload is not simple-signing JSON: %v", err)
			continue
		}
		if p.Critical.Type != simpleSigningKind {
			fail("the payload's type is %q, not %q", p.Critical.Type, simpleSigningKind)
			continue
		}
		if p.Critical.Image.Digest != digest {
			fail("%v: the payload names %s", errWrongSubject, p.Critical.Image.Digest)
			continue
		}
		return &remote.Signer{Kind: "key", Key: v.keyID}, n, nil
	}
	return nil, n, why
}

func digestBytes(d string) ([]byte, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	raw, err := hex.DecodeString(h)
	if !ok || err != nil || len(raw) != sha256.Size {
		return nil, fmt.Errorf("%q is not a sha256 manifest digest", d)
	}
	return raw, nil
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
