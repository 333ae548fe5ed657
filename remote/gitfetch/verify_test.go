package gitfetch

import (
	"context"
	"github.com/loadout/loadout/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/remote"
)

// sshKey makes an ed25519 key pair with ssh-keygen and returns the private
// key's path and the public key's line.
func sshKey(t testing.TB, dir, name string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the signed-commit tests: install Debian's openssh-client")
		}
		t.Skip("ssh-keygen is needed to sign commits")
	}
	key := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return key, strings.TrimSpace(string(pub))
}

// commitSigned commits everything with git's own signing (extra -c
// settings, e.g. gpg.format=ssh and user.signingkey=KEY) and pushes it.
func (fx *fixture) commitSigned(msg string, cfg ...string) string {
	fx.t.Helper()
	fx.git(fx.work, "add", "-A")
	args := []string{}
	for _, c := range cfg {
		args = append(args, "-c", c)
	}
	args = append(args, "commit", "-q", "--allow-empty", "-m", msg)
	if len(cfg) > 0 {
		args = append(args, "-S")
	}
	fx.git(fx.work, args...)
	fx.git(fx.work, "push", "-q", "--force", fx.bare, "HEAD:refs/heads/main")
	return fx.git(fx.work, "rev-parse", "HEAD")
}

func fetchSigned(t *testing.T, spec remote.Spec) (*remote.Signer, error) {
	t.Helper()
	f := mustNew(t, spec)
	rev, err := f.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := f.Fetch(context.Background(), rev, dir, remote.Limits{}); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			t.Errorf("a refused commit wrote %s", dir)
		}
		return nil, err
	}
	s := f.Signer(rev)
	if s == nil {
		t.Fatalf("fetched %s under a policy, and Signer is nil", rev)
	}
	return s, nil
}

// TestSSHSignedCommits signs commits with real git (gpg.format ssh, keys
// from ssh-keygen) and reads them over git http-backend: the allowed key
// passes and is recorded; another key, an unsigned commit, a key whose
// line does not allow the git namespace or is no longer valid are refused.
func TestSSHSignedCommits(t *testing.T) {
	fx := newFixture(t)
	url := fx.serve("", false)
	keys := t.TempDir()
	alice, alicePub := sshKey(t, keys, "alice")
	mallory, malloryPub := sshKey(t, keys, "mallory")
	allowed := filepath.Join(keys, "allowed_signers")
	testutil.WriteBytes(t, allowed, []byte("# team\nalice@example.com "+alicePub+"\n"), 0o644)
	spec := remote.Spec{Git: url, Verify: &remote.Verify{SSHAllowedSigners: allowed}}

	fx.write(map[string]string{"pdf/SKILL.md": "---\nname: pdf\ndescription: d\n---\n"})
	rev := fx.commitSigned("signed", "gpg.format=ssh", "user.signingkey="+alice)
	s, err := fetchSigned(t, spec)
	if err != nil {
		t.Fatalf("a commit signed by an allowed key: %v", err)
	}
	if s.Kind != "ssh" || s.Identity != "alice@example.com" || !strings.HasPrefix(s.Key, "SHA256:") {
		t.Fatalf("signer %+v", s)
	}
	fp, _ := exec.Command("ssh-keygen", "-lf", alice+".pub").Output()
	if !strings.Contains(string(fp), s.Key) {
		t.Fatalf("key %s is not ssh-keygen's fingerprint %s", s.Key, fp)
	}
	t.Logf("%s signed by %s", rev[:12], s)

	fx.write(map[string]string{"pdf/x.md": "x"})
	fx.commitSigned("by mallory", "gpg.format=ssh", "user.signingkey="+mallory)
	_, err = fetchSigned(t, spec)
	wantCode(t, err, remote.CodeSignature)
	if !strings.Contains(err.Error(), "not in sshAllowedSigners") || !strings.Contains(err.Error(), "source test") {
		t.Fatalf("error does not say the key is not allowed: %v", err)
	}

	fx.commitSigned("unsigned")
	_, err = fetchSigned(t, spec)
	wantCode(t, err, remote.CodeSignature)
	if !strings.Contains(err.Error(), "is not signed") {
		t.Fatalf("error: %v", err)
	}

	// The key is listed, for another namespace; then only before a date
	// already past.
	fx.commitSigned("alice again", "gpg.format=ssh", "user.signingkey="+alice)
	for line, want := range map[string]string{
		`alice@example.com namespaces="file" ` + alicePub:           "not git",
		`alice@example.com valid-before="20200101Z" ` + alicePub:    "valid before",
		`alice@example.com valid-after="29990101Z" ` + alicePub:     "valid after",
		"mallory@example.com " + malloryPub:                         "not in sshAllowedSigners",
		`alice@example.com namespaces="git,file" ` + alicePub:       "",
		`alice@example.com,bob valid-after="20200101Z" ` + alicePub: "",
	} {
		testutil.WriteBytes(t, allowed, []byte(line+"\n"), 0o644)
		_, err := fetchSigned(t, spec)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", line, err)
			}
			continue
		}
		if err == nil || remote.CodeOf(err) != remote.CodeSignature || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", line, err, want)
		}
	}
}

