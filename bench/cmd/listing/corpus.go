package main

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

// corpusSkill is what the benchmark keeps of a real SKILL.md: nothing else
// is held, so a pool of tens of thousands stays small.
type corpusSkill struct {
	Name, Description, Category string
}

// corpusStats says what readCorpus found.
type corpusStats struct {
	Files     int // SKILL.md files read
	Skipped   int // unparsable, or no name or description
	Hidden    int // disable-model-invocation: never listed, so left out
	Duplicate int // a name already taken by an earlier file
}

// skipDirs are folders readCorpus never enters.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// readCorpus reads every SKILL.md under each dir, in the order the dirs are
// given and, inside one, in lexical walk order, so the result is the same
// from run to run. Each file is parsed once, leniently, as discovery does
// (skill.ParseHeader: skill.Parse without keeping the body); files that do
// not parse or have no name or description are skipped, as are skills
// hidden from the model. A name already taken is skipped: the first wins.
// The category is the frontmatter's `category`, else `metadata.category`.
func readCorpus(dirs []string) ([]corpusSkill, corpusStats, error) {
	var st corpusStats
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
		s      corpusSkill
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
				slots[i] = slot{s: corpusSkill{Name: doc.Name, Description: doc.Description, Category: cat}, ok: true, hidden: doc.DisableModelInvocation}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()

	seen := make(map[string]bool, len(paths))
	var pool []corpusSkill
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

// sample returns up to k skills of pool whose names are not in taken, in a
// random order that depends only on pool, seed and k. It returns fewer than
// k only when the pool has fewer such skills.
func sample(pool []corpusSkill, taken map[string]bool, k int, seed uint64) []corpusSkill {
	r := rand.New(rand.NewPCG(seed, uint64(k)))
	out := make([]corpusSkill, 0, min(k, len(pool)))
	for _, i := range r.Perm(len(pool)) {
		if len(out) == k {
			break
		}
		if !taken[pool[i].Name] {
			out = append(out, pool[i])
		}
	}
	return out
}

// pct returns the p-th percentile (0-100) of sorted values.
func pct(sorted []int, p int) int {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)*p/100, len(sorted)-1)]
}

// lengthStats describes the name and description lengths (code points) of
// a set of skills in one line.
func lengthStats(names, descs []string) string {
	nl := make([]int, len(names))
	dl := make([]int, len(descs))
	nsum, dsum := 0, 0
	for i, s := range names {
		nl[i] = utf8.RuneCountInString(s)
		nsum += nl[i]
	}
	for i, s := range descs {
		dl[i] = utf8.RuneCountInString(s)
		dsum += dl[i]
	}
	slices.Sort(nl)
	slices.Sort(dl)
	mean := func(sum, n int) float64 { return float64(sum) / float64(max(n, 1)) }
	return fmt.Sprintf("names mean %.1f characters (p10 %d, p50 %d, p90 %d); descriptions mean %.0f (p10 %d, p50 %d, p90 %d, longest %d)",
		mean(nsum, len(nl)), pct(nl, 10), pct(nl, 50), pct(nl, 90),
		mean(dsum, len(dl)), pct(dl, 10), pct(dl, 50), pct(dl, 90), pct(dl, 100))
}

func entryStats(es []render.Entry) string {
	names := make([]string, len(es))
	descs := make([]string, len(es))
	for i, e := range es {
		names[i], descs[i] = e.Name, e.Description
	}
	return lengthStats(names, descs)
}
