//go:build !linux

package watch

// signature is signatureOf where no faster one is written.
func signature(dir string) (uint64, error) { return signatureOf(dir) }

// listDir is listDirOf where no faster one is written.
func listDir(dir string, since int64) ([]subfolder, bool, []string) { return listDirOf(dir, since) }
