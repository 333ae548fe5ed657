package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadout/loadout/skill"
)

// Bounds on the look for skills discovery skipped below an empty root.
const (
	maxDotFolders  = 10     // named in the message; the rest counted
	maxDotEntries  = 50_000 // entries read in all
	dotFolderDepth = 16     // as discovery's default maxDepth
)

// emptyRoots are error diagnostics for the roots that yielded no skill
// (counts: skills per root) and are not reported missing or unreadable
// already. A repository laid out like openai/skills keeps its skills under
// .curated/ and .system/, which discovery skips as it skips every dot
// folder: the diagnostic names them and says how to include them, so
// that CI does not pass on nothing.
func emptyRoots(roots []string, counts map[string]int, diags []skill.Diagnostic) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, root := range roots {
		if counts[root] > 0 || slices.ContainsFunc(diags, func(d skill.Diagnostic) bool {
			return d.Path == root && (d.Code == skill.CodeRootMissing || d.Code == skill.CodeRootUnreadable)
		}) {
			continue
		}
		msg := "no skill found below this folder (a skill is a folder holding SKILL.md)"
		if dots, more := dotSkillFolders(root); len(dots) > 0 {
			shown := make([]string, len(dots))
			args := make([]string, len(dots))
			for i, d := range dots {
				shown[i] = termPath(d)
				args[i] = "--root " + termPath(filepath.Join(root, d))
			}
			first := termPath(filepath.Join(root, dots[0]))
			list := strings.Join(shown, ", ")
			if more {
				list += " and more"
			}
			msg = fmt.Sprintf("no skill found below this folder: discovery skips folders whose names start with '.', and %s hold SKILL.md files; name them as roots to include them (%s, or {\"root\": %q} in the config's agent)", list, strings.Join(args, " "), first)
		}
		out = append(out, skill.Diagnostic{Severity: skill.Error, Code: skill.CodeRootEmpty, Path: root, Message: msg})
	}
	return out
}

// dotSkillFolders are the folders below root, relative to it, whose
// names start with '.' (not .git) and which hold a SKILL.md (or
// skill.md) somewhere below, outermost first; more says the bounds cut
// the list short.
func dotSkillFolders(root string) (dots []string, more bool) {
	read := 0
	holdsSkill := func(dir string) bool {
		found := false
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			read++
			if err != nil || read > maxDotEntries {
				return filepath.SkipAll
			}
			if d.IsDir() && strings.Count(p[len(dir):], string(filepath.Separator)) > dotFolderDepth {
				return filepath.SkipDir
			}
			if !d.IsDir() && (d.Name() == "SKILL.md" || d.Name() == "skill.md") {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		return found
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		read++
		if read > maxDotEntries {
			more = true
			return filepath.SkipAll
		}
		if err != nil || !d.IsDir() || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if strings.Count(rel, string(filepath.Separator)) >= dotFolderDepth || d.Name() == "node_modules" || d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Name()[0] == '.' {
			if holdsSkill(p) {
				if len(dots) == maxDotFolders {
					more = true
					return filepath.SkipAll
				}
				dots = append(dots, rel)
			}
			return filepath.SkipDir
		}
		return nil
	})
	return dots, more
}

// termPath is p as a person would type it: relative to the working
// folder when it is below it, escaped for the terminal.
func termPath(p string) string {
	if filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				p = rel
			}
		}
	}
	return termText(p)
}
