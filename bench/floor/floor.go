// Package floor is the baseline that loadout's cold discovery is measured
// against: the least work any loader must do on a skills tree, done
// serially. It walks the tree once (skipping dot entries and node_modules,
// as Pi and loadout do) and reads every SKILL.md in full, without parsing
// anything.
//
// The floor visits every folder, including a skill's supporting-file
// folders, but never stats or opens the supporting files themselves
// (filepath.WalkDir uses the directory entry types); loadout's manifest
// needs their sizes, so matching the floor takes parallelism.
package floor

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Walk reads every SKILL.md under root, serially, and returns how many it
// read and their total size.
func Walk(root string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != root && (name[0] == '.' || name == "node_modules") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if name != "SKILL.md" || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		bytes += int64(len(data))
		return nil
	})
	return files, bytes, err
}
