package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// CodeSignature is the code of a revision refused because it is not signed
// as the source's verify policy requires: unsigned, a bad signature, a
// signer not allowed, a signature for another revision or an expired
// certificate. The last good snapshot stays served and pinned.
const CodeSignature = "remote-signature"

// MaxPolicyFileBytes bounds each file a verify policy names (an allowed
// signers file, a key ring, a public key, a trusted root).
const MaxPolicyFileBytes = 4 << 20

// Verify is a source's signature policy: what a revision must be signed
// with before it is pinned. Git sources take SSHAllowedSigners and/or
// OpenPGPKeys (a commit signed either way that either accepts passes); oci
// sources take Key, or the keyless fields (CertificateIdentity or its
// Regexp, CertificateOIDCIssuer or its Regexp, TrustedRoot). Paths are
// absolute (the config resolves them against its own folder).
type Verify struct {
	// SSHAllowedSigners is an allowed_signers file as ssh-keygen(1) reads
	// it ("principals [options] key"), for commits signed with gpg.format
	// ssh.
	SSHAllowedSigners string
	// OpenPGPKeys is an armored OpenPGP key ring (gpg --export --armor).
	OpenPGPKeys string
	// Key is a public key in PEM (cosign.pub) for cosign's keyed
	// signatures.
	Key string
	// CertificateIdentity (exact) or CertificateIdentityRegexp is the
	// signing certificate's subject (an email or URI) for keyless
	// signatures; CertificateOIDCIssuer or CertificateOIDCIssuerRegexp its
	// issuer; TrustedRoot the trusted_root.json the certificate and the
	// timestamps are checked against.
	CertificateIdentity         string
	CertificateIdentityRegexp   string
	CertificateOIDCIssuer       string
	CertificateOIDCIssuerRegexp string
	TrustedRoot                 string
}

// Files are the files the policy names, in a fixed order.
func (v *Verify) Files() []string {
	var out []string
	for _, f := range []string{v.SSHAllowedSigners, v.OpenPGPKeys, v.Key, v.TrustedRoot} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Digest identifies the policy: its fields and the content of every file
// it names. A pin records the digest of the policy it was checked under
// (Signer.Policy); one checked under another policy is checked again
// before it is served.
func (v *Verify) Digest() (string, error) {
	h := sha256.New()
	for _, f := range []string{v.SSHAllowedSigners, v.OpenPGPKeys, v.Key, v.CertificateIdentity, v.CertificateIdentityRegexp,
		v.CertificateOIDCIssuer, v.CertificateOIDCIssuerRegexp, v.TrustedRoot} {
		fmt.Fprintf(h, "%q\n", f)
	}
	for _, f := range v.Files() {
		data, err := ReadPolicyFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d\n", len(data))
		h.Write(data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// ReadPolicyFile reads a file a verify policy names, at most
// MaxPolicyFileBytes.
func ReadPolicyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: cannot read %s: %v", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("verify: cannot read %s: %v", path, err)
	}
	if len(data) > MaxPolicyFileBytes {
		return nil, fmt.Errorf("verify: %s is over %d bytes: is it a key file?", path, MaxPolicyFileBytes)
	}
	return data, nil
}

// Signer is who signed a pinned revision, as the lock records it.
type Signer struct {
	// Kind is how: "ssh" (an SSH-signed commit), "openpgp" (an
	// OpenPGP-signed commit), "key" (cosign, a configured public key) or
	// "keyless" (cosign, a certificate from the trusted root's CA).
	Kind string `json:"kind"`
	// Key is the signing key's fingerprint: SHA256:… for SSH keys (as
	// ssh-keygen -l prints it), the primary key's hex fingerprint for
	// OpenPGP, sha256:… of the public key (DER) for cosign.
	Key string `json:"key,omitempty"`
	// Identity is the allowed signer's principals (ssh), the key's user
	// id (openpgp) or the certificate's subject (keyless).
	Identity string `json:"identity,omitempty"`
	// Issuer is the certificate's OIDC issuer (keyless).
	Issuer string `json:"issuer,omitempty"`
	// Policy is the digest of the verify policy the signature was checked
	// under (Verify.Digest).
	Policy string `json:"policy"`
}

// String is the signer as people read it.
func (s *Signer) String() string {
	if s == nil {
		return "unsigned"
	}
	out := s.Kind
	if s.Identity != "" {
		out += " " + s.Identity
	}
	if s.Issuer != "" {
		out += " (issuer " + s.Issuer + ")"
	}
	if s.Key != "" {
		out += " key " + s.Key
	}
	return out
}

// Signed is a Fetcher that checks signatures. When its source has a
// verify policy, Fetch refuses a revision not signed as the policy
// requires (an *Error with CodeSignature), and after a Fetch of rev
// succeeded, Signer(rev) is who signed it (nil for a revision it did not
// fetch).
type Signed interface {
	Fetcher
	Signer(rev string) *Signer
}
