package attack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
)

// TestCosignInterop runs the real cosign (v3, built from compat/cosign)
// against a real registry, both ways: cosign verifies what `loadout push
// --sign` signed, and loadout pins what cosign signed, in cosign v3's
// default format (a Sigstore bundle as a referrer) and its older .sig tag
// (--new-bundle-format=false). Nothing reaches a network: no
// transparency log (--tlog-upload=false, --insecure-ignore-tlog), no
// signing config or trusted root fetched (--use-signing-config=false).
//
// cosign's cold build takes minutes (docs/testing.md), so this runs only
// with LOADOUT_COSIGN=1; CI covers the same formats with sigstore-go's
// own verifier (signing/signing_test.go) and TestAttackOCISignatures.
func TestCosignInterop(t *testing.T) {
	if os.Getenv("LOADOUT_COSIGN") == "" {
		t.Skip("LOADOUT_COSIGN=1 builds cosign from compat/cosign (minutes, cold) and runs it against a real registry")
	}
	cosign := testutil.GoTool(t, "compat/cosign", "github.com/sigstore/cosign/v3/cmd/cosign")
	reg := registrytest.Start(t, registrytest.Options{})
	work := t.TempDir()
	env := append(os.Environ(), "COSIGN_PASSWORD=hunter2", "HOME="+work, "TUF_ROOT="+filepath.Join(work, "tuf"),
		"COSIGN_EXPERIMENTAL=", "SIGSTORE_REKOR_PUBLIC_KEY=")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(cosign, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("generate-key-pair"); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	key, pub := filepath.Join(work, "cosign.key"), filepath.Join(work, "cosign.pub")
	repo := reg.Ref("team/pdf")
	dir := ociDir(t, map[string]any{"oci": repo, "tag": "stable", "insecure": true, "verify": map[string]any{"key": pub}}, nil)

	// loadout signs, cosign verifies.
	d1 := pushFolder(t, dir, repo+":1.0.0", "version one", key)
	if out, err := run("verify", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", repo+"@"+d1); err != nil {
		t.Fatalf("cosign verify of what loadout push --sign signed: %v\n%s", err, out)
	}
	// An unsigned artifact: cosign refuses it too (the test can fail).
	d0 := pushFolder(t, dir, repo+":0.9.0", "unsigned", "")
	if out, err := run("verify", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", repo+"@"+d0); err == nil {
		t.Fatalf("cosign verified an unsigned artifact:\n%s", out)
	}

	// cosign signs, loadout verifies: the bundle format, then the .sig tag.
	for _, format := range []string{"--new-bundle-format=true", "--new-bundle-format=false"} {
		d := pushFolder(t, dir, repo+":stable", "signed by cosign "+format, "")
		if out, _, code := CLI(t, dir, nil, "sync"); code == 0 {
			t.Fatalf("%s: sync pinned an artifact before cosign signed it:\n%s", format, out)
		}
		out, err := run("sign", "--key", key, "--tlog-upload=false", "--use-signing-config=false", format, "--allow-http-registry", "--yes", repo+"@"+d)
		if err != nil {
			t.Fatalf("cosign sign %s: %v\n%s", format, err, out)
		}
		if out, errOut, code := CLI(t, dir, nil, "sync"); code != 0 {
			t.Fatalf("%s: sync of what cosign signed: %d\n%s%s", format, code, out, errOut)
		}
		if rev, lock := ociPin(t, dir); rev != d || !strings.Contains(lock, `"kind": "key"`) {
			t.Fatalf("%s: pinned %s, want %s signed by the key\n%s", format, rev, d, lock)
		}
	}
}