// TestOpenPGPSignedCommits signs with Debian's gpg: the key in the ring
// passes and its fingerprint and user id are recorded; a key not in it is
// refused.
func TestOpenPGPSignedCommits(t *testing.T) {
	if _, err := exec.LookPath("gpg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the OpenPGP tests: install Debian's gnupg")
		}
		t.Skip("gpg is needed to sign commits with OpenPGP")
	}
	fx := newFixture(t)
	home := filepath.Join(t.TempDir(), "gnupg")
	testutil.Must(t, os.Mkdir(home, 0o700))
	gpg := func(args ...string) string {
		cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %v: %v", args, err)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run() })
	gpg("--quick-gen-key", "Alice <alice@example.com>", "ed25519", "sign", "never")
	gpg("--quick-gen-key", "Mallory <mallory@example.com>", "ed25519", "sign", "never")
	fpr := func(uid string) string {
		for _, l := range strings.Split(gpg("--with-colons", "--list-keys", uid), "\n") {
			if strings.HasPrefix(l, "fpr:") {
				return strings.Split(l, ":")[9]
			}
		}
		t.Fatalf("no fingerprint for %s", uid)
		return ""
	}
	alice, mallory := fpr("alice@example.com"), fpr("mallory@example.com")
	ring := filepath.Join(t.TempDir(), "keys.asc")
	testutil.WriteBytes(t, ring, []byte(gpg("--armor", "--export", alice)), 0o644)
	prog := filepath.Join(t.TempDir(), "gpg.sh")
	testutil.WriteBytes(t, prog, []byte("#!/bin/sh\nexec gpg --homedir "+home+" --batch --pinentry-mode loopback --passphrase '' \"$@\"\n"), 0o755)
	spec := remote.Spec{Git: fx.serve("", false), Verify: &remote.Verify{OpenPGPKeys: ring}}

	fx.write(map[string]string{"pdf/SKILL.md": "---\nname: pdf\ndescription: d\n---\n"})
	fx.commitSigned("signed", "gpg.program="+prog, "user.signingkey="+alice)
	s, err := fetchSigned(t, spec)
	if err != nil {
		t.Fatalf("a commit signed by a key in the ring: %v", err)
	}
	if s.Kind != "openpgp" || s.Key != alice || s.Identity != "Alice <alice@example.com>" {
		t.Fatalf("signer %+v, want openpgp %s Alice", s, alice)
	}
	fx.commitSigned("by mallory", "gpg.program="+prog, "user.signingkey="+mallory)
	_, err = fetchSigned(t, spec)
	wantCode(t, err, remote.CodeSignature)
	if !strings.Contains(err.Error(), "does not verify against openpgpKeys") {
		t.Fatalf("error: %v", err)
	}
	// An SSH-signed commit where only OpenPGP keys are configured.
	key, _ := sshKey(t, t.TempDir(), "k")
	fx.commitSigned("ssh", "gpg.format=ssh", "user.signingkey="+key)
	_, err = fetchSigned(t, spec)
	wantCode(t, err, remote.CodeSignature)
}

// TestVerifyPolicyErrors: a policy that cannot be read is refused when
// the fetcher is made, naming the file and line.
func TestVerifyPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "allowed")
	for content, want := range map[string]string{
		"alice@example.com": "line 1",
		"a cert-authority ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1x6/Zhq0rS1KnO3lCD3W1A7m5vQ7nH5b5x9Hk3oYyW": "cert-authority",
		"# only a comment\n": "holds no signer",
	} {
		testutil.WriteBytes(t, bad, []byte(content), 0o644)
		_, err := New(remote.Spec{ID: "t", Git: dir, Verify: &remote.Verify{SSHAllowedSigners: bad}})
		if err == nil || remote.CodeOf(err) != remote.CodeSignature || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want %s naming %s", content, err, want, bad)
		}
	}
	_, err := New(remote.Spec{ID: "t", Git: dir, Verify: &remote.Verify{Key: bad}})
	if err == nil || !strings.Contains(err.Error(), "oci sources") {
		t.Errorf("a cosign key on a git source: %v", err)
	}
	_, err = New(remote.Spec{ID: "t", Git: dir, Verify: &remote.Verify{OpenPGPKeys: filepath.Join(dir, "missing.asc")}})
	if err == nil || !strings.Contains(err.Error(), "missing.asc") {
		t.Errorf("a missing key ring: %v", err)
	}
}
