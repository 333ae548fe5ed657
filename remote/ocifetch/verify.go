package ocifetch

import (
	"context"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/remote"
)

var _ remote.Signed = (*Fetcher)(nil)

// verify checks, when the source has a verify policy, that the manifest
// rev carries a cosign signature the policy accepts (package signing:
// Sigstore bundles as referrers, or the .sig tag), and records who signed
// it. A digest unsigned, signed by another key or identity, or signed
// for another digest is refused with remote.CodeSignature.
func (f *Fetcher) verify(ctx context.Context, cli *oci.Client, rev string) error {
	if f.verifier == nil {
		return nil
	}
	s, err := f.verifier.Verify(ctx, cli, f.spec.OCI, rev)
	if err != nil {
		if ctx.Err() != nil {
			return f.wrapCtx(ctx, "checking the signatures of "+rev, err)
		}
		if oci.CodeOf(err) != "" {
			return f.wrap("checking the signatures of "+rev, err)
		}
		return remote.Errorf(f.spec.ID, remote.CodeSignature, "%s of %s is refused by the source's verify policy: %v", rev, f.spec.OCI, err)
	}
	f.mu.Lock()
	if f.signers == nil {
		f.signers = map[string]*remote.Signer{}
	}
	f.signers[rev] = s
	f.mu.Unlock()
	return nil
}

// Signer is who signed rev, when the source has a verify policy and Fetch
// fetched rev.
func (f *Fetcher) Signer(rev string) *remote.Signer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signers[rev]
}
