//go:build !unix

package testutil

// lockFile does not lock where flock is missing: run the npm installs
// once beforehand there (cd compat && npm ci, as .ci/run does).
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
