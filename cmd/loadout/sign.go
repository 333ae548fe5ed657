package main

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/signing"
)

// push --sign KEY: cosign's key format (package signing). An encrypted
// cosign.key is decrypted with $COSIGN_PASSWORD, as cosign reads it; an
// unencrypted PEM key needs none.
func init() {
	newSigner = func(ctx context.Context, e *env, key string) (oci.Signer, error) {
		ks, err := signing.LoadKey(key, func() ([]byte, error) { return []byte(e.getenv("COSIGN_PASSWORD")), nil })
		if err != nil {
			return nil, fmt.Errorf("--sign: %w (an encrypted key's password is read from $COSIGN_PASSWORD)", err)
		}
		fmt.Fprintf(e.stderr, "signing with the key %s\n", ks.KeyID())
		return ks, nil
	}
}
