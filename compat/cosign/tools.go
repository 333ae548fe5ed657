//go:build tools

// Package cosign pins Sigstore's cosign for the signing interop tests
// (attack/signing_cosign_test.go): testutil.GoTool builds
// github.com/sigstore/cosign/v3/cmd/cosign from this module.
package cosign

import _ "github.com/sigstore/cosign/v3/cmd/cosign"
