//go:build !linux

package watch

// signature is signatureOf where no faster one is written.
func signature(dir string) (uint64, error) { return signatureOf(dir) }
