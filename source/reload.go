package source

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadout/loadout/internal/ignore"
	"github.com/loadout/loadout/skill"
)

// ReloadSkill reads one skill folder again, as ScanFolder would have found
// it under root: the same ignore rules, limits and cache. dir is the folder
// as reached from root. It returns nil when the folder no longer holds a
// skill (its SKILL.md is gone), with diagnostics saying why when it is
// broken. A broken edit of a skill the cache has seen keeps the last good
// version (with a kept-last-good error), as a scan does.
func ReloadSkill(ctx context.Context, root, dir string, opt Options) (*skill.Skill, []skill.Diagnostic) {
	opt.defaults()
	absRoot, err := filepath.Abs(expandHome(root))
	if err != nil {
		return nil, []skill.Diagnostic{diag(skill.Error, skill.CodeReadError, root, "cannot resolve the folder: %v", err)}
	}
	rel, err := filepath.Rel(absRoot, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, []skill.Diagnostic{diag(skill.Error, skill.CodeReadError, dir, "not inside the root %s", absRoot)}
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	// Rebuild the ignore rules and the chain of real folders from the root
	// down to the skill's parent.
	var rules *ignore.Rules
	rootReal, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return nil, []skill.Diagnostic{diag(skill.Error, skill.CodeRootUnreadable, absRoot, "cannot read the folder: %s", errText(err))}
	}
	up := &chain{real: rootReal}
	cur, curRel := absRoot, ""
	segs := []string{}
	if rel != "" {
		segs = strings.Split(rel, "/")
	}
	for i := 0; i < len(segs); i++ {
		if d, err := openDir(cur); err == nil {
			rules, _ = readIgnoreFiles(d, curRel, rules)
			d.close()
		}
		cur = filepath.Join(cur, segs[i])
		curRel = joinRel(curRel, segs[i])
		if i < len(segs)-1 {
			if r, err := filepath.EvalSymlinks(cur); err == nil {
				up = &chain{real: r, up: up}
			}
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil
	}
	origin := opt.Origin
	if origin.Kind == "" {
		origin.Kind = "folder"
	}
	if origin.Root == "" {
		origin.Root = absRoot
	}
	s := &scan{opt: opt, origin: &origin, settled: time.Now().Add(-skill.StampSettle).UnixNano()}
	d, err := openDir(dir)
	if err != nil {
		return nil, []skill.Diagnostic{diag(skill.Error, skill.CodeReadError, dir, "cannot list the folder: %s", errText(err))}
	}
	defer d.close()
	entry := entryFile(d)
	if entry == "" {
		return nil, nil
	}
	f := s.loadSkill(task{path: dir, real: real, rel: rel, depth: len(segs), rules: rules, up: &chain{real: real, up: up}}, d, entry, 0) // worker 0: no batches
	return f.skill, f.diags
}
