package catalog

import (
	"fmt"
	"regexp"
)

// VerifySpec is a remote source's signature policy ("verify" in the
// config): what every revision must be signed with before it is pinned.
// Paths are resolved against the config file's folder. See
// docs/signatures.md.
type VerifySpec struct {
	// SSHAllowedSigners (git) is an allowed_signers file, as git's
	// gpg.ssh.allowedSignersFile: commits signed with gpg.format ssh.
	SSHAllowedSigners string `json:"sshAllowedSigners,omitempty"`
	// OpenPGPKeys (git) is an armored OpenPGP key ring.
	OpenPGPKeys string `json:"openpgpKeys,omitempty"`
	// Key (oci) is a public key in PEM, as cosign.pub: cosign's keyed
	// signatures.
	Key string `json:"key,omitempty"`
	// The keyless fields (oci): the signing certificate's subject
	// (CertificateIdentity exact, or CertificateIdentityRegexp) and OIDC
	// issuer (CertificateOIDCIssuer exact, or …Regexp), checked against
	// TrustedRoot, a trusted_root.json.
	CertificateIdentity         string `json:"certificateIdentity,omitempty"`
	CertificateIdentityRegexp   string `json:"certificateIdentityRegexp,omitempty"`
	CertificateOIDCIssuer       string `json:"certificateOidcIssuer,omitempty"`
	CertificateOIDCIssuerRegexp string `json:"certificateOidcIssuerRegexp,omitempty"`
	TrustedRoot                 string `json:"trustedRoot,omitempty"`
}

// checkVerify checks a remote source's verify policy against its kind.
func (s SourceSpec) checkVerify() *SpecError {
	v := s.Verify
	if v == nil {
		return nil
	}
	keyless := v.CertificateIdentity != "" || v.CertificateIdentityRegexp != "" || v.CertificateOIDCIssuer != "" ||
		v.CertificateOIDCIssuerRegexp != "" || v.TrustedRoot != ""
	switch {
	case !s.Remote():
		return &SpecError{Field: "verify", Msg: "is for git and oci sources only"}
	case s.Index != "":
		return &SpecError{Field: "verify", Msg: "an index source's archives are checked against the index's digests; signatures are verified for git and oci sources"}
	case s.Git != "":
		if v.Key != "" || keyless {
			return &SpecError{Field: "verify", Msg: "key, trustedRoot and the certificate fields are for oci sources (cosign signatures); a git source takes sshAllowedSigners and/or openpgpKeys"}
		}
		if v.SSHAllowedSigners == "" && v.OpenPGPKeys == "" {
			return &SpecError{Field: "verify", Msg: "give sshAllowedSigners (an allowed_signers file) and/or openpgpKeys (an armored OpenPGP key ring)"}
		}
	default: // oci
		if v.SSHAllowedSigners != "" || v.OpenPGPKeys != "" {
			return &SpecError{Field: "verify", Msg: "sshAllowedSigners and openpgpKeys are for git sources; an oci source takes key (cosign.pub), or certificateIdentity, certificateOidcIssuer and trustedRoot"}
		}
		if v.Key == "" && !keyless {
			return &SpecError{Field: "verify", Msg: "give key (a cosign public key), or certificateIdentity (or certificateIdentityRegexp), certificateOidcIssuer (or certificateOidcIssuerRegexp) and trustedRoot"}
		}
		if keyless {
			switch {
			case v.TrustedRoot == "":
				return &SpecError{Field: "verify.trustedRoot", Msg: "keyless verification needs a trusted root (trusted_root.json, as `cosign trusted-root create` or the Sigstore TUF repository gives it)"}
			case (v.CertificateIdentity == "") == (v.CertificateIdentityRegexp == ""):
				return &SpecError{Field: "verify.certificateIdentity", Msg: "give exactly one of certificateIdentity (the certificate's subject, an email or URI) and certificateIdentityRegexp"}
			case (v.CertificateOIDCIssuer == "") == (v.CertificateOIDCIssuerRegexp == ""):
				return &SpecError{Field: "verify.certificateOidcIssuer", Msg: "give exactly one of certificateOidcIssuer (like https://token.actions.githubusercontent.com) and certificateOidcIssuerRegexp"}
			}
			for _, f := range []struct{ name, re string }{{"certificateIdentityRegexp", v.CertificateIdentityRegexp}, {"certificateOidcIssuerRegexp", v.CertificateOIDCIssuerRegexp}} {
				if f.re == "" {
					continue
				}
				if _, err := regexp.Compile(f.re); err != nil {
					return &SpecError{Field: "verify." + f.name, Msg: fmt.Sprintf("%q is not a regular expression (Go syntax): %v", f.re, err)}
				}
			}
		}
	}
	return nil
}
