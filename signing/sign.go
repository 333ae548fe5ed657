package signing

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/loadout/loadout/oci"
)

// PEM types of cosign's keys: generate-key-pair writes the first (older
// cosign the second); an unencrypted key is PKCS#8 or SEC 1.
const (
	pemEncryptedSigstore = "ENCRYPTED SIGSTORE PRIVATE KEY"
	pemEncryptedCosign   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// MaxKeyBytes bounds a key file read.
const MaxKeyBytes = 64 << 10

// KeySigner signs artifacts with a private key in cosign's format. It is
// an oci.Signer: `loadout push --sign KEY` passes it to oci.Client.Push.
type KeySigner struct {
	priv crypto.Signer
	alg  signature.AlgorithmDetails
	id   string
}

var _ oci.Signer = (*KeySigner)(nil)

// LoadKey reads a private key: cosign's encrypted cosign.key (scrypt and
// secretbox, as `cosign generate-key-pair` writes it), decrypted with
// password, or an unencrypted PEM key (ECDSA, Ed25519 or RSA; PKCS#8 or
// SEC 1). password is asked for only for an encrypted key.
func LoadKey(path string, password func() ([]byte, error)) (*KeySigner, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("sign: cannot read the key %s: %v", path, err)
	}
	if st.Size() > MaxKeyBytes {
		return nil, fmt.Errorf("sign: %s is %d bytes, over %d: is it a key?", path, st.Size(), MaxKeyBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sign: cannot read the key %s: %v", path, err)
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, fmt.Errorf("sign: %s is not a PEM key (cosign.key, or a PEM private key)", path)
	}
	var key any
	switch blk.Type {
	case pemEncryptedSigstore, pemEncryptedCosign:
		if password == nil {
			return nil, fmt.Errorf("sign: %s is encrypted: give its password (COSIGN_PASSWORD)", path)
		}
		pw, err := password()
		if err != nil {
			return nil, fmt.Errorf("sign: the password of %s: %v", path, err)
		}
		der, err := encrypted.Decrypt(blk.Bytes, pw)
		if err != nil {
			return nil, fmt.Errorf("sign: cannot decrypt %s (a wrong password?): %v", path, err)
		}
		key, err = x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("sign: %s: the decrypted key: %v", path, err)
		}
	case "PRIVATE KEY":
		if key, err = x509.ParsePKCS8PrivateKey(blk.Bytes); err != nil {
			return nil, fmt.Errorf("sign: %s: %v", path, err)
		}
	case "EC PRIVATE KEY":
		if key, err = x509.ParseECPrivateKey(blk.Bytes); err != nil {
			return nil, fmt.Errorf("sign: %s: %v", path, err)
		}
	case "RSA PRIVATE KEY":
		if key, err = x509.ParsePKCS1PrivateKey(blk.Bytes); err != nil {
			return nil, fmt.Errorf("sign: %s: %v", path, err)
		}
	default:
		return nil, fmt.Errorf("sign: %s holds a %q PEM block; want cosign's %q, or a PRIVATE KEY", path, blk.Type, pemEncryptedSigstore)
	}
	return NewKeySigner(key)
}

// NewKeySigner signs with key (*ecdsa.PrivateKey, ed25519.PrivateKey or
// *rsa.PrivateKey).
func NewKeySigner(key any) (*KeySigner, error) {
	var priv crypto.Signer
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		priv = k
	case ed25519.PrivateKey:
		priv = k
	case *rsa.PrivateKey:
		priv = k
	default:
		return nil, fmt.Errorf("sign: a %T key is not read: use ECDSA (cosign's default), Ed25519 or RSA", key)
	}
	alg, err := signature.GetDefaultAlgorithmDetails(priv.Public())
	if err != nil {
		return nil, fmt.Errorf("sign: %v", err)
	}
	id, err := KeyID(priv.Public())
	if err != nil {
		return nil, err
	}
	return &KeySigner{priv: priv, alg: alg, id: id}, nil
}

// PublicKeyPEM is the public key as cosign.pub holds it.
func (k *KeySigner) PublicKeyPEM() ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
}

// KeyID is the key's id (KeyID).
func (k *KeySigner) KeyID() string { return k.id }

// The sign.Keypair methods.

