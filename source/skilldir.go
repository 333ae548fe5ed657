package source

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/loadout/loadout/internal/fnv1a"
	"github.com/loadout/loadout/internal/ignore"
	"github.com/loadout/loadout/internal/safefile"
	"github.com/loadout/loadout/skill"
)

// Cache keeps parsed SKILL.md files between scans, keyed by path and
// checked against size, modification and change time, and inode. It also
// keeps the Skill built last from each, with a signature of the folder it
// was built from (see loadSkill), so that a scan of an unchanged folder
// returns the same *skill.Skill and the catalog sees no change: a rescan
// of 50,000 unchanged skills then replaces nothing. Safe for concurrent
// use.
//
// An entry that a complete scan of its root did not reach (its folder
// was removed or renamed) is dropped at the end of that scan, so the
// cache holds what the roots hold, not every path ever seen.
type Cache struct {
	mu sync.Mutex
	m  map[string]cached
	// stamp counts the scans begun; each entry holds the stamp of the
	// last scan that used it.
	stamp uint64
}

type cached struct {
	stamp uint64
	size  int64
	mtime int64
	ctime int64
	ino   uint64
	doc   *skill.Document
	// skill is the Skill built from doc, and sig the signature of the
	// folder it was built from (manifest.signature); nil until built.
	skill *skill.Skill
	sig   uint64
	body  skill.BodyRef // the body, when kept in Options.Bodies
	diags []skill.Diagnostic
	ok    bool
	stale bool // doc is an earlier good version; the file is broken
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]cached{}} }

func (c *Cache) get(path string, st fileStat) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	if !ok || e.size != st.size || e.mtime != st.mtime || e.ctime != st.ctime || e.ino != st.ino {
		return cached{}, false
	}
	if e.stamp != c.stamp {
		e.stamp = c.stamp
		c.m[path] = e
	}
	return e, true
}

// begin starts a scan, and returns its stamp for prune.
func (c *Cache) begin() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stamp++
	return c.stamp
}

// prune drops the entries under the folder dir that no scan used since
// the one with this stamp began: that scan was complete and did not reach
// them.
func (c *Cache) prune(dir string, stamp uint64) {
	if c == nil {
		return
	}
	prefix := dir + string(filepath.Separator)
	c.mu.Lock()
	defer c.mu.Unlock()
	for path, e := range c.m {
		if e.stamp < stamp && strings.HasPrefix(path, prefix) {
			delete(c.m, path)
		}
	}
}

// lastGood returns the last good parse of path, if any.
func (c *Cache) lastGood(path string) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	e, ok := c.m[path]
	c.mu.Unlock()
	return e, ok && e.ok
}

// has reports whether path is in the cache, so a cold scan can skip the
// stat that a cache check needs.
func (c *Cache) has(path string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	_, ok := c.m[path]
	c.mu.Unlock()
	return ok
}

func (c *Cache) put(path string, st fileStat, e cached) {
	if c == nil {
		return
	}
	e.size, e.mtime, e.ctime, e.ino = st.size, st.mtime, st.ctime, st.ino
	c.mu.Lock()
	e.stamp = c.stamp
	c.m[path] = e
	c.mu.Unlock()
}

// folderReader reads a folder skill's files through internal/safefile:
// confined to the folder with os.Root (a link that leaves it is refused,
// even one that appeared after the scan), only while the folder is the one
// the scan read (id), and only regular files (a FIFO swapped in is refused
// without blocking).
type folderReader struct {
	dir string
	id  safefile.ID
}

func (r folderReader) Open(p string) (skill.Content, error) {
	f, fi, err := safefile.Open(r.dir, r.id, p)
	if err != nil {
		return nil, err
	}
	return safefile.Content(f, fi), nil
}

// ReadFile reads a whole file. Skill.ReadFile does not call it (it opens
// the file and checks its size first); it is here for skill.Reader.
func (r folderReader) ReadFile(p string) ([]byte, error) {
	c, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return io.ReadAll(io.NewSectionReader(c, 0, c.Size()))
}

// NewFolderReader returns a skill.Reader over a folder, confined to it and
// to the folder found at dir now: if dir is later replaced (or becomes a
// link elsewhere), reads are refused.
func NewFolderReader(dir string) skill.Reader { return folderReader{dir: dir, id: safefile.Stat(dir)} }

