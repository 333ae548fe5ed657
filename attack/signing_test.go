package attack

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Attacks on signature policies (docs/signatures.md): a source that
// requires signatures never pins a revision that is unsigned, signed by a
// key the policy does not allow, or signed for something else; the last
// good pin stays served, and the error names the source.

// signingKey makes an ed25519 key with ssh-keygen: its path and public
// key line.
func signingKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the signing attacks: install Debian's openssh-client")
		}
		t.Skip("ssh-keygen is needed to sign commits")
	}
	key := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	return key, strings.TrimSpace(string(pub))
}

// pushSigned commits files signed with key (none: unsigned) by real git
// (gpg.format ssh) and pushes them; it returns the commit.
func (g *gitRemote) pushSigned(msg, key string, files map[string]string) string {
	g.t.Helper()
	WriteFiles(g.t, g.work, files)
	g.git(g.work, "add", "-A")
	if key == "" {
		g.git(g.work, "commit", "-q", "-m", msg)
	} else {
		g.git(g.work, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", msg)
	}
	g.git(g.work, "push", "-q", "--force", g.bare, "main")
	return g.git(g.work, "rev-parse", "HEAD")
}

// lockSigner is the signer loadout.lock records for source team.
func lockSigner(t *testing.T, path string) map[string]string {
	t.Helper()
	var l struct {
		Sources []struct {
			ID     string
			Signer map[string]string
		}
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range l.Sources {
		if s.ID == "team" {
			return s.Signer
		}
	}
	return nil
}

// TestAttackUnsignedAndForeignCommits: a git source whose verify policy
// lists alice's SSH key. serve pins alice's signed commit and the lock
// records her principal and key; an unsigned commit, then one signed by
// mallory (a valid signature, by a key not allowed), are refused by
// `loadout sync` with remote-signature naming the source, and the last
// good pin stays served. Alice's next commit moves the pin.
func TestAttackUnsignedAndForeignCommits(t *testing.T) {
	g := newGitRemote(t, pdfSkill("v0"))
	keys := t.TempDir()
	alice, alicePub := signingKey(t, keys, "alice")
	mallory, _ := signingKey(t, keys, "mallory")
	os.WriteFile(filepath.Join(keys, "allowed_signers"), []byte("alice@example.com "+alicePub+"\n"), 0o644)
	good := g.pushSigned("v1", alice, pdfSkill("v1"))

	var cfg map[string]any
	json.Unmarshal([]byte(remoteConfig(g, nil)), &cfg)
	src := cfg["agents"].([]any)[0].(map[string]any)["skills"].([]any)[0].(map[string]any)
	src["verify"] = map[string]any{"sshAllowedSigners": filepath.Join(keys, "allowed_signers")}
	b, _ := json.Marshal(cfg)
	s := Start(t, Options{Config: string(b)})
	lock := filepath.Join(s.Dir, "loadout.lock")
	if rev := lockRevision(t, lock); rev != good {
		t.Fatalf("serve pinned %s, want alice's %s\n%s", rev, good, s.Log())
	}
	fp, _ := exec.Command("ssh-keygen", "-lf", alice+".pub").Output()
	sg := lockSigner(t, lock)
	if sg["kind"] != "ssh" || sg["identity"] != "alice@example.com" || sg["key"] == "" || !strings.Contains(string(fp), sg["key"]) || !strings.HasPrefix(sg["policy"], "sha256:") {
		t.Fatalf("the lock records signer %v; want ssh alice@example.com with the key of %s", sg, fp)
	}

	for _, c := range []struct{ name, key, want string }{
		{"unsigned", "", "is not signed"},
		{"mallory", mallory, "not in sshAllowedSigners"},
	} {
		bad := g.pushSigned(c.name, c.key, pdfSkill(c.name))
		out, errOut, code := s.CLI(t, "sync")
		all := out + errOut
		t.Logf("%s: %s", c.name, strings.TrimSpace(all))
		if code == 0 || !strings.Contains(all, c.want) || !strings.Contains(all, "team") || !strings.Contains(all, bad[:12]) {
			t.Fatalf("%s: sync of %s: exit %d\n%s", c.name, bad, code, all)
		}
		if rev := lockRevision(t, lock); rev != good {
			t.Fatalf("%s: the pin moved to %s", c.name, rev)
		}
		if code, body := readRef(t, s); code != 200 || !strings.Contains(body, "ref v1") {
			t.Fatalf("%s: the last good snapshot is not served: %d %s", c.name, code, body)
		}
		if out, errOut, code := s.CLI(t, "sync", "--check"); code == 0 {
			t.Fatalf("%s: sync --check passes over a refused commit:\n%s%s", c.name, out, errOut)
		}
	}
	next := g.pushSigned("v2", alice, pdfSkill("v2"))
	if out, errOut, code := s.CLI(t, "sync"); code != 0 || !strings.Contains(out, "signed by ssh alice@example.com") {
		t.Fatalf("alice's commit: %d\n%s%s", code, out, errOut)
	}
	if rev := lockRevision(t, lock); rev != next {
		t.Fatalf("alice's signed commit was not pinned: %s", rev)
	}
}
