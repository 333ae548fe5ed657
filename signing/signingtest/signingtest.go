// Package signingtest makes Sigstore signatures for tests, with no
// network: keyless bundles from sigstore-go's virtual Sigstore (a local
// Fulcio CA, CT log, Rekor log and timestamp authority), its trusted root
// as a trusted_root.json, and a bundle attached to an artifact in a
// registry as cosign attaches one. Imported by tests only.
package signingtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/loadout/loadout/oci"
)

// BundleMediaType is a Sigstore bundle's (signing.BundleMediaType).
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// NewSigstore is a virtual Sigstore.
func NewSigstore() (*ca.VirtualSigstore, error) { return ca.NewVirtualSigstore() }

// KeylessBundle is a Sigstore bundle (JSON) of vs's signature of artifact
// (a manifest's bytes: the bundle signs its digest) by a certificate for
// identity and issuer: the certificate, a message signature, and the
// timestamp authority's timestamp (made now). The virtual Rekor entry is
// left out: its hashedrekord entries have no protobuf form.
func KeylessBundle(vs *ca.VirtualSigstore, identity, issuer string, artifact []byte) ([]byte, error) {
	te, err := vs.Sign(identity, issuer, artifact)
	if err != nil {
		return nil, err
	}
	vc, err := te.VerificationContent()
	if err != nil {
		return nil, err
	}
	sc, err := te.SignatureContent()
	if err != nil {
		return nil, err
	}
	ms := sc.MessageSignatureContent()
	tss, err := te.Timestamps()
	if err != nil {
		return nil, err
	}
	var stamps []*protocommon.RFC3161SignedTimestamp
	for _, ts := range tss {
		stamps = append(stamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	pb := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: stamps},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: ms.Digest()},
			Signature:     ms.Signature()}},
	}
	return (&bundle.Bundle{Bundle: pb}).MarshalJSON()
}

// TrustedRoot is vs's trusted_root.json. With caEnd set, the trusted root
// says the Fulcio CA stopped being valid then: a certificate it issued is
// refused for a signature timestamped later.
func TrustedRoot(vs *ca.VirtualSigstore, caEnd time.Time) ([]byte, error) {
	cas := vs.FulcioCertificateAuthorities()
	if !caEnd.IsZero() {
		var out []root.CertificateAuthority
		for _, c := range cas {
			f, ok := c.(*root.FulcioCertificateAuthority)
			if !ok {
				return nil, fmt.Errorf("a %T CA", c)
			}
			g := *f
			g.ValidityPeriodEnd = caEnd
			out = append(out, &g)
		}
		cas = out
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, cas, vs.CTLogs(), vs.TimestampingAuthorities(), vs.RekorLogs())
	if err != nil {
		return nil, err
	}
	return tr.MarshalJSON()
}

// Attach pushes bundle b to repository ("registry/repo") as a referrer of
// subject, as cosign's BUNDLE_SPEC lays it out (oras-go keeps the
// referrers tag schema's index where the registry has no referrers API).
func Attach(ctx context.Context, c *oci.Client, repository string, subject oci.Descriptor, b []byte) error {
	empty := []byte("{}")
	layer := oci.Blob{Descriptor: oci.Descriptor{MediaType: BundleMediaType, Digest: sha(b), Size: int64(len(b))}, Data: b}
	cfg := oci.Blob{Descriptor: oci.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: sha(empty), Size: 2}, Data: empty}
	for _, blob := range []oci.Blob{layer, cfg} {
		if err := c.PushBlob(ctx, repository, blob); err != nil {
			return err
		}
	}
	m, err := json.Marshal(oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, ArtifactType: BundleMediaType,
		Config: cfg.Descriptor, Layers: []oci.Descriptor{layer.Descriptor}, Subject: &oci.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size}})
	if err != nil {
		return err
	}
	mb := oci.Blob{Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha(m), Size: int64(len(m)), ArtifactType: BundleMediaType}, Data: m}
	return c.PushManifest(ctx, repository+"@"+mb.Descriptor.Digest, mb)
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