// loadSkill parses the entry file and lists the supporting files of the
// skill in folder d.
func (s *scan) loadSkill(t task, d *dirHandle, entry string, w int) found {
	b := s.batch(w)
	f := found{rel: t.rel}
	entryPath := t.path + string(filepath.Separator) + entry
	report := func(dg skill.Diagnostic) { f.diags = append(f.diags, dg) }
	if entry != "SKILL.md" {
		report(diag(skill.Info, skill.CodeSkillMDLowercase, entryPath, "entry file is named skill.md; SKILL.md is the standard name and some agents only look for it"))
	}
	dirName := filepath.Base(t.path)
	var c cached
	var st fileStat
	hit := false
	if s.opt.Cache.has(entryPath) {
		if fst, err := d.statFollow(entry); err == nil {
			c, hit = s.opt.Cache.get(entryPath, fst)
			st = fst
		}
	}
	if !hit {
		// The file is read into a pooled buffer that parsing keeps nothing
		// of; without bodies, only up to the end of the frontmatter.
		bp := readBufs.Get().(*[]byte)
		var enough func([]byte) bool
		if !s.opt.KeepBodies {
			enough = skill.HeaderComplete
		}
		data, fst, err := d.readInto(entry, s.opt.MaxFileSize, *bp, enough)
		st = fst
		if err != nil {
			readBufs.Put(bp)
			report(diag(skill.Error, skill.CodeReadError, entryPath, "cannot read: %s; skill skipped", errText(err)))
			return f
		}
		spill := s.opt.KeepBodies && s.opt.Bodies != nil
		if s.opt.KeepBodies && !spill {
			c.doc, c.diags, c.ok = skill.Parse(data, entryPath, dirName)
		} else if s.opt.TypedMeta && s.opt.Cache == nil {
			// TypedOnly or b.New below copies what is kept; a cached
			// Document is kept as parsed.
			c.doc, c.diags, c.ok = skill.ParseHeaderTransient(data, entryPath, dirName)
		} else {
			c.doc, c.diags, c.ok = skill.ParseHeader(data, entryPath, dirName)
		}
		if spill && c.ok {
			var err error
			if c.body, err = s.opt.Bodies.KeepEntry(data); err != nil {
				c.doc, c.diags, c.ok = skill.Parse(data, entryPath, dirName) // held in memory instead
			}
		}
		if c.ok && s.opt.TypedMeta && b == nil {
			c.doc.TypedOnly() // b.New does it in its chunks
		}
		if cap(data) <= maxPooledBuf {
			*bp = data[:0]
			readBufs.Put(bp)
		}
		if !c.ok {
			if prev, ok := s.opt.Cache.lastGood(entryPath); ok {
				c = keepLastGood(prev, c, entryPath)
			}
			s.opt.Cache.put(entryPath, st, c)
		}
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
	fp := fileBufs.Get().(*[]skill.File)
	defer func() {
		clear(*fp) // drop the paths it points to
		if *fp = (*fp)[:0]; cap(*fp) <= maxPooledFiles {
			fileBufs.Put(fp)
		}
	}()
	sp := readBufs.Get().(*[]byte) // the stamp's bytes, hashed and dropped
	defer func() {
		if cap(*sp) <= maxPooledBuf {
			readBufs.Put(sp)
		}
	}()
	m := manifest{scan: s, skillReal: t.real, base: t.rel, name: c.doc.Name, files: (*fp)[:0], stamp: (*sp)[:0]}
	m.walk(d, t.real, "", t.depth, t.rules, t.up, entry)
	if m.root != nil {
		m.root.Close()
	}
	sort.Strings(m.dirs)
	f.diags = append(f.diags, m.diags...)
	id := d.id()
	sig := m.signature(id, s.opt.KeepBodies, s.opt.NoFiles)
	if hit && !c.stale && c.skill != nil && c.sig == sig && c.skill.Dir == t.real && c.skill.Entry == entry &&
		c.skill.MaxFileSize == s.opt.MaxFileSize && *c.skill.Origin == *s.origin {
		// Nothing the skill was built from changed: the same Skill.
		*fp = m.files
		f.skill = c.skill
		return f
	}
	r := s.reader(w)
	r.id = id
	files := m.files
	if s.opt.NoFiles {
		files = nil
	}
	switch {
	case b != nil:
		f.skill = b.New(c.doc, t.real, entry, files, s.origin, r)
	case s.opt.NoFiles:
		f.skill = skill.New(c.doc, t.real, entry, nil, s.origin, r)
	default:
		f.skill = skill.New(c.doc, t.real, entry, m.finishFiles(), s.origin, r)
	}
	*fp = m.files
	// The skill's diagnostics point to its own strings, not copies of
	// them: at 50,000 skills with a finding each, the copies of the paths
	// and names were 2.4 MB, and of their messages 2 MB.
	for i := range f.diags {
		if d := &f.diags[i]; d.Path == f.skill.Location {
			d.Path = f.skill.Location
		}
		if d := &f.diags[i]; d.Skill == f.skill.Name {
			d.Skill = f.skill.Name
		}
		if b != nil {
			// Skills repeat messages word for word (a field of the
			// wrong type, on the same line): one copy of each.
			d := &f.diags[i]
			d.Message, d.Field = b.Intern(d.Message), b.Intern(d.Field)
		}
	}
	// The reader and the cache share the skill's Dir and Location strings
	// (the cache key is the path as reached, Location when no link was
	// followed), so a skill keeps one copy of its path.
	r.dir = f.skill.Dir
	if len(m.dirs) > 0 {
		f.skill.Dirs = slices.Clip(m.dirs)
	}
	f.skill.MaxFileSize = s.opt.MaxFileSize
	f.skill.Stamp = m.stampOf(entry, st, id)
	*sp = m.stamp[:0]
	if c.body.Kept() {
		f.skill.KeepBodyRef(c.body)
	} else if s.opt.KeepBodies {
		f.skill.KeepBody(c.doc.Body)
	}
	if s.opt.Cache != nil && !c.stale {
		key := entryPath
		if key == f.skill.Location {
			key = f.skill.Location
		}
		c.skill, c.sig = f.skill, sig
		s.opt.Cache.put(key, st, c)
	}
	return f
}

// keepLastGood serves the previous good parse of a SKILL.md whose new
// content is broken, and says so: one error naming what broke.
func keepLastGood(prev, broken cached, path string) cached {
	var why []string
	for _, d := range broken.diags {
		if d.Severity == skill.Error {
			why = append(why, d.Code+": "+d.Message)
		}
	}
	prev.diags = []skill.Diagnostic{{Severity: skill.Error, Code: skill.CodeKeptLastGood, Path: path, Skill: prev.doc.Name,
		Message: fmt.Sprintf("the edited SKILL.md is broken (%s); the last good version of %q is still served until it is fixed", strings.Join(why, "; "), prev.doc.Name)}}
	prev.stale = true
	return prev
}

// fileBufs hold a manifest while it is walked; finishFiles copies it out
// at its final length.
// One that grew past maxPooledFiles is dropped, not kept.
var fileBufs = sync.Pool{New: func() any { b := make([]skill.File, 0, 16); return &b }}

const maxPooledFiles = 1024

type manifest struct {
	scan      *scan
	skillReal string
	base      string // the skill folder relative to the scanned root
	name      string
	files     []skill.File
	dirs      []string // folders holding no listed file (see skill.Skill.Dirs)
	count     int
	capped    bool
	diags     []skill.Diagnostic
	root      *os.Root // the skill folder, opened for the first link met
	// stamp holds each listed file's path, type and stat (note), which
	// both the signature and the skill's Stamp are made of; fresh is set when
	// a file changed within skill.StampSettle of the scan.
	stamp []byte
	fresh bool
}

// note adds one file's path, type and stat to the stamp.
func (m *manifest) note(rel, ct string, st fileStat, bin bool) {
	if st.mtime >= m.scan.settled || st.ctime >= m.scan.settled {
		m.fresh = true
	}
	b := binary.AppendUvarint(m.stamp, uint64(len(rel)))
	b = append(b, rel...)
	b = binary.AppendUvarint(b, uint64(len(ct)))
	b = append(b, ct...)
	for _, v := range [...]uint64{uint64(st.size), uint64(st.mode), uint64(st.mtime), uint64(st.ctime), st.ino} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	if bin {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	m.stamp = b
}

// stampOf is the skill's Stamp: its entry file's stat, then every listed
// file's (note), the empty folders and the folder's identity; zero when a
// file changed too lately, or change times are not read here.
func (m *manifest) stampOf(entry string, st fileStat, id safefile.ID) (out [16]byte) {
	m.note(entry, "", st, false)
	if m.fresh || !statHasCtime {
		return out
	}
	b := m.stamp
	for _, d := range m.dirs {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
	}
	b = binary.LittleEndian.AppendUint64(b, id.Dev)
	b = binary.LittleEndian.AppendUint64(b, id.Ino)
	m.stamp = b
	sum := sha256.Sum256(b)
	copy(out[:], sum[:])
	return out
}

// signature identifies what a Skill is built from besides its SKILL.md:
// every listed file's path, size, mode, modification and change time,
// inode and type, the empty folders, the folder's identity and whether
// bodies are kept. A file rewritten in place changes its times, so a
// Skill whose signature is unchanged has the same manifest and the same
// bytes behind it (internal/fnv1a; a collision would take two different
// folders hashing alike).
func (m *manifest) signature(id safefile.ID, keepBodies, noFiles bool) uint64 {
	h := fnv1a.String(fnv1a.Offset, m.stamp) // each file's path, type and stat (note)
	for _, d := range m.dirs {
		h = fnv1a.String(h, d)
	}
	h = fnv1a.Uint64(h, id.Dev)
	h = fnv1a.Uint64(h, id.Ino)
	if keepBodies {
		h = fnv1a.Uint64(h, 1)
	}
	if noFiles {
		// A cached skill without its manifest is never one with it.
		h = fnv1a.Uint64(h, 2)
	}
	return h
}

// servable reports whether the link at rel (inside the skill) can be
// followed by os.Root, as every read of the skill will: a link with an
// absolute target, or one whose path climbs out of the skill folder on
// the way, cannot, even when it ends inside the folder.
func (m *manifest) servable(rel string) bool {
	if m.root == nil {
		r, err := os.OpenRoot(m.skillReal)
		if err != nil {
			return false
		}
		m.root = r
	}
	_, err := m.root.Stat(rel)
	return err == nil
}

func (m *manifest) report(sev skill.Severity, code, path, format string, args ...any) {
	d := diag(sev, code, path, format, args...)
	d.Skill = m.name
	m.diags = append(m.diags, d)
}

// walk lists folder d of the skill; rel is its path inside the skill.
// Entries come sorted, so the manifest comes out sorted by path.
func (m *manifest) walk(d *dirHandle, real, rel string, depth int, rules *ignore.Rules, up *chain, entry string) {
	rules, diags := readIgnoreFiles(d, m.rootRel(rel), rules)
	for _, dg := range diags {
		dg.Skill = m.name
		m.diags = append(m.diags, dg)
	}
	for _, e := range d.entries {
		name := e.name
		if skipName(name) || rel == "" && name == entry {
			continue
		}
		if m.count >= m.scan.opt.MaxFiles {
			if !m.capped {
				m.report(skill.Warning, skill.CodeLimitFiles, d.path, "skill %q has more than %d files and folders (max_files); the rest are not listed", m.name, m.scan.opt.MaxFiles)
				m.capped = true
			}
			return
		}
		childRel := joinRel(rel, name)
		// A name CleanPath refuses could never be read through it, and
		// control or invisible characters would reach terminals and
		// envelopes: leave it out, naming it quoted.
		if _, err := skill.CleanPath(childRel); err != nil {
			if pe, ok := err.(*skill.PathError); ok {
				m.report(skill.Warning, pe.Code, d.path, "the name %q in this folder is refused: %s; not listed and never served: rename it", name, pe.Reason)
			}
			continue
		}
		childPath := func() string { return d.path + string(filepath.Separator) + name }
		var childReal string // the folder's real path, made only for a folder or link
		var st fileStat
		var err error
		if e.typ == typLink || e.typ == typUnknown && typeOf(d, name) == typLink {
			st, err = d.statFollow(name)
			if err != nil {
				m.report(skill.Warning, skill.CodeSymlinkBroken, childPath(), "broken symlink: %s; not listed", linkTarget(childPath(), err))
				continue
			}
			childReal, err = filepath.EvalSymlinks(childPath())
			if err != nil {
				m.report(skill.Warning, skill.CodeSymlinkBroken, childPath(), "cannot resolve symlink: %s; not listed", errText(err))
				continue
			}
			if !within(childReal, m.skillReal) {
				m.report(skill.Warning, skill.CodeSymlinkEscapes, childPath(), "symlink points outside the skill folder (to %s); not listed and never served", childReal)
				continue
			}
			if !m.servable(childRel) {
				m.report(skill.Warning, skill.CodeSymlinkEscapes, childPath(), "symlink has an absolute target or leaves the skill folder on its way (to %s), which reads never follow; not listed and never served: make it a relative link that stays inside the folder", childReal)
				continue
			}
			if st.isDir() && up.has(childReal) {
				m.report(skill.Warning, skill.CodeSymlinkLoop, childPath(), "symlink loop: it leads back to %s; not followed", childReal)
				continue
			}
		} else if e.typ == typDir {
			st.mode = fs.ModeDir
		} else {
			st, err = d.lstat(name)
			if err != nil {
				m.report(skill.Warning, skill.CodeReadError, childPath(), "cannot read: %s; not listed", errText(err))
				continue
			}
		}
		if rules != nil && rules.IgnoredEntry(m.rootRel(childRel), st.isDir()) {
			continue
		}
		m.count++
		if st.isDir() {
			if depth+1 > m.scan.opt.MaxDepth {
				m.report(skill.Warning, skill.CodeLimitDepth, childPath(), "folder is deeper than the limit (max_depth %d); its files are not listed", m.scan.opt.MaxDepth)
				continue
			}
			if childReal == "" {
				childReal = real + string(filepath.Separator) + name
			}
			sub, err := d.openSub(name)
			if err != nil {
				m.report(skill.Warning, skill.CodeReadError, childPath(), "cannot list the folder: %s; its files are not listed", errText(err))
				continue
			}
			if find(sub.entries, "SKILL.md") >= 0 || find(sub.entries, "skill.md") >= 0 {
				m.report(skill.Warning, skill.CodeNestedSkill, childPath(), "a SKILL.md inside skill %q is not a separate skill; it is listed as one of %q's files. Move the folder out to make it a skill", m.name, m.name)
			}
			nf, nd := len(m.files), len(m.dirs)
			m.walk(sub, childReal, childRel, depth+1, rules, &chain{real: childReal, up: up}, "")
			sub.close()
			if len(m.files) == nf && len(m.dirs) == nd && !m.capped {
				// Nothing listed below it: an empty folder, served as an
				// empty directory listing. It counted against max_files.
				m.dirs = append(m.dirs, childRel)
			}
			continue
		}
		if !st.isRegular() {
			continue
		}
		exec := st.mode.Perm()&0o111 != 0
		ct, bin, known := skill.TypeByName(name)
		if !known {
			ct, bin = sniffFile(childPath())
		}
		m.files = append(m.files, skill.File{Path: childRel, Size: st.size, ContentType: ct, Binary: bin, Executable: exec, Script: skill.IsScript(childRel, exec)})
		m.note(childRel, ct, st, bin)
	}
}

// finishFiles returns the manifest in a slice of its own length, its
// paths in one string: a skill keeps its file list for as long as it is
// loaded, so it holds no spare capacity and one allocation for the paths.
func (m *manifest) finishFiles() []skill.File {
	if len(m.files) == 0 {
		return nil
	}
	n := 0
	for _, f := range m.files {
		n += len(f.Path)
	}
	var b strings.Builder
	b.Grow(n)
	for _, f := range m.files {
		b.WriteString(f.Path)
	}
	paths := b.String()
	files := make([]skill.File, len(m.files))
	for i, f := range m.files {
		f.Path, paths = paths[:len(f.Path)], paths[len(f.Path):]
		files[i] = f
	}
	return files
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

// sniffFile reads the first bytes of a file to guess its type. The open
// does not block (a FIFO swapped in after the listing is not read).
func sniffFile(path string) (string, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "application/octet-stream", true
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "application/octet-stream", true
	}
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	return skill.Sniff(buf[:n])
}
