package remote

import (
	"context"
	"github.com/loadout/loadout/internal/testutil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// signedFetcher is a dirFetcher that checks signatures: a revision is
// signed by the name in the file SIGNER beside it, and the policy's
// allowed_signers file lists the names allowed.
type signedFetcher struct {
	*dirFetcher
	allowed string
	signers map[string]*Signer
}

func (f *signedFetcher) Fetch(ctx context.Context, rev, dir string, lim Limits) ([]string, error) {
	b, _ := os.ReadFile(filepath.Join(f.remote, rev, "SIGNER"))
	who := strings.TrimSpace(string(b))
	allowed, _ := os.ReadFile(f.allowed)
	if who == "" || !slices.Contains(strings.Fields(string(allowed)), who) {
		return nil, Errorf("", CodeSignature, "%s is not signed by an allowed signer (%q)", rev, who)
	}
	notes, err := f.dirFetcher.Fetch(ctx, rev, dir, lim)
	if err == nil {
		f.signers[rev] = &Signer{Kind: "ssh", Identity: who}
	}
	return notes, err
}

func (f *signedFetcher) Signer(rev string) *Signer { return f.signers[rev] }

// TestVerifyPolicyInTheManager: with a verify policy, a pin records its
// signer and the policy's digest; an unsigned revision is refused and the
// last good pin stays; a pin made under another policy (or none) is not
// served by the catalog commands (remote-signature) until a sync checks
// it again, which records the signer without moving the pin; a fetcher
// that cannot check signatures is refused.
func TestVerifyPolicyInTheManager(t *testing.T) {
	fx := newFixture(t)
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	testutil.WriteBytes(t, allowed, []byte("alice\n"), 0o644)
	sf := &signedFetcher{dirFetcher: fx.f, allowed: allowed, signers: map[string]*Signer{}}
	fx.opt.Fetchers["git"] = func(Spec) (Fetcher, error) { return sf, nil }
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	sign := func(rev, who string) {
		testutil.WriteBytes(t, filepath.Join(fx.remote, rev, "SIGNER"), []byte(who), 0o644)
	}
	sign("aaa111", "alice")

	// Pinned before the source had a policy.
	m := fx.manager()
	if ch := m.Sync(context.Background())[0]; ch.Err != nil || ch.Signer != nil {
		t.Fatalf("sync without a policy: %+v", ch)
	}
	id := m.Specs()[0].ID
	fx.spec.Verify = &Verify{SSHAllowedSigners: allowed}
	m = fx.manager()
	ds := m.Open(context.Background(), false)
	if len(ds) != 1 || ds[0].Code != CodeSignature || !strings.Contains(ds[0].Message, "loadout sync") {
		t.Fatalf("a pin made without the policy, opened: %+v", ds)
	}
	ch := m.Sync(context.Background())[0]
	if ch.Err != nil || ch.Moved || ch.Signer == nil || ch.Signer.Identity != "alice" {
		t.Fatalf("re-checking the pin: %+v", ch)
	}
	p := m.Pin(id)
	if p.Signer == nil || p.Signer.Identity != "alice" || !strings.HasPrefix(p.Signer.Policy, "sha256:") || p.Revision != "aaa111" {
		t.Fatalf("the pin after the check: %+v", p)
	}
	if ds := fx.manager().Open(context.Background(), false); len(ds) != 0 {
		t.Fatalf("a checked pin, opened: %+v", ds)
	}

	// An unsigned revision, then mallory's: refused, the pin holds.
	for _, who := range []string{"", "mallory"} {
		fx.revision("bbb222", map[string]string{"pdf": "v2 " + who})
		sign("bbb222", who)
		ch := m.Sync(context.Background())[0]
		if ch.Err == nil || CodeOf(ch.Err) != CodeSignature || m.Pin(id).Revision != "aaa111" {
			t.Fatalf("signer %q: %+v, pin %+v", who, ch, m.Pin(id))
		}
		if sks, _ := m.Skills(id); len(sks) != 1 || !strings.Contains(body(t, m, id, "pdf"), "v1") {
			t.Fatalf("signer %q: the last good snapshot is not served", who)
		}
	}

	// The policy changes (mallory added): the pin is checked again.
	testutil.WriteBytes(t, allowed, []byte("alice mallory\n"), 0o644)
	m2 := fx.manager()
	if ds := m2.Open(context.Background(), false); len(ds) != 1 || ds[0].Code != CodeSignature {
		t.Fatalf("a pin checked under another policy, opened: %+v", ds)
	}
	if ch := m2.Sync(context.Background())[0]; ch.Err != nil || !ch.Moved || ch.Signer.Identity != "mallory" {
		t.Fatalf("mallory, now allowed: %+v", ch)
	}

	// A fetcher that checks nothing cannot serve a source with a policy.
	fx.opt.Fetchers["git"] = func(Spec) (Fetcher, error) { return fx.f, nil }
	if ch := fx.manager().Sync(context.Background())[0]; CodeOf(ch.Err) != CodeSignature {
		t.Fatalf("a fetcher without signatures: %+v", ch)
	}
}
