// Package source finds skills. ScanFolder walks a folder on disk; later
// sources (the store, plugins) produce the same *skill.Skill values, so the
// catalog treats every source alike.
package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/internal/ignore"
	"github.com/loadout/loadout/skill"
)

// Defaults for Options.
const (
	DefaultMaxDepth = 16
	DefaultMaxDirs  = 100_000
	DefaultMaxFiles = 5_000
	// DefaultMaxFileSize is the largest file served whole: 16 MiB, what
	// MCP hosts must accept for a whole skill.
	DefaultMaxFileSize = 16 << 20
)

// Options bound and tune a folder scan. The zero value is ready to use.
type Options struct {
	// MaxDepth is how many folders below the root are entered, counting
	// folders inside skills too. Deeper folders are reported, not walked.
	MaxDepth int
	// MaxDirs is how many folders are searched for skills per root (folders
	// inside a skill do not count; MaxFiles bounds those).
	MaxDirs int
	// MaxFiles is how many supporting files (and folders) one skill's
	// manifest may list.
	MaxFiles int
	// MaxFileSize is the largest file of a skill that is read or served
	// whole (default DefaultMaxFileSize): a larger SKILL.md is not loaded,
	// and a larger supporting file is listed but served only in ranges
	// (skill.Skill.MaxFileSize).
	MaxFileSize int64
	// Workers is the number of folders read at once (default 2×GOMAXPROCS).
	Workers int
	// Cache, when set, keeps parsed SKILL.md metadata between scans: a
	// rescan reads only the files whose size, time or inode changed.
	Cache *Cache
	// Origin is copied into every skill found; Kind defaults to "folder"
	// and Root to the scanned root.
	Origin skill.Origin
	// KeepBodies keeps each skill's body as scanned (servers do: loads read
	// no skill files, and a broken edit keeps serving the last good
	// version, body included): in Bodies when it is set, else in memory.
	KeepBodies bool
	// TypedMeta makes each skill keep only the typed fields of its
	// frontmatter (skill.Frontmatter.TypedOnly: Meta.Raw and
	// Meta.Metadata are nil), for one-shot commands that read nothing
	// else, such as loadout check and list: a skill then holds about 600
	// bytes less. Diagnostics are the same either way.
	TypedMeta bool
	// SharedMeta makes each skill's Meta keep only the frontmatter fields
	// a catalog reads to list and check skills: Category, RequiresTools
	// and DisableModelInvocation (Meta.Name and Meta.Description are
	// empty: read Skill.Name and Skill.Description; Version and Tags,
	// which search and loadout list read, are dropped). The skills whose
	// fields are equal share one Meta, which must not be changed
	// (skill.Batch.SharedMeta). It implies TypedMeta, and applies to a
	// scan without a Cache, whose skills are kept until the scan's user
	// drops them all: one-shot commands such as loadout prompt and check,
	// where a Frontmatter per skill was 10 MB at 50,000 skills.
	// Diagnostics are the same either way.
	SharedMeta bool
	// NoFiles makes each skill keep no manifest of its supporting files
	// (Files is nil; Dirs and Stamp are kept), for one-shot commands that
	// print the listing alone and read no skill file, such as loadout
	// prompt: at 50,000 skills of three files each the manifests were 9 MB.
	// A skill scanned so must not be served. Diagnostics are the same
	// either way.
	NoFiles bool
	// Bodies, with KeepBodies, holds the bodies outside the heap (see
	// skill.BodyFile); a body it refuses (full, or a write failed) is
	// held in memory instead.
	Bodies *skill.BodyFile
}

