package gitfetch

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/crypto/ssh"

	"github.com/loadout/loadout/remote"
)

// A commit's signature is checked against the source's verify policy
// (remote.Verify) when it is fetched: SSH signatures (git's gpg.format
// ssh, the SSHSIG format of OpenSSH's PROTOCOL.sshsig, namespace "git")
// against an allowed_signers file, OpenPGP signatures against an armored
// key ring. Only the commit fetched (the pin) is checked, as `git
// verify-commit` does: its signature covers its tree, so every file
// written from it.

// maxAllowedSigners bounds the entries of an allowed_signers file.
const maxAllowedSigners = 10000

// allowedSigner is one line of an allowed_signers file.
type allowedSigner struct {
	principals  string
	key         ssh.PublicKey
	namespaces  []string // none: any
	validAfter  time.Time
	validBefore time.Time
	line        int
}

// policy is a source's verify policy, read.
type policy struct {
	sshFile  string
	signers  []allowedSigner
	pgpFile  string
	keyring  string
	keyCount int
}

// loadPolicy reads the files v names; an error names the file and line.
func loadPolicy(v *remote.Verify) (*policy, error) {
	if v.Key != "" || v.TrustedRoot != "" || v.CertificateIdentity != "" || v.CertificateIdentityRegexp != "" ||
		v.CertificateOIDCIssuer != "" || v.CertificateOIDCIssuerRegexp != "" {
		return nil, errors.New("verify: key, trustedRoot and the certificate fields are for oci sources (cosign signatures); a git source takes sshAllowedSigners and/or openpgpKeys")
	}
	if v.SSHAllowedSigners == "" && v.OpenPGPKeys == "" {
		return nil, errors.New("verify: give sshAllowedSigners (an allowed_signers file) and/or openpgpKeys (an armored key ring)")
	}
	p := &policy{sshFile: v.SSHAllowedSigners, pgpFile: v.OpenPGPKeys}
	if v.SSHAllowedSigners != "" {
		data, err := remote.ReadPolicyFile(v.SSHAllowedSigners)
		if err != nil {
			return nil, err
		}
		if p.signers, err = parseAllowedSigners(data); err != nil {
			return nil, fmt.Errorf("verify: sshAllowedSigners %s: %v", v.SSHAllowedSigners, err)
		}
		if len(p.signers) == 0 {
			return nil, fmt.Errorf("verify: sshAllowedSigners %s holds no signer (lines \"principal key-type base64-key\")", v.SSHAllowedSigners)
		}
	}
	if v.OpenPGPKeys != "" {
		data, err := remote.ReadPolicyFile(v.OpenPGPKeys)
		if err != nil {
			return nil, err
		}
		ring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("verify: openpgpKeys %s is not an armored OpenPGP key ring (gpg --export --armor KEYID): %v", v.OpenPGPKeys, err)
		}
		if len(ring) == 0 {
			return nil, fmt.Errorf("verify: openpgpKeys %s holds no key", v.OpenPGPKeys)
		}
		p.keyring, p.keyCount = string(data), len(ring)
	}
	return p, nil
}

