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
	"sync"
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

// WalkParallel is the floor of a cold start: what discovery must read,
// done by workers goroutines at once (at least 1). Like Walk it lists every
// folder and reads every SKILL.md in full; it also lstat's every other
// file, as discovery does to list a skill's supporting files with their
// sizes. It parses nothing and keeps nothing. On a cold page cache it is
// bound by the disk's reads, and more workers keep more of them in
// flight.
func WalkParallel(root string, workers int) (files int, bytes int64, err error) {
	type result struct {
		files int
		bytes int64
		err   error
	}
	dirs := make(chan string, 1<<16)
	var pending sync.WaitGroup
	var mu sync.Mutex
	var total result
	push := func(d string) {
		pending.Add(1)
		select {
		case dirs <- d:
		default:
			go func() { dirs <- d }() // a full queue never blocks a worker
		}
	}
	visit := func(dir string) result {
		var r result
		entries, err := os.ReadDir(dir)
		if err != nil {
			r.err = err
			return r
		}
		for _, e := range entries {
			name := e.Name()
			if name[0] == '.' || name == "node_modules" {
				continue
			}
			path := filepath.Join(dir, name)
			switch {
			case e.IsDir():
				push(path)
			case name == "SKILL.md" && e.Type().IsRegular():
				data, err := os.ReadFile(path)
				if err != nil {
					r.err = err
					return r
				}
				r.files++
				r.bytes += int64(len(data))
			default:
				if _, err := os.Lstat(path); err != nil {
					r.err = err
					return r
				}
			}
		}
		return r
	}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range dirs {
				r := visit(d)
				mu.Lock()
				total.files += r.files
				total.bytes += r.bytes
				if total.err == nil {
					total.err = r.err
				}
				mu.Unlock()
				pending.Done()
			}
		}()
	}
	push(root)
	pending.Wait()
	close(dirs)
	wg.Wait()
	return total.files, total.bytes, total.err
}
