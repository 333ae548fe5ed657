//go:build !linux

package watch

// signature is signatureOf where no faster one is written.
func signature(dir string) (uint64, error) { return signatureOf(dir) }

// subfolders is subfoldersOf where no faster one is written.
func subfolders(dir string) []subfolder { return subfoldersOf(dir) }