// parseAllowedSigners reads an allowed_signers file (ssh-keygen(1),
// ALLOWED SIGNERS): "principals [options] key-type base64-key [comment]",
// with the options namespaces="…", valid-after="…" and valid-before="…".
// cert-authority (certificates signed by a CA) is refused: this check
// reads plain keys only.
func parseAllowedSigners(data []byte) ([]allowedSigner, error) {
	var out []allowedSigner
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		if len(out) == maxAllowedSigners {
			return nil, fmt.Errorf("more than %d signers", maxAllowedSigners)
		}
		n := i + 1
		principals, rest := splitField(line)
		if principals == "" || rest == "" {
			return nil, fmt.Errorf("line %d: want \"principals [options] key-type base64-key\"", n)
		}
		key, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(rest))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		s := allowedSigner{principals: strings.Trim(principals, `"`), key: key, line: n}
		for _, o := range opts {
			name, val, _ := strings.Cut(o, "=")
			val = strings.Trim(val, `"`)
			switch strings.ToLower(name) {
			case "namespaces":
				s.namespaces = strings.Split(val, ",")
			case "valid-after":
				if s.validAfter, err = sshTime(val); err != nil {
					return nil, fmt.Errorf("line %d: valid-after: %v", n, err)
				}
			case "valid-before":
				if s.validBefore, err = sshTime(val); err != nil {
					return nil, fmt.Errorf("line %d: valid-before: %v", n, err)
				}
			case "cert-authority":
				return nil, fmt.Errorf("line %d: cert-authority (SSH certificates) is not supported: list each signer's own key", n)
			default:
				return nil, fmt.Errorf("line %d: unknown option %q (namespaces, valid-after and valid-before are read)", n, name)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// splitField splits off the first field of line; a field may be quoted.
func splitField(line string) (string, string) {
	if strings.HasPrefix(line, `"`) {
		if end := strings.IndexByte(line[1:], '"'); end >= 0 {
			return line[:end+2], strings.TrimSpace(line[end+2:])
		}
		return "", ""
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// sshTime reads YYYYMMDD[HHMM[SS]][Z] (UTC with Z, else local time, as
// ssh-keygen does).
func sshTime(s string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		s, loc = s[:len(s)-1], time.UTC
	}
	for _, layout := range []string{"20060102150405", "200601021504", "20060102"} {
		if len(s) == len(layout) {
			return time.ParseInLocation(layout, s, loc)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", s)
}

// verifyCommit checks c's signature against the policy and returns who
// signed it; the error says what is wrong and what to do.
func (f *Fetcher) verifyCommit(c *object.Commit) (*remote.Signer, error) {
	p := f.policy
	short := c.Hash.String()[:12]
	sig := strings.TrimSpace(c.PGPSignature)
	switch {
	case sig == "":
		return nil, f.errorf(remote.CodeSignature, "commit %s is not signed, and the source's verify policy requires a signature: sign it (git commit -S) and push it again", short)
	case strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----"):
		if p.sshFile == "" {
			return nil, f.errorf(remote.CodeSignature, "commit %s is signed with an SSH key, and the source's verify policy lists no sshAllowedSigners", short)
		}
		payload, err := unsigned(c)
		if err != nil {
			return nil, f.errorf(remote.CodeSignature, "commit %s: %v", short, err)
		}
		pub, err := verifySSHSig(sig, "git", payload)
		if err != nil {
			return nil, f.errorf(remote.CodeSignature, "commit %s: bad SSH signature: %v", short, err)
		}
		fp := ssh.FingerprintSHA256(pub)
		when := c.Committer.When
		var why []string
		for _, s := range p.signers {
			if !bytes.Equal(s.key.Marshal(), pub.Marshal()) {
				continue
			}
			switch {
			case len(s.namespaces) > 0 && !matchAny(s.namespaces, "git"):
				why = append(why, fmt.Sprintf("line %d allows the namespaces %s, not git", s.line, strings.Join(s.namespaces, ",")))
			case !s.validAfter.IsZero() && when.Before(s.validAfter):
				why = append(why, fmt.Sprintf("line %d is valid after %s; the commit is of %s", s.line, s.validAfter.UTC().Format(time.RFC3339), when.UTC().Format(time.RFC3339)))
			case !s.validBefore.IsZero() && !when.Before(s.validBefore):
				why = append(why, fmt.Sprintf("line %d is valid before %s; the commit is of %s", s.line, s.validBefore.UTC().Format(time.RFC3339), when.UTC().Format(time.RFC3339)))
			default:
				return &remote.Signer{Kind: "ssh", Key: fp, Identity: s.principals}, nil
			}
		}
		if len(why) > 0 {
			return nil, f.errorf(remote.CodeSignature, "commit %s is signed by SSH key %s, which %s does not allow now: %s", short, fp, p.sshFile, strings.Join(why, "; "))
		}
		return nil, f.errorf(remote.CodeSignature, "commit %s is signed by SSH key %s, which is not in sshAllowedSigners %s", short, fp, p.sshFile)
	case strings.HasPrefix(sig, "-----BEGIN PGP SIGNATURE-----"):
		if p.pgpFile == "" {
			return nil, f.errorf(remote.CodeSignature, "commit %s is signed with an OpenPGP key, and the source's verify policy lists no openpgpKeys", short)
		}
		ent, err := c.Verify(p.keyring)
		if err != nil {
			return nil, f.errorf(remote.CodeSignature, "commit %s: its OpenPGP signature does not verify against openpgpKeys %s (%d keys): %v", short, p.pgpFile, p.keyCount, err)
		}
		id := ""
		if pi := ent.PrimaryIdentity(); pi != nil {
			id = pi.Name
		}
		return &remote.Signer{Kind: "openpgp", Key: strings.ToUpper(hex.EncodeToString(ent.PrimaryKey.Fingerprint)), Identity: id}, nil
	default:
		return nil, f.errorf(remote.CodeSignature, "commit %s carries a signature of a kind this loadout does not read (SSH and OpenPGP are read; X.509 is not)", short)
	}
}

func matchAny(list []string, want string) bool {
	for _, s := range list {
		if strings.TrimSpace(s) == want {
			return true
		}
	}
	return false
}

// unsigned is the commit as it was signed: its encoding without the
// gpgsig header.
func unsigned(c *object.Commit) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(o); err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(r)
	return b.Bytes(), err
}

// verifySSHSig checks an armored SSHSIG signature of message in namespace
// and returns the key that made it.
func verifySSHSig(armored, namespace string, message []byte) (ssh.PublicKey, error) {
	const begin, end = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
	body, ok := strings.CutPrefix(strings.TrimSpace(armored), begin)
	if !ok {
		return nil, errors.New("not an SSH signature")
	}
	body, ok = strings.CutSuffix(body, end)
	if !ok {
		return nil, errors.New("the SSH signature has no end line")
	}
	blob, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return nil, fmt.Errorf("the SSH signature is not base64: %v", err)
	}
	var sig struct {
		Magic     [6]byte
		Version   uint32
		PublicKey []byte
		Namespace string
		Reserved  string
		HashAlg   string
		Signature []byte
	}
	if err := ssh.Unmarshal(blob, &sig); err != nil {
		return nil, fmt.Errorf("the SSH signature is malformed: %v", err)
	}
	if string(sig.Magic[:]) != "SSHSIG" || sig.Version != 1 {
		return nil, fmt.Errorf("not an SSHSIG version 1 signature (magic %q, version %d)", sig.Magic[:], sig.Version)
	}
	if sig.Namespace != namespace {
		return nil, fmt.Errorf("signed for namespace %q, not %q", sig.Namespace, namespace)
	}
	var digest []byte
	switch sig.HashAlg {
	case "sha256":
		h := sha256.Sum256(message)
		digest = h[:]
	case "sha512":
		h := sha512.Sum512(message)
		digest = h[:]
	default:
		return nil, fmt.Errorf("hash algorithm %q (sha256 and sha512 are read)", sig.HashAlg)
	}
	pub, err := ssh.ParsePublicKey(sig.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("the signing key: %v", err)
	}
	if _, isCert := pub.(*ssh.Certificate); isCert {
		return nil, errors.New("signed with an SSH certificate, which this check does not read: sign with a plain key listed in allowed_signers")
	}
	var s ssh.Signature
	if err := ssh.Unmarshal(sig.Signature, &s); err != nil {
		return nil, fmt.Errorf("the signature blob is malformed: %v", err)
	}
	if s.Format == ssh.KeyAlgoRSA {
		return nil, errors.New("an RSA signature with SHA-1 (ssh-rsa) is refused: sign with rsa-sha2-512 or another key type")
	}
	signed := ssh.Marshal(struct {
		Magic     [6]byte
		Namespace string
		Reserved  string
		HashAlg   string
		Hash      []byte
	}{sig.Magic, sig.Namespace, sig.Reserved, sig.HashAlg, digest})
	if err := pub.Verify(signed, &s); err != nil {
		return nil, fmt.Errorf("it does not match the commit's content (key %s): %v", ssh.FingerprintSHA256(pub), err)
	}
	return pub, nil
}
