// Package examples holds loadout's example skills, plugin and config, so
// that the loadout binary can run on its defaults anywhere.
package examples

import (
	"bytes"
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed loadout.json skills plugins
var files embed.FS

// FS returns the examples: loadout.json, skills/ and plugins/.
func FS() fs.FS { return files }

// Materialize writes the examples into dir (replacing what an earlier
// copy wrote) and returns the path of its loadout.json. Embedded files lose
// their modes, so files starting with "#!" are made executable again.
func Materialize(dir string) (string, error) {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if bytes.HasPrefix(data, []byte("#!")) {
			mode = 0o755
		}
		if err := os.WriteFile(target, data, mode); err != nil {
			return err
		}
		return os.Chmod(target, mode)
	})
	return filepath.Join(dir, "loadout.json"), err
}
