package source

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadout/loadout/internal/ignore"
	"github.com/loadout/loadout/skill"
)

// Cache keeps parsed SKILL.md files between scans, keyed by path and
// checked against size, modification time and inode. Safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	size  int64
	mtime time.Time
	ino   uint64
	doc   *skill.Document
	diags []skill.Diagnostic
	ok    bool
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]cached{}} }

func (c *Cache) get(path string, st fs.FileInfo) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	e, ok := c.m[path]
	c.mu.Unlock()
	if !ok || e.size != st.Size() || !e.mtime.Equal(st.ModTime()) || e.ino != inode(st) {
		return cached{}, false
	}
	return e, true
}

func (c *Cache) put(path string, st fs.FileInfo, e cached) {
	if c == nil {
		return
	}
	e.size, e.mtime, e.ino = st.Size(), st.ModTime(), inode(st)
	c.mu.Lock()
	c.m[path] = e
	c.mu.Unlock()
}

func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}

// folderReader reads a folder skill's files through os.Root, so a symlink
// that leaves the skill folder is refused even if it appeared after the scan.
type folderReader struct{ dir string }

func (r folderReader) ReadFile(p string) ([]byte, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(p)
}

// NewFolderReader returns a skill.Reader over a folder, confined to it.
func NewFolderReader(dir string) skill.Reader { return folderReader{dir: dir} }

// loadSkill parses the entry file and lists the supporting files of the
// skill in folder t.
func (s *scan) loadSkill(t task, entry string, entries []fs.DirEntry) found {
	f := found{rel: t.rel}
	entryPath := filepath.Join(t.path, entry)
	report := func(d skill.Diagnostic) { f.diags = append(f.diags, d) }
	if entry != "SKILL.md" {
		report(diag(skill.Info, skill.CodeSkillMDLowercase, entryPath, "entry file is named skill.md; SKILL.md is the standard name and some agents only look for it"))
	}
	st, err := os.Stat(entryPath)
	if err != nil {
		report(diag(skill.Error, skill.CodeReadError, entryPath, "cannot read: %s; skill skipped", errText(err)))
		return f
	}
	dirName := filepath.Base(t.path)
	c, hit := s.opt.Cache.get(entryPath, st)
	if !hit {
		data, err := os.ReadFile(entryPath)
		if err != nil {
			report(diag(skill.Error, skill.CodeReadError, entryPath, "cannot read: %s; skill skipped", errText(err)))
			return f
		}
		c.doc, c.diags, c.ok = skill.Parse(data, entryPath, dirName)
		if c.ok {
			c.doc.Body = "" // bodies are read on demand; do not hold them
		}
		s.opt.Cache.put(entryPath, st, c)
	}
	f.diags = append(f.diags, c.diags...)
	if !c.ok {
		return f
	}
	for i := range f.diags {
		if f.diags[i].Skill == "" {
			f.diags[i].Skill = c.doc.Name
		}
	}
	m := manifest{scan: s, skillReal: t.real, base: t.rel, name: c.doc.Name}
	m.walk(t.path, t.real, "", t.depth, t.rules, t.up, entries, entry)
	f.diags = append(f.diags, m.diags...)
	origin := s.origin
	f.skill = skill.New(c.doc, t.real, entry, m.files, origin, folderReader{dir: t.real})
	return f
}

type manifest struct {
	scan      *scan
	skillReal string
	base      string // the skill folder relative to the scanned root
	name      string
	files     []skill.File
	count     int
	capped    bool
	diags     []skill.Diagnostic
}

func (m *manifest) report(sev skill.Severity, code, path, format string, args ...any) {
	d := diag(sev, code, path, format, args...)
	d.Skill = m.name
	m.diags = append(m.diags, d)
}

