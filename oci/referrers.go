package oci

import (
	"context"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
)

// IsNotFound reports whether err says the registry has no such manifest or
// blob (a 404), as opposed to a registry that failed or refused.
func IsNotFound(err error) bool { return errors.Is(err, errdef.ErrNotFound) }

// errEnough stops a referrers listing at its bound.
var errEnough = errors.New("enough referrers")

// Referrers lists the manifests whose subject is the manifest subject
// (a digest) in the reference's repository, of artifactType ("" for
// all): through the registry's referrers API, or the referrers tag
// schema's index (sha256-HEX) where the registry has no such API, as
// cosign and oras write it. At most max are returned (more is an error:
// a listing cannot grow without bound).
func (c *Client) Referrers(ctx context.Context, repository string, subject Descriptor, artifactType string, max int) ([]Descriptor, error) {
	r, err := ParseRef(repository)
	if err != nil {
		return nil, err
	}
	repo, err := c.repo(r)
	if err != nil {
		return nil, err
	}
	var out []Descriptor
	err = repo.Referrers(ctx, toSpec(subject), artifactType, func(page []ocispec.Descriptor) error {
		for _, d := range page {
			if len(out) == max {
				return errEnough
			}
			out = append(out, fromSpec(d))
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil, &Error{Code: CodeTooMany, Entry: subject.Digest, Msg: fmt.Sprintf("more than %d referrers of type %q", max, artifactType)}
	}
	if err != nil && !IsNotFound(err) {
		return nil, c.wrap("listing the referrers of "+subject.Digest, r, err)
	}
	return out, nil
}