func (k *KeySigner) GetHashAlgorithm() protocommon.HashAlgorithm { return k.alg.GetProtoHashType() }
func (k *KeySigner) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.alg.GetSignatureAlgorithm()
}
func (k *KeySigner) GetHint() []byte {
	der, _ := x509.MarshalPKIXPublicKey(k.priv.Public())
	h := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(h[:]))
}
func (k *KeySigner) GetKeyAlgorithm() string {
	switch k.alg.GetKeyType() {
	case signature.ECDSA:
		return "ECDSA"
	case signature.RSA:
		return "RSA"
	case signature.ED25519:
		return "ED25519"
	}
	return ""
}
func (k *KeySigner) GetPublicKey() crypto.PublicKey { return k.priv.Public() }
func (k *KeySigner) GetPublicKeyPem() (string, error) {
	b, err := k.PublicKeyPEM()
	return string(b), err
}
func (k *KeySigner) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	hf := k.alg.GetHashType()
	toSign := data
	if hf != crypto.Hash(0) {
		h := hf.New()
		h.Write(data)
		toSign = h.Sum(nil)
	}
	sig, err := k.priv.Sign(nil, toSign, hf)
	return sig, toSign, err
}

// Statement is the in-toto statement cosign v3 signs for an image digest:
// its subject is the digest, its predicate type cosign's sign/v1, its
// predicate empty.
func Statement(digest string) ([]byte, error) {
	alg, hexDigest, ok := strings.Cut(digest, ":")
	if _, err := hex.DecodeString(hexDigest); !ok || err != nil || alg != "sha256" {
		return nil, fmt.Errorf("sign: %q is not a sha256 digest", digest)
	}
	return json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"digest": map[string]string{alg: hexDigest}}},
		"predicateType": CosignSignPredicate,
		"predicate":     map[string]any{},
	})
}

// Bundle is a Sigstore bundle (JSON) signing the manifest digest as cosign
// v3 does with a key: a DSSE envelope of Statement(digest), the key's hint
// as verification material, no transparency log entry.
func (k *KeySigner) Bundle(digest string) ([]byte, error) {
	stmt, err := Statement(digest)
	if err != nil {
		return nil, err
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: stmt, PayloadType: InTotoPayloadType}, k, sign.BundleOptions{})
	if err != nil {
		return nil, fmt.Errorf("sign: %v", err)
	}
	b := bundle.Bundle{Bundle: pb}
	return b.MarshalJSON()
}

// emptyConfig is the OCI empty descriptor's content.
var emptyConfig = []byte("{}")

// Sign attaches a signature of manifest to ref's repository: the bundle as
// a blob, and a manifest whose subject is the artifact (a referrer, as
// cosign's BUNDLE_SPEC lays it out). oras-go keeps the referrers tag
// schema's index (sha256-HEX) where the registry has no referrers API.
func (k *KeySigner) Sign(ctx context.Context, c *oci.Client, ref oci.Ref, manifest oci.Descriptor) error {
	b, err := k.Bundle(manifest.Digest)
	if err != nil {
		return err
	}
	repo := ref.Name()
	layer := oci.Blob{Descriptor: oci.Descriptor{MediaType: BundleMediaType, Digest: sha(b), Size: int64(len(b))}, Data: b}
	cfg := oci.Blob{Descriptor: oci.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: sha(emptyConfig), Size: 2}, Data: emptyConfig}
	for _, blob := range []oci.Blob{layer, cfg} {
		if err := c.PushBlob(ctx, repo, blob); err != nil {
			return fmt.Errorf("sign: %w", err)
		}
	}
	subject := oci.Descriptor{MediaType: manifest.MediaType, Digest: manifest.Digest, Size: manifest.Size}
	if subject.MediaType == "" {
		subject.MediaType = oci.MediaTypeImageManifest
	}
	m := oci.Manifest{SchemaVersion: 2, MediaType: oci.MediaTypeImageManifest, ArtifactType: BundleMediaType,
		Config: cfg.Descriptor, Layers: []oci.Descriptor{layer.Descriptor}, Subject: &subject,
		Annotations: map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": CosignSignPredicate}}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	mb := oci.Blob{Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageManifest, Digest: sha(data), Size: int64(len(data)), ArtifactType: BundleMediaType}, Data: data}
	if err := c.PushManifest(ctx, repo+"@"+mb.Descriptor.Digest, mb); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	return nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

var errNoPassword = errors.New("no password")

// PasswordFromEnv reads a key's password from the environment variable
// name (cosign's is COSIGN_PASSWORD); unset is an error that names it.
func PasswordFromEnv(name string) func() ([]byte, error) {
	return func() ([]byte, error) {
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil, fmt.Errorf("$%s is not set: %w", name, errNoPassword)
		}
		return []byte(v), nil
	}
}