func (o *Options) defaults() {
	if o.SharedMeta {
		o.TypedMeta = true
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxDirs <= 0 {
		o.MaxDirs = DefaultMaxDirs
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Workers <= 0 {
		o.Workers = 2 * runtime.GOMAXPROCS(0)
	}
}

// Result is what a scan found.
type Result struct {
	// Skills are in walk order: a depth-first walk of the root with each
	// folder's entries sorted bytewise. Collisions and duplicates are
	// already resolved (the first in walk order wins).
	Skills      []*skill.Skill
	Diagnostics []skill.Diagnostic
	// Dirs are the skills' folders as reached from the root (through any
	// symlinks), parallel to Skills; live reload matches changed paths
	// against them.
	Dirs []string
}

// Errors reports whether any diagnostic is an error.
func (r *Result) Errors() bool {
	for _, d := range r.Diagnostics {
		if d.Severity == skill.Error {
			return true
		}
	}
	return false
}

// ignoreFiles are read in every folder searched, like Pi does.
var ignoreFiles = []string{".gitignore", ".ignore", ".fdignore"}

// task is one folder to search for skills.
type task struct {
	path  string // as reached: root-joined, may run through symlinks
	real  string // symlink-free absolute path
	rel   string // slash path relative to the root ("" for the root)
	depth int
	rules *ignore.Rules
	up    *chain // real paths of the folders above, for loop detection
}

type chain struct {
	real string
	up   *chain
}

func (c *chain) has(real string) bool {
	for ; c != nil; c = c.up {
		if c.real == real {
			return true
		}
	}
	return false
}

// found is a candidate skill or a diagnostic, keyed by walk position.
type found struct {
	rel   string
	skill *skill.Skill
	diags []skill.Diagnostic
}

// ScanFolder finds every skill under root. It never fails: problems are
// diagnostics in the result. The result is the same for the same tree,
// whatever the number of workers.
func ScanFolder(ctx context.Context, root string, opt Options) *Result {
	opt.defaults()
	res := &Result{}
	abs, err := filepath.Abs(expandHome(root))
	if err != nil {
		res.Diagnostics = append(res.Diagnostics, diag(skill.Error, skill.CodeRootUnreadable, root, "cannot resolve the folder: %v", err))
		return res
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		code, sev, msg := skill.CodeRootUnreadable, skill.Error, "cannot read the folder: "+errText(err)
		if errors.Is(err, fs.ErrNotExist) {
			code, sev, msg = skill.CodeRootMissing, skill.Warning, "skills folder does not exist; no skills loaded from it"
		}
		res.Diagnostics = append(res.Diagnostics, diag(sev, code, abs, "%s", msg))
		return res
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		res.Diagnostics = append(res.Diagnostics, diag(skill.Error, skill.CodeRootUnreadable, abs, "not a folder: give the folder that holds the skills"))
		return res
	}
	origin := opt.Origin
	if origin.Kind == "" {
		origin.Kind = "folder"
	}
	if origin.Root == "" {
		origin.Root = abs
	}
	s := &scan{opt: opt, origin: &origin, settled: time.Now().Add(-skill.StampSettle).UnixNano()}
	if opt.TypedMeta && opt.Cache == nil {
		s.batches = make([]*skill.Batch, max(opt.Workers, 1))
		s.readers = make([][]folderReader, len(s.batches))
		for w := range s.batches {
			s.batches[w] = skill.NewBatch()
			s.batches[w].SharedMeta = opt.SharedMeta
		}
	}

	stamp := opt.Cache.begin()
	var out []found
	level := []task{{path: abs, real: real, depth: 0, up: &chain{real: real}}}
	dirs := 0
	limitHit := false
	for len(level) > 0 && ctx.Err() == nil {
		if dirs+len(level) > opt.MaxDirs {
			keep := opt.MaxDirs - dirs
			if keep < 0 {
				keep = 0
			}
			if !limitHit {
				out = append(out, found{rel: "\xff", diags: []skill.Diagnostic{diag(skill.Warning, skill.CodeLimitDirs, abs,
					"searched %d folders, the limit (max_dirs); %d folders at depth %d and below were not searched: raise limits.maxDirs or point the root at a smaller folder",
					opt.MaxDirs, len(level)-keep, level[0].depth)}})
				limitHit = true
			}
			level = level[:keep]
		}
		dirs += len(level)
		results := make([]levelResult, len(level))
		var next atomic.Int64
		var wg sync.WaitGroup
		workers := min(opt.Workers, len(level))
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(level) || ctx.Err() != nil {
						return
					}
					results[i] = s.visit(level[i], w)
				}
			}()
		}
		wg.Wait()
		// Sized before they are filled: grown by doubling, the list of
		// what was found and the next level were a tenth of all a
		// 50,000-skill scan allocated.
		nFound, nNext := len(out), 0
		for _, r := range results {
			nFound += len(r.found)
			nNext += len(r.children)
		}
		out = slices.Grow(out, nFound-len(out))
		level = make([]task, 0, nNext)
		for _, r := range results {
			out = append(out, r.found...)
			level = append(level, r.children...)
		}
	}
	if err := ctx.Err(); err != nil {
		res.Diagnostics = append(res.Diagnostics, diag(skill.Error, skill.CodeReadError, abs, "scan stopped: %v", err))
	} else if !limitHit {
		// Complete: what it did not reach is gone from the root.
		opt.Cache.prune(abs, stamp)
	}

	sort.SliceStable(out, func(i, j int) bool { return walkLess(out[i].rel, out[j].rel) })
	// byReal maps a real skill folder to the folder as first reached
	// (relative to the root, through the links the walk followed), so a
	// duplicate names both ways in, not the real path twice.
	n, nd := 0, len(res.Diagnostics)
	for _, f := range out {
		if f.skill != nil {
			n++
		}
		nd += len(f.diags)
	}
	// Sized once (a name or folder found twice adds one more): grown by
	// appends, 25,000 diagnostics were up to a quarter more, and copies.
	res.Diagnostics = slices.Grow(res.Diagnostics, nd-len(res.Diagnostics))
	byReal := make(map[string]string, n)
	byName := make(map[string]*skill.Skill, n)
	if n > 0 {
		res.Skills = make([]*skill.Skill, 0, n)
		res.Dirs = make([]string, 0, n)
	}
	for _, f := range out {
		res.Diagnostics = append(res.Diagnostics, f.diags...)
		sk := f.skill
		if sk == nil {
			continue
		}
		if firstRel, dup := byReal[sk.Dir]; dup {
			first := filepath.Join(abs, filepath.FromSlash(firstRel), sk.Entry)
			reached := filepath.Join(abs, filepath.FromSlash(f.rel), sk.Entry)
			res.Diagnostics = append(res.Diagnostics, skill.Diagnostic{Severity: skill.Info, Code: skill.CodeDuplicateSkill,
				Path: filepath.Join(abs, filepath.FromSlash(f.rel)), Skill: sk.Name,
				Message: fmt.Sprintf("the skill folder %s is reached twice, as %s (kept) and as %s, at least one through a symlink; it counts once", sk.Dir, filepath.Dir(first), filepath.Dir(reached)),
				Winner:  first, Loser: reached})
			continue
		}
		byReal[sk.Dir] = f.rel
		if first, dup := byName[sk.Name]; dup {
			res.Diagnostics = append(res.Diagnostics, skill.Diagnostic{Severity: skill.Warning, Code: skill.CodeNameCollision,
				Path: sk.Location, Skill: sk.Name,
				Message: fmt.Sprintf("name %q collision: the first skill found keeps the name; rename one of them", sk.Name),
				Winner:  first.Location, Loser: sk.Location})
			continue
		}
		byName[sk.Name] = sk
		res.Skills = append(res.Skills, sk)
		res.Dirs = append(res.Dirs, reachedDir(abs, f.rel, sk.Dir))
	}
	return res
}