// walk lists a folder of the skill; rel is its path inside the skill.
// Entries come sorted, so the manifest comes out sorted by path.
func (m *manifest) walk(path, real, rel string, depth int, rules *ignore.Rules, up *chain, entries []fs.DirEntry, entry string) {
	for _, name := range ignoreFiles {
		if hasEntry(entries, name) {
			if data, err := os.ReadFile(filepath.Join(path, name)); err == nil {
				rules = rules.Add(m.rootRel(rel), data)
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		if skipName(name) || rel == "" && name == entry {
			continue
		}
		if m.count >= m.scan.opt.MaxFiles {
			if !m.capped {
				m.report(skill.Warning, skill.CodeLimitFiles, path, "skill %q has more than %d files and folders (max_files); the rest are not listed", m.name, m.scan.opt.MaxFiles)
				m.capped = true
			}
			return
		}
		childPath := path + string(filepath.Separator) + name
		childRel := joinRel(rel, name)
		typ := e.Type()
		var info fs.FileInfo
		var err error
		childReal := real + string(filepath.Separator) + name
		if typ&fs.ModeSymlink != 0 {
			info, err = os.Stat(childPath)
			if err != nil {
				m.report(skill.Warning, skill.CodeSymlinkBroken, childPath, "broken symlink: %s; not listed", linkTarget(childPath, err))
				continue
			}
			childReal, err = filepath.EvalSymlinks(childPath)
			if err != nil {
				m.report(skill.Warning, skill.CodeSymlinkBroken, childPath, "cannot resolve symlink: %s; not listed", errText(err))
				continue
			}
			if !within(childReal, m.skillReal) {
				m.report(skill.Warning, skill.CodeSymlinkEscapes, childPath, "symlink points outside the skill folder (to %s); not listed and never served", childReal)
				continue
			}
			if info.IsDir() && up.has(childReal) {
				m.report(skill.Warning, skill.CodeSymlinkLoop, childPath, "symlink loop: it leads back to %s; not followed", childReal)
				continue
			}
		} else {
			info, err = e.Info()
			if err != nil {
				m.report(skill.Warning, skill.CodeReadError, childPath, "cannot read: %s; not listed", errText(err))
				continue
			}
		}
		ignoreRel := m.rootRel(childRel)
		if rules.IgnoredEntry(ignoreRel, info.IsDir()) {
			continue
		}
		m.count++
		if info.IsDir() {
			if depth+1 > m.scan.opt.MaxDepth {
				m.report(skill.Warning, skill.CodeLimitDepth, childPath, "folder is deeper than the limit (max_depth %d); its files are not listed", m.scan.opt.MaxDepth)
				continue
			}
			sub, err := readDir(childPath)
			if err != nil {
				m.report(skill.Warning, skill.CodeReadError, childPath, "cannot list the folder: %s; its files are not listed", errText(err))
				continue
			}
			if hasEntry(sub, "SKILL.md") || hasEntry(sub, "skill.md") {
				m.report(skill.Warning, skill.CodeNestedSkill, childPath, "a SKILL.md inside skill %q is not a separate skill; it is listed as one of %q's files. Move the folder out to make it a skill", m.name, m.name)
			}
			m.walk(childPath, childReal, childRel, depth+1, rules, &chain{real: childReal, up: up}, sub, "")
			continue
		}
		if !info.Mode().IsRegular() {
			continue
		}
		exec := info.Mode().Perm()&0o111 != 0
		ct, bin, known := skill.TypeByName(name)
		if !known {
			ct, bin = sniffFile(childPath)
		}
		m.files = append(m.files, skill.File{Path: childRel, Size: info.Size(), ContentType: ct, Binary: bin, Executable: exec, Script: skill.IsScript(childRel, exec)})
	}
}

// rootRel is the path of a file inside the skill relative to the scanned
// root, which is what ignore rules are keyed by.
func (m *manifest) rootRel(rel string) string {
	if rel == "" {
		return m.base
	}
	return joinRel(m.base, rel)
}

func within(real, dir string) bool {
	return real == dir || strings.HasPrefix(real, dir+string(filepath.Separator))
}

func sniffFile(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "application/octet-stream", true
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	return skill.Sniff(buf[:n])
}
