package catalog

import (
	"strings"
	"testing"
)

// TestVerifySpec: each kind of source takes its own policy fields, and
// every refusal names the field.
func TestVerifySpec(t *testing.T) {
	git := SourceSpec{Git: "https://git.example.com/s.git"}
	oci := SourceSpec{OCI: "registry.example.com/team/pdf", Tag: "1.0.0"}
	with := func(s SourceSpec, v VerifySpec) SourceSpec { s.Verify = &v; return s }
	for _, c := range []struct {
		name  string
		s     SourceSpec
		field string // "" passes
	}{
		{"git ssh", with(git, VerifySpec{SSHAllowedSigners: "/k/allowed"}), ""},
		{"git both", with(git, VerifySpec{SSHAllowedSigners: "/k/allowed", OpenPGPKeys: "/k/keys.asc"}), ""},
		{"git empty", with(git, VerifySpec{}), "skills[0].verify"},
		{"git cosign key", with(git, VerifySpec{Key: "/k/cosign.pub"}), "skills[0].verify"},
		{"oci key", with(oci, VerifySpec{Key: "/k/cosign.pub"}), ""},
		{"oci keyless", with(oci, VerifySpec{CertificateIdentity: "a@example.com", CertificateOIDCIssuer: "https://i", TrustedRoot: "/k/tr.json"}), ""},
		{"oci keyless regexps", with(oci, VerifySpec{CertificateIdentityRegexp: "@example\\.com$", CertificateOIDCIssuerRegexp: "^https://", TrustedRoot: "/k/tr.json"}), ""},
		{"oci no root", with(oci, VerifySpec{CertificateIdentity: "a", CertificateOIDCIssuer: "i"}), "skills[0].verify.trustedRoot"},
		{"oci no identity", with(oci, VerifySpec{CertificateOIDCIssuer: "i", TrustedRoot: "/t"}), "skills[0].verify.certificateIdentity"},
		{"oci both identities", with(oci, VerifySpec{CertificateIdentity: "a", CertificateIdentityRegexp: "a", CertificateOIDCIssuer: "i", TrustedRoot: "/t"}), "skills[0].verify.certificateIdentity"},
		{"oci no issuer", with(oci, VerifySpec{CertificateIdentity: "a", TrustedRoot: "/t"}), "skills[0].verify.certificateOidcIssuer"},
		{"oci bad regexp", with(oci, VerifySpec{CertificateIdentityRegexp: "(", CertificateOIDCIssuer: "i", TrustedRoot: "/t"}), "skills[0].verify.certificateIdentityRegexp"},
		{"oci ssh", with(oci, VerifySpec{SSHAllowedSigners: "/k/a"}), "skills[0].verify"},
		{"index", with(SourceSpec{Index: "https://example.com/.well-known/agent-skills/index.json"}, VerifySpec{Key: "/k"}), "skills[0].verify"},
		{"root", with(SourceSpec{Root: "/skills"}, VerifySpec{Key: "/k"}), "skills[0].verify"},
	} {
		a := AgentSpec{AgentID: "a", Skills: []SourceSpec{c.s}}
		err := a.Validate()
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		se, ok := err.(*SpecError)
		if !ok || se.Field != c.field || strings.TrimSpace(se.Msg) == "" {
			t.Errorf("%s: %v, want an error on %s", c.name, err, c.field)
		}
	}
}