// reachedDir is filepath.Join(abs, rel): the skill folder as reached. It
// is the skill's own Dir string when that is the same path (no link was
// followed), so the result does not hold a second copy of every path.
func reachedDir(abs, rel, dir string) string {
	if len(dir) == len(abs)+1+len(rel) && strings.HasPrefix(dir, abs) && dir[len(abs)] == filepath.Separator &&
		dir[len(abs)+1:] == filepath.FromSlash(rel) && filepath.Clean(dir) == dir {
		return dir
	}
	return filepath.Join(abs, filepath.FromSlash(rel))
}

// walkLess orders slash paths as a depth-first walk with sorted entries
// visits them: segment by segment, bytewise.
func walkLess(a, b string) bool {
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		as, bs := a, b
		if ai >= 0 {
			as = a[:ai]
		}
		if bi >= 0 {
			bs = b[:bi]
		}
		if as != bs {
			if a == "" || b == "" {
				return a == ""
			}
			return as < bs
		}
		if ai < 0 || bi < 0 {
			return ai < 0 && bi >= 0
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

type scan struct {
	opt    Options
	origin *skill.Origin // shared by the skills found
	// batches are the workers' skill.Batch, by worker, when the skills
	// are held in batches (see batch), and readers the free part of each
	// worker's chunk of folder readers (see reader).
	batches []*skill.Batch
	readers [][]folderReader
	// settled is skill.StampSettle before the scan began (Unix ns): a
	// file changed since has no stamp (see manifest.note).
	settled int64
}

// batch is worker w's skill.Batch, or nil when skills are allocated one
// by one. Skills go in batches when a scan keeps only their typed fields
// (TypedMeta, which only check and list ask for) and no cache: its skills
// are then kept until the command ends and dropped together, which is
// what a Batch is for. A cached scan's skills outlive it one by one.
func (s *scan) batch(w int) *skill.Batch {
	if w >= len(s.batches) {
		return nil
	}
	return s.batches[w]
}

// reader is a folder reader for a skill of worker w: from the worker's
// chunk when its skills are held in batches, for the same reason (made
// one by one among the garbage of parsing, the readers of 50,000 skills
// kept spans in use for a few live bytes each).
func (s *scan) reader(w int) *folderReader {
	if w >= len(s.readers) {
		return &folderReader{}
	}
	if len(s.readers[w]) == 0 {
		s.readers[w] = make([]folderReader, 256)
	}
	r := &s.readers[w][0]
	s.readers[w] = s.readers[w][1:]
	return r
}

type levelResult struct {
	found    []found
	children []task
}

func diag(sev skill.Severity, code, path, format string, args ...any) skill.Diagnostic {
	return skill.Diagnostic{Severity: sev, Code: code, Path: path, Message: fmt.Sprintf(format, args...)}
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// visit reads one folder: a skill if it holds SKILL.md, else a folder to
// search further.
func (s *scan) visit(t task, w int) levelResult {
	var r levelResult
	d, err := openDir(t.path)
	if err != nil {
		code := skill.CodeReadError
		if t.rel == "" {
			code = skill.CodeRootUnreadable
		}
		r.found = append(r.found, found{rel: t.rel, diags: []skill.Diagnostic{diag(skill.Error, code, t.path, "cannot list the folder: %s; its skills were not loaded", errText(err))}})
		return r
	}
	defer d.close()
	if entry := entryFile(d); entry != "" {
		r.found = append(r.found, s.loadSkill(t, d, entry, w))
		return r
	}
	rules, diags := readIgnoreFiles(d, t.rel, t.rules)
	for _, e := range d.entries {
		name := e.name
		if skipName(name) {
			continue
		}
		childPath := t.path + string(filepath.Separator) + name
		childRel := joinRel(t.rel, name)
		childReal := t.real + string(filepath.Separator) + name
		typ := e.typ
		if typ == typUnknown {
			typ = typeOf(d, name)
		}
		switch typ {
		case typDir:
		case typLink:
			st, err := d.statFollow(name)
			if err != nil {
				diags = append(diags, diag(skill.Warning, skill.CodeSymlinkBroken, childPath, "broken symlink: %s; skipped", linkTarget(childPath, err)))
				continue
			}
			if !st.isDir() {
				continue
			}
			childReal, err = filepath.EvalSymlinks(childPath)
			if err != nil {
				diags = append(diags, diag(skill.Warning, skill.CodeSymlinkBroken, childPath, "cannot resolve symlink: %s; skipped", errText(err)))
				continue
			}
			if t.up.has(childReal) {
				diags = append(diags, diag(skill.Warning, skill.CodeSymlinkLoop, childPath, "symlink loop: it leads back to %s, a folder above it; not followed", childReal))
				continue
			}
		default:
			continue
		}
		if rules.IgnoredEntry(childRel, true) {
			continue
		}
		if t.depth+1 > s.opt.MaxDepth {
			diags = append(diags, diag(skill.Warning, skill.CodeLimitDepth, childPath, "folder is %d levels below the root, deeper than the limit (max_depth %d); not searched", t.depth+1, s.opt.MaxDepth))
			continue
		}
		r.children = append(r.children, task{path: childPath, real: childReal, rel: childRel, depth: t.depth + 1, rules: rules, up: &chain{real: childReal, up: t.up}})
	}
	if len(diags) > 0 {
		r.found = append(r.found, found{rel: t.rel, diags: diags})
	}
	return r
}

// readIgnoreFiles adds the patterns of the folder's ignore files to rules.
func readIgnoreFiles(d *dirHandle, rel string, rules *ignore.Rules) (*ignore.Rules, []skill.Diagnostic) {
	var diags []skill.Diagnostic
	for _, name := range ignoreFiles {
		if find(d.entries, name) < 0 {
			continue
		}
		data, _, err := d.readFile(name, maxIgnoreFile)
		if err != nil {
			diags = append(diags, diag(skill.Warning, skill.CodeReadError, filepath.Join(d.path, name), "cannot read ignore file: %s; its patterns were not applied", errText(err)))
			continue
		}
		rules = rules.Add(rel, data)
	}
	return rules, diags
}

// typeOf stats an entry whose type the listing did not give.
func typeOf(d *dirHandle, name string) entType {
	st, err := d.lstat(name)
	switch {
	case err != nil:
		return typOther
	case st.mode&fs.ModeSymlink != 0:
		return typLink
	case st.isDir():
		return typDir
	case st.isRegular():
		return typFile
	}
	return typOther
}

func skipName(name string) bool {
	return name == "" || name[0] == '.' || name == "node_modules"
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// entryFile returns "SKILL.md", or "skill.md" when only that exists, if the
// folder is a skill; symlinks to files count.
func entryFile(d *dirHandle) string {
	for _, name := range []string{"SKILL.md", "skill.md"} {
		i := find(d.entries, name)
		if i < 0 {
			continue
		}
		switch d.entries[i].typ {
		case typFile:
			return name
		case typLink, typUnknown:
			if st, err := d.statFollow(name); err == nil && st.isRegular() {
				return name
			}
		}
	}
	return ""
}

func linkTarget(path string, err error) string {
	if target, lerr := os.Readlink(path); lerr == nil {
		return fmt.Sprintf("it points to %s, which %s", target, strings.TrimPrefix(errText(err), "stat "))
	}
	return errText(err)
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// ExpandHome replaces a leading ~ with the user's home folder.
func ExpandHome(p string) string { return expandHome(p) }
