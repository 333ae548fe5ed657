//go:build !unix

package remote

import "os"

// Without flock no process can tell whether another serves a folder: all
// are kept.
func lockShared(*os.File) error         { return nil }
func tryLockExclusive(*os.File) bool    { return false }
func lockFolder(string) (unlock func()) { return func() {} }
