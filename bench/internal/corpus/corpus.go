// Package corpus reads the real public skill collections the benchmarks
// are measured on (checked out elsewhere: the repository ships none).
package corpus

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/loadout/loadout/skill"
)

// Skill is what a benchmark keeps of a real SKILL.md: nothing else
// is held, so a pool of tens of thousands stays small.
type Skill struct {
	Name, Description, Category string
	Path                        string // the SKILL.md it was read from
}

// Stats says what Read found.
type Stats struct {
	Files     int // SKILL.md files read
	Skipped   int // unparsable, or no name or description
	Hidden    int // disable-model-invocation: never listed, so left out
	Duplicate int // a name already taken by an earlier file
}

// skipDirs are folders Read never enters.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// Read reads every SKILL.md under each dir, in the order the dirs are
// given and, inside one, in lexical walk order, so the result is the same
// from run to run. Each file is parsed once, leniently, as discovery does
// (skill.ParseHeader: skill.Parse without keeping the body); files that do
// not parse or have no name or description are skipped, as are skills
// hidden from the model. A name already taken is skipped: the first wins.
// The category is the frontmatter's `category`, else `metadata.category`.
func Read(dirs []string) ([]Skill, Stats, error) {
	var st Stats
	var paths []string
	for _, dir := range dirs {
		info, err := os.Stat(dir)
		if err != nil {
			return nil, st, fmt.Errorf("corpus: %w", err)
		}
		if !info.IsDir() {
			return nil, st, fmt.Errorf("corpus: %s is not a folder: give folders that hold SKILL.md files", dir)
		}
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && skipDirs[d.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == "SKILL.md" && d.Type().IsRegular() {
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			return nil, st, fmt.Errorf("corpus: walking %s: %w", dir, err)
		}
	}
	st.Files = len(paths)

	// Parse in parallel into slots by index; dedupe after, in walk order.
	type slot struct {
		s      Skill
		ok     bool
		hidden bool
		err    error
	}
	slots := make([]slot, len(paths))
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				data, err := os.ReadFile(paths[i])
				if err != nil {
					slots[i].err = err
					continue
				}
				doc, _, ok := skill.ParseHeader(data, paths[i], filepath.Base(filepath.Dir(paths[i])))
				if !ok || doc.Name == "" || strings.TrimSpace(doc.Description) == "" {
					continue
				}
				cat := doc.Category
				if cat == "" {
					cat = doc.Metadata["category"]
				}
				slots[i] = slot{s: Skill{Name: doc.Name, Description: doc.Description, Category: cat, Path: paths[i]}, ok: true, hidden: doc.DisableModelInvocation}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()

	seen := make(map[string]bool, len(paths))
	var pool []Skill
	for i, sl := range slots {
		switch {
		case sl.err != nil:
			return nil, st, fmt.Errorf("corpus: %s: %w", paths[i], sl.err)
		case !sl.ok:
			st.Skipped++
		case sl.hidden:
			st.Hidden++
		case seen[sl.s.Name]:
			st.Duplicate++
		default:
			seen[sl.s.Name] = true
			pool = append(pool, sl.s)
		}
	}
	return pool, st, nil
}
